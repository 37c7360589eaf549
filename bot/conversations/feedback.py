"""Students' 👍/👎 on the bot's answers, the same for every channel: one vote per answer (the
latest wins), taken only on an answer of the bot in the voter's own conversation, and a 👎 flags
the conversation for staff.

A vote names the answer by its row id (``bot.core.votes``), which anyone can type or forge: so
the answer must be an outbound bot answer (it has a tier: not a greeting, never a staff reply)
of the conversation of this very sender on this channel, else the vote is refused and nothing
changes. The flag (``conversations.flagged_since``) is set by a 👎 if not set already; a later 👍
on the same answer clears it, unless another 👎 of the conversation, cast since the flag was
set, still stands. Staff clear it too (their reply, or "handled"), elsewhere.

A vote is thanked in the student's language. Where the platform shows a passing note of its own
(Telegram's callback answer) or the client does (the web chat), the caller does it; elsewhere
(Messenger, Zalo) ``record_vote`` queues a short bot message with ``thank``, for the first vote
on an answer only: a vote changed or cast again is stored without another message in the chat.
The bot stays quiet where staff have the conversation or paused it.

Functions take the session first and never commit: the caller owns the transaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from bot.conversations.queue import OUTBOX_CHANNEL
from bot.core.clock import utcnow
from bot.core.metrics import METRICS
from bot.core.types import Language
from bot.core.votes import DOWN, THANKS, UP
from bot.db.models import AnswerFeedback


@dataclass(frozen=True)
class VoteOutcome:
    """What became of a vote: ``recorded`` False when it was refused (not the sender's answer,
    or not an answer). ``flagged``: the conversation is flagged after it."""

    recorded: bool
    conversation_id: int | None = None
    flagged: bool = False
    first: bool = False  # no vote on this answer before: a vote, not a change of mind
    thanked: bool = False  # a thank-you message was queued for the student


# The answer, only if it is the bot's answer in this sender's conversation on this channel;
# then the vote, upserted (the latest wins), with the value it replaced.
_UPSERT_VOTE = text(
    """
    WITH answer AS (
        SELECT m.id, m.conversation_id
        FROM messages m
        JOIN conversations c ON c.id = m.conversation_id
        JOIN contacts k ON k.id = c.contact_id
        WHERE m.id = :answer_id AND m.direction = 'out' AND m.author = 'bot'
          AND m.tier IS NOT NULL AND k.channel = :channel AND k.external_id = :voter
    ), previous AS (
        SELECT f.value FROM answer_feedback f, answer WHERE f.message_id = answer.id
    )
    INSERT INTO answer_feedback (message_id, conversation_id, channel, value, created_at,
                                 updated_at)
    SELECT id, conversation_id, :channel, :value, :now, :now FROM answer
    ON CONFLICT ON CONSTRAINT uq_answer_feedback_message_id DO UPDATE
    SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
    RETURNING conversation_id, (SELECT value FROM previous) AS previous
    """
)

_FLAG = text(
    """
    UPDATE conversations SET flagged_since = coalesce(flagged_since, :now), updated_at = now()
    WHERE id = :conversation_id
    """
)

# The thanks for a first vote, queued as the bot's message (no tier: no vote buttons on it),
# unless staff have the conversation or paused the bot there.
_THANK = text(
    """
    INSERT INTO messages (conversation_id, channel, direction, author, kind, text, details,
                          status, created_at)
    SELECT c.id, c.channel, 'out', 'bot', 'text', :text, CAST(:details AS jsonb), 'queued', :now
    FROM conversations c
    WHERE c.id = :conversation_id AND c.mode <> 'human'
      AND (c.paused_until IS NULL OR c.paused_until <= :now)
    RETURNING id
    """
)

# A 👍 replacing a 👎 lifts the flag, unless another 👎 cast since the flag was set stands.
_UNFLAG = text(
    """
    UPDATE conversations c SET flagged_since = NULL, updated_at = now()
    WHERE c.id = :conversation_id AND c.flagged_since IS NOT NULL
      AND NOT EXISTS (
          SELECT 1 FROM answer_feedback f
          WHERE f.conversation_id = c.id AND f.value = -1 AND f.message_id <> :answer_id
            AND f.updated_at >= c.flagged_since)
    """
)


async def record_vote(
    session: AsyncSession | AsyncConnection,
    *,
    channel: str,
    voter: str,
    answer_id: int,
    value: int,
    now: datetime | None = None,
    thank: bool = False,
    language: Language = "vi",
) -> VoteOutcome:
    """Record ``voter``'s ``value`` (``UP`` 1 or ``DOWN`` -1) on the answer ``answer_id``, if
    it is the bot's answer in ``voter``'s conversation on ``channel``; counted in
    ``tuvan_feedback_total``. ``voter`` is the platform's user id (the web visitor's id). With
    ``thank``, the first vote on the answer queues a thank-you in ``language``."""
    if value not in (UP, DOWN):
        raise ValueError("a vote is 1 (👍) or -1 (👎)")
    now = now or utcnow()
    params = {
        "answer_id": answer_id,
        "channel": channel,
        "voter": voter,
        "value": value,
        "now": now,
    }
    row = (await session.execute(_UPSERT_VOTE, params)).first()
    if row is None:
        METRICS.inc("tuvan_feedback_total", channel=channel, value="refused")
        return VoteOutcome(recorded=False)
    conversation_id = int(row.conversation_id)
    METRICS.inc("tuvan_feedback_total", channel=channel, value="up" if value == UP else "down")
    where = {"conversation_id": conversation_id, "answer_id": answer_id, "now": now}
    if value == DOWN:
        await session.execute(_FLAG, where)
    elif row.previous == DOWN:
        await session.execute(_UNFLAG, where)
    flagged = await session.scalar(
        text("SELECT flagged_since IS NOT NULL FROM conversations WHERE id = :id"),
        {"id": conversation_id},
    )
    first = row.previous is None
    thanked = False
    if thank and first:
        thanks = {"conversation_id": conversation_id, "now": now, "text": THANKS[language]}
        details = json.dumps({"notice": "vote_thanks", "language": language})
        thanked = await session.scalar(_THANK, {**thanks, "details": details}) is not None
        if thanked:
            await session.execute(text(f"NOTIFY {OUTBOX_CHANNEL}"))
    return VoteOutcome(
        recorded=True,
        conversation_id=conversation_id,
        flagged=bool(flagged),
        first=first,
        thanked=thanked,
    )


async def votes_on(session: AsyncSession, answer_ids: Sequence[int]) -> dict[int, int]:
    """The standing vote on each of ``answer_ids`` that has one: answer id → 1 or -1."""
    if not answer_ids:
        return {}
    rows = await session.execute(
        select(AnswerFeedback.message_id, AnswerFeedback.value).where(
            AnswerFeedback.message_id.in_(list(answer_ids))
        )
    )
    return {int(message_id): int(value) for message_id, value in rows}
