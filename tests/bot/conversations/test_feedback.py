"""Votes on answers (bot.conversations.feedback) on a real PostgreSQL, inside the test's
rolled-back transaction: taken only on the bot's answer in the voter's own conversation, the
latest vote wins, a 👎 flags the conversation and a 👍 on the same answer lifts the flag unless
another 👎 since the flag stands; where asked (no toast of the platform's), a first vote queues
one thank-you in its language."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.conversations.feedback import record_vote, votes_on
from bot.conversations.store import queue_staff_reply, upsert_conversation
from bot.core.clock import utcnow
from bot.core.metrics import METRICS
from bot.core.types import Language
from bot.core.votes import DOWN, UP
from bot.db.models import (
    AnswerFeedback,
    Author,
    Conversation,
    ConversationMode,
    Direction,
    Message,
    MessageStatus,
)


@dataclass(frozen=True)
class Thread:
    channel: str
    user: str
    conversation_id: int


async def thread(session: AsyncSession, channel: str = "telegram") -> Thread:
    user = f"9{uuid.uuid4().int % 10**12}"
    return Thread(channel, user, await upsert_conversation(session, channel, user))


async def answer(session: AsyncSession, where: Thread, *, tier: str | None = "faq") -> int:
    """A question of ``where`` and the bot's reply to it (a tier: an answer; None: a greeting)."""
    question = Message(
        conversation_id=where.conversation_id,
        channel=where.channel,
        direction=Direction.inbound,
        author=Author.user,
        event_id=uuid.uuid4().hex,
        text="Học phí ngành CNTT bao nhiêu?",
        status=MessageStatus.answered,
    )
    session.add(question)
    await session.flush()
    reply = Message(
        conversation_id=where.conversation_id,
        channel=where.channel,
        direction=Direction.outbound,
        author=Author.bot,
        text="Học phí là 30 triệu đồng một năm.",
        tier=tier,
        status=MessageStatus.sent,
        reply_to_id=question.id,
    )
    session.add(reply)
    await session.flush()
    return reply.id


async def vote(
    session: AsyncSession, where: Thread, answer_id: int, value: int, at: datetime | None = None
) -> bool:
    outcome = await record_vote(
        session,
        channel=where.channel,
        voter=where.user,
        answer_id=answer_id,
        value=value,
        now=at,
    )
    return outcome.recorded


def counted(channel: str, value: str) -> float:
    """``tuvan_feedback_total{channel, value}`` as /metrics shows it (0 before the first)."""
    series = f'tuvan_feedback_total{{channel="{channel}",value="{value}"}} '
    lines = [line for line in METRICS.render().splitlines() if line.startswith(series)]
    return float(lines[0].removeprefix(series)) if lines else 0.0


async def flagged_since(session: AsyncSession, where: Thread) -> datetime | None:
    return await session.scalar(
        select(Conversation.flagged_since).where(Conversation.id == where.conversation_id)
    )


async def feedback_rows(session: AsyncSession, answer_id: int) -> list[tuple[int, str, int]]:
    rows = await session.execute(
        select(AnswerFeedback.conversation_id, AnswerFeedback.channel, AnswerFeedback.value).where(
            AnswerFeedback.message_id == answer_id
        )
    )
    return [(c, ch, v) for c, ch, v in rows]


async def test_a_vote_on_an_answer_is_stored_once_and_the_latest_wins(
    session: AsyncSession,
) -> None:
    lan = await thread(session)
    answer_id = await answer(session, lan)
    up = counted("telegram", "up")
    assert await vote(session, lan, answer_id, UP)
    assert counted("telegram", "up") == up + 1
    assert await feedback_rows(session, answer_id) == [(lan.conversation_id, "telegram", 1)]
    assert await vote(session, lan, answer_id, DOWN)
    assert await feedback_rows(session, answer_id) == [(lan.conversation_id, "telegram", -1)]
    assert await votes_on(session, [answer_id]) == {answer_id: -1}


async def test_a_thumbs_down_flags_the_conversation_and_a_later_thumbs_up_lifts_it(
    session: AsyncSession,
) -> None:
    lan = await thread(session)
    answer_id = await answer(session, lan)
    at = utcnow()
    assert await flagged_since(session, lan) is None
    assert await vote(session, lan, answer_id, DOWN, at)
    assert await flagged_since(session, lan) == at
    assert await vote(session, lan, answer_id, DOWN, at + timedelta(seconds=5))
    assert await flagged_since(session, lan) == at  # kept from the first 👎
    assert await vote(session, lan, answer_id, UP, at + timedelta(seconds=10))
    assert await flagged_since(session, lan) is None


async def test_a_thumbs_up_keeps_the_flag_while_another_newer_thumbs_down_stands(
    session: AsyncSession,
) -> None:
    lan = await thread(session)
    first, second = await answer(session, lan), await answer(session, lan)
    at = utcnow()
    assert await vote(session, lan, first, DOWN, at)
    assert await vote(session, lan, second, DOWN, at + timedelta(seconds=5))
    assert await vote(session, lan, first, UP, at + timedelta(seconds=10))
    assert await flagged_since(session, lan) == at  # the second 👎 still stands
    assert await vote(session, lan, second, UP, at + timedelta(seconds=15))
    assert await flagged_since(session, lan) is None


async def test_a_thumbs_up_on_another_answer_does_not_lift_the_flag(
    session: AsyncSession,
) -> None:
    lan = await thread(session)
    first, second = await answer(session, lan), await answer(session, lan)
    at = utcnow()
    assert await vote(session, lan, first, DOWN, at)
    assert await vote(session, lan, second, UP, at + timedelta(seconds=5))
    assert await flagged_since(session, lan) == at


