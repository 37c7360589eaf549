"""Numbers in generated text: the one check every offline LLM job makes before it keeps a result.

Fees, dates, codes and scores are the facts a model must never change. A rewrite (``tuvan
augment``) must keep every number of its chunk and add none; a generated FAQ answer (``tuvan
faq generate``) may only carry numbers of its chunk. Numbers are compared whole ("25" is not in
"2025" nor in "28.55") and by value as Vietnamese writes them: "3.000" and "3000", "30/08" and
"30/8" are the same number; "28,5" (a decimal) and "28.500.000" are not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_NUMBER = re.compile(r"\d+(?:[.,:/]\d+)*")


def canonical_number(number: str) -> str:
    """Thousands separators and leading zeros dropped: 3.000 → 3000, 30/08/2024 → 30/8/2024."""
    grouped = re.sub(r"[.,](?=\d{3}(?!\d))", "", number)
    return re.sub(r"(?<!\d)0+(?=\d)", "", grouped)


def numbers_in(text: str) -> list[str]:
    """The numbers of ``text`` as written, in order, each once."""
    return list(dict.fromkeys(_NUMBER.findall(text)))


def _values(texts: Sequence[str]) -> set[str]:
    return {canonical_number(n) for t in texts for n in _NUMBER.findall(t)}


def has_number(text: str, number: str) -> bool:
    """Whether ``number`` stands in ``text`` as a whole number, however it is grouped."""
    return canonical_number(number) in _values([text])


def invented_numbers(text: str, sources: Sequence[str]) -> list[str]:
    """The numbers of ``text`` that none of ``sources`` writes."""
    known = _values(sources)
    return [n for n in numbers_in(text) if canonical_number(n) not in known]


def missing_numbers(original: str, rewrite: str) -> list[str]:
    """The numbers of ``original`` that ``rewrite`` lost."""
    return invented_numbers(original, [rewrite])
