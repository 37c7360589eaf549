"""A cached ``Found`` (answer_shape.py's retrieve step) read again by the code as it is now.

The cache keeps what the search made of each question (restored, written out, its parts); the
reading every tier takes (bot.answer.read) is made from that again, as ``Lookup.find`` makes
it, so that a change to how a question is read is measured by a replay without a new search.
"""

from __future__ import annotations

from dataclasses import replace

from bot.answer.found import Found
from bot.answer.parts import AnswererParts
from bot.answer.read import Read
from retrieval.query import PreparedQuery, QueryPart


def read_again(found: Found, parts: AnswererParts) -> Found:
    """A copy of ``found`` with its question read again (``Found.read``)."""
    restored = found.trace.get("restored")
    prepared = PreparedQuery(
        question=found.question,
        restored=restored,
        dense=found.expanded,
        terms=tuple(found.terms),
        parts=tuple(QueryPart(text, dense, ()) for text, dense in found.parts),
        written=parts.processor.written_out(restored or found.question),
    )
    read = Read(found.question, found.question, found.language).with_restored(
        prepared, parts.guard, parts.processor, guarded=parts.settings.answer.near_miss_guard
    )
    return replace(found, read=read)
