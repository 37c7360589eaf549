"""Near misses made from the school's own knowledge (1/4): an FAQ question with one value
changed for another value of the same kind that the knowledge base knows.

"Điểm chuẩn cơ sở phía Bắc" becomes "… phía Nam" (a learned contrast), "Học phí ngành Khoa học
Máy tính" becomes "… ngành Kỹ thuật Phần mềm" when the FAQ names that major too (a guard category
whose values this FAQ uses). The entry must not answer any of them verbatim: the FAQ self-check
asks them (`tuvan faq check`), and the fit counts the entry's candidacy for them as wrong.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from retrieval.faq.contrasts import Contrasts, contrast_words
from retrieval.guard.checks import NearMissGuard

# The guard's categories whose values tell entries apart and that a question names in words.
SWAPPED = ("major", "programme", "campus", "method", "year", "round", "achievement")
PER_ENTRY = 4  # near misses made from one question, at most


@dataclass(frozen=True)
class NearMiss:
    text: str
    changed: str  # what was changed, "cơ sở phía bac → nam"


def known_values(guard: NearMissGuard, texts: Iterable[str]) -> dict[str, set[str]]:
    """The values of ``SWAPPED`` categories that ``texts`` (the FAQ, document titles) name."""
    out: dict[str, set[str]] = {}
    for text in texts:
        for category, values in guard.facets(text).items():
            if category in SWAPPED:
                out.setdefault(category, set()).update(values)
    return out


def near_misses(
    question: str,
    contrasts: Contrasts,
    guard: NearMissGuard | None,
    known: dict[str, set[str]],
    limit: int = PER_ENTRY,
) -> list[NearMiss]:
    """Up to ``limit`` questions one value away from ``question`` (see the module docstring)."""
    out: list[NearMiss] = []
    words = contrast_words(question)
    for head, value, other, swapped in contrasts.swaps(words):
        out.append(NearMiss(" ".join(swapped), f"{head} {' '.join(value)} → {' '.join(other)}"))
    if guard is not None:
        out.extend(_guard_swaps(question, guard, known))
    seen: set[str] = set()
    kept = []
    for miss in out:
        if miss.text not in seen:
            seen.add(miss.text)
            kept.append(miss)
    return kept[:limit]


def _guard_swaps(question: str, guard: NearMissGuard, known: dict[str, set[str]]) -> list[NearMiss]:
    words = question.split()
    named = guard.facets(question)
    out = []
    for start, end, category in guard.entity_spans(question):
        if category not in SWAPPED:
            continue
        mine = named.get(category, frozenset())
        for other in sorted(known.get(category, set()) - set(mine)):
            text = " ".join([*words[:start], other, *words[end:]])
            if guard.facets(text).get(category) == frozenset({other}):
                out.append(NearMiss(text, f"{' '.join(words[start:end])} → {other}"))
                break  # one swap per value named: the first other value the FAQ knows
    return out