async def test_a_thumbs_down_handled_by_staff_before_the_flag_does_not_hold_it(
    session: AsyncSession,
) -> None:
    lan = await thread(session)
    first, second = await answer(session, lan), await answer(session, lan)
    at = utcnow()
    assert await vote(session, lan, first, DOWN, at)
    conversation = await session.get(Conversation, lan.conversation_id)
    assert conversation is not None
    conversation.flagged_since = None  # staff marked it handled
    await session.flush()
    assert await vote(session, lan, second, DOWN, at + timedelta(seconds=5))
    assert await vote(session, lan, second, UP, at + timedelta(seconds=10))
    assert await flagged_since(session, lan) is None  # the first 👎 was handled already


async def test_a_vote_on_someone_elses_answer_is_refused_and_changes_nothing(
    session: AsyncSession,
) -> None:
    lan, minh = await thread(session), await thread(session)
    answer_id = await answer(session, lan)
    refused, down = counted("telegram", "refused"), counted("telegram", "down")
    assert not await vote(session, minh, answer_id, DOWN)
    assert await feedback_rows(session, answer_id) == []
    assert await flagged_since(session, lan) is None
    assert await flagged_since(session, minh) is None
    assert counted("telegram", "refused") == refused + 1
    assert counted("telegram", "down") == down


async def test_a_vote_from_the_same_user_id_on_another_channel_is_refused(
    session: AsyncSession,
) -> None:
    lan = await thread(session, "telegram")
    answer_id = await answer(session, lan)
    same_id_elsewhere = Thread(
        "zalo", lan.user, await upsert_conversation(session, "zalo", lan.user)
    )
    assert not await vote(session, same_id_elsewhere, answer_id, UP)
    assert await feedback_rows(session, answer_id) == []


async def test_votes_on_staff_replies_greetings_and_questions_are_refused(
    session: AsyncSession,
) -> None:
    lan = await thread(session)
    staff_reply = await queue_staff_reply(session, lan.conversation_id, "Chị gọi lại em nhé", "an")
    greeting = await answer(session, lan, tier=None)
    answer_id = await answer(session, lan)
    question = await session.scalar(select(Message.reply_to_id).where(Message.id == answer_id))
    assert question is not None
    for not_an_answer in (staff_reply, greeting, question, answer_id + 10**9):
        assert not await vote(session, lan, not_an_answer, DOWN)
    assert (
        await session.scalar(
            select(func.count())
            .select_from(AnswerFeedback)
            .where(AnswerFeedback.conversation_id == lan.conversation_id)
        )
        == 0
    )
    assert await flagged_since(session, lan) is None


# -- thanks where the platform shows none ---------------------------------------------------------


async def thanks_queued(
    session: AsyncSession, where: Thread
) -> list[tuple[str, str, dict[str, str]]]:
    """(text, status, details) of the bot's messages without a tier in ``where``: notices."""
    rows = await session.execute(
        select(Message.text, Message.status, Message.details).where(
            Message.conversation_id == where.conversation_id,
            Message.author == Author.bot,
            Message.tier.is_(None),
        )
    )
    return [(t, s.value, d) for t, s, d in rows]


async def thanked_vote(
    session: AsyncSession, where: Thread, answer_id: int, value: int, language: Language = "vi"
) -> bool:
    outcome = await record_vote(
        session,
        channel=where.channel,
        voter=where.user,
        answer_id=answer_id,
        value=value,
        thank=True,
        language=language,
    )
    return outcome.thanked


async def test_a_first_vote_queues_one_thank_you_in_its_language_and_no_more(
    session: AsyncSession,
) -> None:
    where = await thread(session, "messenger")
    first, second = await answer(session, where), await answer(session, where)
    assert await thanked_vote(session, where, first, UP, "en")
    assert not await thanked_vote(session, where, first, DOWN, "en")  # a change of mind
    assert not await thanked_vote(session, where, first, DOWN, "en")  # the same, again
    assert await thanks_queued(session, where) == [
        ("Thanks for your feedback!", "queued", {"notice": "vote_thanks", "language": "en"})
    ]
    assert await thanked_vote(session, where, second, UP)  # another answer: its own first vote
    assert [t for t, _, _ in await thanks_queued(session, where)] == [
        "Thanks for your feedback!",
        "Cảm ơn bạn đã góp ý!",
    ]


async def test_no_thank_you_is_queued_unasked_refused_or_where_staff_answer(
    session: AsyncSession,
) -> None:
    where = await thread(session, "zalo")
    plain = await answer(session, where)
    assert not (
        await record_vote(session, channel="zalo", voter=where.user, answer_id=plain, value=UP)
    ).thanked
    stranger = await thread(session, "zalo")
    assert not await thanked_vote(session, stranger, await answer(session, where), UP)
    taken = await answer(session, where)
    await session.execute(
        update(Conversation)
        .where(Conversation.id == where.conversation_id)
        .values(mode=ConversationMode.human)
    )
    assert not await thanked_vote(session, where, taken, DOWN)
    paused = await thread(session, "messenger")
    quiet = await answer(session, paused)
    await session.execute(
        update(Conversation)
        .where(Conversation.id == paused.conversation_id)
        .values(paused_until=utcnow() + timedelta(minutes=30))
    )
    assert not await thanked_vote(session, paused, quiet, UP)
    assert await thanks_queued(session, where) == []
    assert await thanks_queued(session, paused) == []
