"""Answering a conversation's message (bot.answer.conversation) over the demo knowledge base:
what a reading with context keeps, and when the message is answered alone after all."""

from __future__ import annotations

import pytest

from bot.answer.answerer import Answerer
from bot.answer.conversation import ConversationAnswerer
from bot.answer.followup import Turn
from bot.answer.replies import answer_body


@pytest.mark.parametrize(
    ("before", "message", "fact"),
    [
        # It names nothing the vocabulary reads: the library's topic was put in front, but
        # alone it is answered, and that answer is given.
        ("thu vien mo cua may gio", "trường có hồ bơi không ạ", "25 m"),
        ("ielts 6.0 thi duoc quy doi bao nhieu diem", "con diem toan hoc ba can bao nhieu", None),
        # It took only a major (the school has none such): the fallback stays, since alone
        # such messages were answered wrongly as often as rightly.
        (
            "truong co tuyen sinh nganh marketing khong a",
            "ielts 6.0 thi diem toan hoc ba can bao nhieu",
            None,
        ),
    ],
)
async def test_a_message_naming_nothing_the_vocabulary_reads_is_answered_alone_first(
    answerer: Answerer, before: str, message: str, fact: str | None
) -> None:
    conversation = ConversationAnswerer(answerer, answerer.sessionmaker)
    reading = await conversation.read_turns(message, [Turn(before)], None)
    answer = await conversation.answer_reading(message, reading)
    assert answer.reading is not None
    if fact is None:
        # marked as a follow-up, or only a subject taken: never answered alone
        assert answer.reading["mode"] == "context"
        return
    assert reading.mode == "context"  # it lacked a subject
    assert (answer.reading["mode"], answer.reading["stopped"]) == ("alone", "answered_alone")
    assert answer.tier == "documents"
    assert fact in answer_body(answer)
