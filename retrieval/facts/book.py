"""The facts book: the published facts and the catalogue's majors, as every process reads them
to answer, rebuilt only when the tables change (retrieval.changes)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import CatalogueRow, Document, FactRow
from retrieval.changes import tables_signature
from retrieval.facts.model import CAMPUS, MAJOR, PROGRAMME, Fact, Place
from retrieval.facts.names import initials
from retrieval.facts.years import admission_year
from retrieval.index.facts import fact_of
from retrieval.text.folding import fold

# What the book is made from: it is current while these tables are unchanged.
BOOK_TABLES = ("facts", "catalogue_items", "documents")
# A major's name right after these is a school's ("Trường Đại học Công nghệ Thông tin").
_SCHOOL_BEFORE = re.compile(r"(?:\bdai hoc|\bdh|\btruong|\bhoc vien|\bcao dang|\bvien) $")


@dataclass(frozen=True)
class Major:
    """A major of the catalogue and the folded words a student may name it by."""

    name: str
    code: str | None
    keys: tuple[str, ...]  # folded names, aliases, codes, initials ("khmt")
    aliases: tuple[str, ...] = ()  # as staff or another table wrote them (no initials)


@dataclass
class FactsBook:
    """The published facts and the majors and programmes of the catalogue."""

    facts: list[Fact] = field(default_factory=list)
    majors: list[Major] = field(default_factory=list)
    programmes: list[str] = field(default_factory=list)
    signature: str = ""
    titles: list[str] = field(default_factory=list)  # the documents', for the admission year
    # When a year's cut-offs are published, as a document says it, and where.
    publications: dict[int, tuple[str, Place]] = field(default_factory=dict)
    # The campuses of the catalogue and the names staff gave them ("BVH" for "Hà Nội").
    campuses: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_key = sorted(
            ((key, m) for m in self.majors for key in m.keys), key=lambda km: -len(km[0])
        )

    def admission_year(self, setting: int, today: date) -> int:
        """The year "năm nay" means (retrieval.facts.years)."""
        return admission_year(setting, self.titles, today)

    @property
    def newest_year(self) -> int:
        """The latest year any table speaks of (0 without facts)."""
        return max((f.year for f in self.facts), default=0)

    def major_named(self, name: str) -> Major | None:
        """The major ``name`` names; the guard reads a short name only after "ngành" and calls
        it so (retrieval.guard.catalogue)."""
        folded = fold(name).removeprefix("nganh ")
        return next((m for m in self.majors if folded in m.keys), None)

    def majors_in(self, question: str, named: Iterable[str] = ()) -> list[Major]:
        """The majors ``question`` names, in the order it names them: by a name, an alias, a
        code or initials of the catalogue, or a name the guard's vocabulary reads in it
        (``named``, its ``major`` values: "ktpm")."""
        text = f" {fold(question)} "
        found: list[tuple[int, Major]] = []
        for key, major in self._by_key:
            for match in re.finditer(rf"(?<=[\s(]){re.escape(key)}(?=[\s?.,!)])", text):
                if _SCHOOL_BEFORE.search(text[: match.start()]):
                    continue
                if any(m is major for _, m in found):
                    break
                found.append((match.start(), major))
                # hide it from shorter keys ("cong nghe thong tin" inside a longer name)
                text = text[: match.start()] + "#" * len(key) + text[match.end() :]
                break
        for value in named:
            by_name = self.major_named(value)
            if by_name is not None and not any(m is by_name for _, m in found):
                found.append((len(text), by_name))
        return [m for _, m in sorted(found, key=lambda pm: pm[0])]


def build_book(
    facts: list[Fact],
    items: list[tuple[str, str, str | None, list[str]]],
    signature: str = "",
    titles: list[str] | None = None,
) -> FactsBook:
    """The book of ``facts`` and catalogue ``items`` (kind, name, code, aliases)."""
    majors: dict[str, tuple[str, set[str], set[str]]] = {}  # folded name -> name, codes, aliases

    def add(name: str, code: str | None, aliases: list[str]) -> None:
        entry = majors.setdefault(fold(name), (name, set(), set()))
        if entry[0].isupper() and not name.isupper():
            majors[fold(name)] = entry = (name, entry[1], entry[2])
        if code:
            entry[1].add(code)
        entry[2].update(aliases)

    for kind, name, code, aliases in items:
        if kind == MAJOR:
            add(name, code, aliases)
    for f in facts:
        add(f.major, f.code, [])
    renamed = _join_by_code(majors)
    out = []
    for folded, (name, codes, other_names) in majors.items():
        keys: set[str] = {folded, *(fold(a) for a in other_names), *(fold(c) for c in codes)}
        abbreviation = initials(name)
        if len(abbreviation) >= 3:
            keys.add(abbreviation)
        plain = sorted(c for c in codes if c.isalnum())
        keyed = tuple(sorted(k for k in keys if k))
        out.append(Major(name, plain[0] if plain else None, keyed, tuple(sorted(other_names))))
    programmes = sorted({name for kind, name, _, _ in items if kind == PROGRAMME})
    # Each fact names its major as the catalogue does ("Trí tuệ Nhân tạo", not a fee table's
    # "Trí tuệ nhân tạo" read through the vocabulary; "Công nghệ thông tin", not another
    # table's "Công nghệ thông Tin học" under the same code), before values are compared.
    named = {fold(m.name): m.name for m in out}
    named.update(renamed)
    facts = [replace(f, major=named.get(fold(f.major), f.major)) for f in facts]
    clashing = conflicts(facts)
    agreed = [f for f in facts if _slot(f) not in clashing]
    campuses: dict[str, tuple[str, ...]] = {}
    for kind, name, _, aliases in items:
        if kind == CAMPUS:
            campuses[name] = tuple(dict.fromkeys((*campuses.get(name, ()), *aliases)))
    return FactsBook(agreed, out, programmes, signature, titles or [], campuses=campuses)


def _join_by_code(majors: dict[str, tuple[str, set[str], set[str]]]) -> dict[str, str]:
    """One major per code: a name met later under a code already named (another table's
    spelling) becomes an alias of the first. Returns the folded later names -> the first's."""
    first_of: dict[str, str] = {}
    renamed: dict[str, str] = {}
    for folded in list(majors):
        name, codes, _ = majors[folded]
        owner = next((first_of[c] for c in sorted(codes) if c in first_of), None)
        if owner is None:
            first_of.update((c, folded) for c in codes)
            continue
        kept = majors[owner]
        kept[1].update(codes)
        kept[2].update({name, *majors[folded][2]})
        renamed[folded] = kept[0]
        del majors[folded]
    return renamed


