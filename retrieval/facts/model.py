"""What the facts tables hold: a `Fact` per table cell read cleanly, a `Rejected` cell for staff
per cell that was not, and the `CatalogueItem`s the tables name."""

from __future__ import annotations

from dataclasses import dataclass, field

# The attributes a fact can hold: the guard's `attribute` values (retrieval/data/language.yaml).
CUTOFF = "điểm chuẩn"
QUOTA = "chỉ tiêu"
FEE = "học phí"
COMBINATIONS = "tổ hợp"

# Kinds of catalogue item.
MAJOR = "major"
PROGRAMME = "programme"
METHOD = "method"
COMBINATION = "combination"
CAMPUS = "campus"
CATALOGUE_KINDS = (MAJOR, PROGRAMME, METHOD, COMBINATION, CAMPUS)


@dataclass(frozen=True)
class Place:
    """Where a value was found: the document, the page, the table's headings, row and column."""

    document: str  # the document's source (its identity in the store)
    title: str
    url: str | None = None
    page: int | None = None
    headings: tuple[str, ...] = ()
    row: int | None = None  # 1 = the table's first row under its header
    column: str = ""

    def describe(self) -> str:
        """ "Điểm chuẩn 2025 › chương trình chuẩn, hàng 3, cột THPT" (staff's words)."""
        parts = [" › ".join((self.title, *self.headings))]
        if self.page is not None:
            parts.append(f"trang {self.page}")
        if self.row is not None:
            parts.append(f"hàng {self.row}")
        if self.column:
            parts.append(f"cột {self.column}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Fact:
    """One value of a facts table, read cleanly.

    ``programme`` None is the standard programme; ``method`` None is a column that names no
    admission method ("Điểm chuẩn" beside "Điểm ĐGNL"); ``campus`` None is a column that names
    no campus (the school's one, or all of them). ``value`` is None for a text attribute
    (the combinations) and for a cell saying the major is not admitted that way
    (``offered`` False).
    """

    attribute: str
    major: str
    code: str | None
    programme: str | None
    method: str | None
    year: int
    text: str  # the cell as written
    value: float | None = None
    offered: bool = True
    scale: float | None = None  # the score's scale (30, 40, 1200), when the document says it
    unit: str | None = None  # an amount's unit as written ("triệu đồng/năm")
    combinations: tuple[str, ...] = ()
    place: Place = field(default_factory=lambda: Place("", ""))
    campus: str | None = None


@dataclass(frozen=True)
class Rejected:
    """A cell left out of the facts, and why (listed for staff)."""

    text: str
    reason: str
    place: Place


@dataclass(frozen=True)
class CatalogueItem:
    """A major, programme, admission method, subject combination or campus the school's tables
    name."""

    kind: str
    name: str
    code: str | None = None
    aliases: tuple[str, ...] = ()
    place: Place | None = None


@dataclass
class Extraction:
    """What one document's tables give."""

    facts: list[Fact] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    items: list[CatalogueItem] = field(default_factory=list)
    # Sentences on when a year's cut-offs are published ("Điểm chuẩn năm 2026 sẽ được công bố
    # trước 17h00 ngày 13/8/2026 …"), by that year.
    publications: dict[int, str] = field(default_factory=dict)
