"""What the guard says of a question and an FAQ entry: the conflicts and the missing values."""

from __future__ import annotations

from dataclasses import dataclass

Facets = dict[str, frozenset[str]]


@dataclass(frozen=True)
class Span:
    """Where a text says a value of a category: ``text[start:end]`` are the words that said it."""

    category: str
    value: str
    start: int
    end: int


@dataclass(frozen=True)
class Conflict:
    """One category in which the question and the FAQ question disagree."""

    category: str
    query_values: frozenset[str]
    faq_values: frozenset[str]
    label: str = ""  # the category in staff's words ("ngành", "năm"), for the admin

    @property
    def reason(self) -> str:
        def names(values: frozenset[str]) -> str:
            return ", ".join(sorted(values)) if values else "none"

        return (
            f"{self.category}: question names {names(self.query_values)}, "
            f"FAQ names {names(self.faq_values)}"
        )


@dataclass(frozen=True)
class Missing:
    """A value the question asks that the entry (its question, its answer) never says."""

    category: str
    label: str  # the category in staff's words ("chủ đề hỏi", "ngành")
    values: frozenset[str]

    @property
    def reason(self) -> str:
        return (
            f"{self.category}: question asks {', '.join(sorted(self.values))}, entry never says it"
        )

    @property
    def staff_reason(self) -> str:
        asked = ", ".join(sorted(self.values))
        return f"Câu hỏi hỏi về {asked} ({self.label}) nhưng mục này không nói về {asked}"


@dataclass(frozen=True)
class GuardVerdict:
    ok: bool
    conflicts: tuple[Conflict, ...] = ()
    missing: tuple[Missing, ...] = ()

    @property
    def reason(self) -> str:
        """What the trace and `tuvan ask --json` show next to a refused match."""
        if not self.conflicts and not self.missing:
            return "no conflict"
        return "; ".join([c.reason for c in self.conflicts] + [m.reason for m in self.missing])

    @property
    def staff_reason(self) -> str:
        """The same in Vietnamese, for the admin (Try it, the FAQ self-check)."""
        if not self.conflicts and not self.missing:
            return "Không có mâu thuẫn"
        said = [
            f"Câu hỏi nói {', '.join(sorted(c.query_values)) or 'không nêu'}, "
            f"mục này nói {', '.join(sorted(c.faq_values)) or 'không nêu'} "
            f"({c.label or c.category})"
            for c in self.conflicts
        ]
        return "; ".join(said + [m.staff_reason for m in self.missing])