def _slot(fact: Fact) -> tuple[Any, ...]:
    return (
        fact.attribute,
        fold(fact.major),
        fact.programme,
        fact.method,
        fact.year,
        fact.unit,
        fact.campus,
    )


def conflicts(facts: Iterable[Fact]) -> dict[tuple[Any, ...], list[Fact]]:
    """The facts that say different things of one major, programme, method and year (two
    tables, or two rounds in one): none of them is used to answer; staff see them."""
    by_slot: dict[tuple[Any, ...], list[Fact]] = {}
    for fact in facts:
        by_slot.setdefault(_slot(fact), []).append(fact)
    return {
        slot: found
        for slot, found in by_slot.items()
        if len({(f.value, f.offered, f.combinations) for f in found}) > 1
    }


_books: dict[str, FactsBook] = {}
_lock = asyncio.Lock()


async def current_book(session: AsyncSession, *, signature: str | None = None) -> FactsBook:
    """The book of what this session sees, rebuilt only when the tables changed.
    ``signature``: ``BOOK_TABLES``' signature, when the caller read it in this session."""
    if signature is None:
        signature = await tables_signature(session, BOOK_TABLES)
    key = str(session.bind.engine.url) if session.bind is not None else ""
    async with _lock:
        cached = _books.get(key)
        if cached is not None and cached.signature == signature:
            return cached
        rows = (await session.scalars(select(FactRow).where(FactRow.published))).all()
        facts = [fact_of(r) for r in rows]
        items = [
            (r.kind, r.name, r.code, list(r.aliases or ()))
            for r in (
                await session.scalars(select(CatalogueRow).where(CatalogueRow.hidden.is_(False)))
            ).all()
        ]
        documents = (
            await session.execute(
                select(
                    Document.source,
                    Document.title,
                    Document.url,
                    # only what is read here, not the cells listed for staff
                    Document.meta["facts"]["publications"].label("said"),
                ).order_by(Document.id)
            )
        ).all()
        book = build_book(facts, items, signature, [d.title for d in documents])
        for d in documents:
            for year, sentence in (d.said or {}).items():
                # the first document that says it (its prose before a schedule's row)
                book.publications.setdefault(int(year), (sentence, Place(d.source, d.title, d.url)))
        _books[key] = book
        return book
