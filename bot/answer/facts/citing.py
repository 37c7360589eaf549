"""A facts answer's citations: one per document page its values come from, and the markers
[k] of its text (the k-th place in order) renumbered to them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.answer import replies
from bot.answer.replies import Answer
from bot.core.citations import MARKER, Citation
from bot.core.settings import AnswerSettings
from bot.core.types import Language
from retrieval.facts.model import Place


@dataclass(frozen=True)
class FactsReply:
    """A facts answer before it is cited: its text, whose markers [k] stand for the k-th of
    ``places``, and how it was answered (for the reason and the details staff see)."""

    body: str
    places: list[Place]
    how: str


def cited(reply: FactsReply, language: Language, settings: AnswerSettings) -> Answer:
    body, places, how = reply.body, reply.places, reply.how
    citations = _citations(places)
    numbers = {k: n for n, k in enumerate(dict.fromkeys(map(_source, places)), start=1)}
    renumbered = _renumber(body, places, numbers)
    return Answer(
        tier="documents",
        answer=replies.documents_reply(renumbered, citations, language, settings),
        language=language,
        citations=citations,
        reason=f"facts table: {how}",
        why={
            "documents": {"result": "answered", "how": "facts", "passages": len(citations)},
            "facts": how,
        },
        confidence=1.0,
    )


def cited_after(reply: FactsReply, citations: list[Citation]) -> tuple[str, list[Citation]]:
    """``reply``'s text cited after ``citations`` (a documents answer's sources): a page they
    already cite keeps its number, another is added after them. Gives the text and every
    citation."""
    every = list(citations)
    numbers = {(c.source, c.page): c.n for c in every}
    for place in reply.places:
        key = _source(place)
        if key not in numbers:
            numbers[key] = len(every) + 1
            every.append(
                Citation(
                    n=numbers[key],
                    title=place.title,
                    source=place.document,
                    url=place.url,
                    page=place.page,
                )
            )
    return _renumber(reply.body, reply.places, numbers), every


def joined(replies: list[FactsReply]) -> FactsReply:
    """Several replies as one, in order: each one's markers moved past the places before it."""
    body: list[str] = []
    places: list[Place] = []
    for reply in replies:
        body.append(_shifted(reply.body, len(places)))
        places.extend(reply.places)
    return FactsReply("\n".join(body), places, "; ".join(r.how for r in replies))


def _shifted(body: str, by: int) -> str:
    return MARKER.sub(lambda m: f"[{int(m.group(1)) + by}]", body)


def _citations(places: list[Place]) -> list[Citation]:
    """One citation per document page the values come from."""
    first = {_source(p): p for p in reversed(places)}
    return [
        Citation(n=n, title=p.title, source=p.document, url=p.url, page=p.page)
        for n, p in enumerate((first[k] for k in dict.fromkeys(map(_source, places))), start=1)
    ]


def _source(place: Place) -> tuple[str, int | None]:
    return place.document, place.page


def _renumber(body: str, places: list[Place], numbers: dict[tuple[str, int | None], int]) -> str:
    """Markers [k] (the k-th place in order) as the number of that place's citation."""

    def swap(match: re.Match[str]) -> str:
        k = int(match.group(1))
        return f"[{numbers[_source(places[k - 1])]}]" if 0 < k <= len(places) else match.group(0)

    return MARKER.sub(swap, body)
