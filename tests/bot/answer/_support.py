"""What the answerer tests share."""

from __future__ import annotations

from dataclasses import replace

from bot.answer.parts import AnswererParts


def with_answer_settings(parts: AnswererParts, **changes: object) -> AnswererParts:
    answer = parts.settings.answer.model_copy(update=changes)
    return replace(parts, settings=parts.settings.model_copy(update={"answer": answer}))


def verbatim_only(parts: AnswererParts, **changes: object) -> AnswererParts:
    """``parts`` with no fitted tier-1 scorer: only a stored phrasing typed word for word gets
    its entry; every other question goes on to the documents."""
    parts = with_answer_settings(parts, **changes) if changes else parts
    return replace(parts, decisions=replace(parts.decisions, faq=None))
