"""What the answerer tests share."""

from __future__ import annotations

from dataclasses import replace

from bot.answer.parts import AnswererParts


def with_answer_settings(parts: AnswererParts, **changes: object) -> AnswererParts:
    answer = parts.settings.answer.model_copy(update=changes)
    return replace(parts, settings=parts.settings.model_copy(update={"answer": answer}))
