"""Tier 2 without an LLM: quote the sentences of the retrieved chunks that best fit the question.

Nothing is generated: every quoted sentence is a verbatim piece of a chunk, tagged with the
number of its source. Sentences are scored by the question's keyword terms they contain,
weighted by how rare each term is among the candidate sentences, plus a small prior for the
rank of their chunk; table rows and list items count as sentences.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.search import Hit
from retrieval.text import TextProcessor

# A sentence ends at . ! ? … followed by a space and a capital/digit, but not inside numbers
# such as 28.5, 40.000.000 or dates; lines (table rows, list items) are units of their own.
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[\"“(\[]?[A-ZÀ-Ỹ0-9Đ])")
_MAX_SENTENCE_CHARS = 600
_LIST_MARKER = re.compile(r"^(?:[-*+•]|\d{1,2}[.)])\s+")
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")


@dataclass(frozen=True)
class Quote:
    source_n: int  # the citation number of the hit it comes from
    hit_index: int
    position: int
    text: str
    score: float


def sentences(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        # Quoted as a bullet of our own: drop the source's list marker and emphasis marks.
        line = _EMPHASIS.sub("", _LIST_MARKER.sub("", line.strip())).strip()
        if not line or set(line) <= set("|-: "):
            continue
        for part in _SENTENCE_END.split(line):
            part = part.strip()
            if len(part) > _MAX_SENTENCE_CHARS:
                part = part[:_MAX_SENTENCE_CHARS].rsplit(" ", 1)[0] + " …"
            if part:
                out.append(part)
    return out


def select_quotes(
    question_terms: Sequence[str],
    hits: Sequence[Hit],
    processor: TextProcessor,
    *,
    limit: int,
) -> list[Quote]:
    """The ``limit`` best sentences of ``hits`` for the question, in reading order."""
    terms = set(question_terms)
    units: list[tuple[int, int, str, set[str]]] = []
    for hi, hit in enumerate(hits):
        for pos, sent in enumerate(sentences(hit.text)):
            units.append((hi, pos, sent, set(processor.query_terms(sent)) & terms))
    if not units:
        return []
    df: dict[str, int] = {}
    for *_, found in units:
        for t in found:
            df[t] = df.get(t, 0) + 1
    n = len(units)
    scored = []
    for hi, pos, sent, found in units:
        overlap = sum(math.log(1 + n / df[t]) for t in found)
        prior = 1.0 / (1 + hi)  # the fused rank of the chunk it sits in
        scored.append(Quote(hi + 1, hi, pos, sent, overlap + 0.5 * prior))
    best = sorted(scored, key=lambda q: (-q.score, q.hit_index, q.position))[:limit]
    if best and best[0].score <= 0.5:  # no term in common anywhere: lead with the top chunk
        best = [q for q in scored if q.hit_index == 0][:limit]
    return sorted(best, key=lambda q: (q.hit_index, q.position))


def render_quotes(quotes: Sequence[Quote]) -> str:
    return "\n".join(f"- {q.text} [{q.source_n}]" for q in quotes)
