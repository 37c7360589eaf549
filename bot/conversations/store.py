"""The conversation store: contacts, their thread, every message in and out.

Functions take the session first and never commit: the caller owns the transaction. Inbound
events are stored idempotently — the platform's event id is unique per channel, and a second
delivery of the same event changes nothing — and a NOTIFY wakes the workers. Recording an
inbound event is ``bot.conversations.inbound``'s, re-exported here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from bot.conversations.inbound import (
    HELD_ERROR,
    Recorded,
    record_inbound,
)
from bot.conversations.queue import CONVERSATION_CHANNEL, OUTBOX_CHANNEL
from bot.core.clock import utcnow
from bot.db.models import Author, Contact, Conversation, ConversationMode, Message

# Re-exported: callers record inbound events through the store, as before the split.
__all__ = ["HELD_ERROR", "Recorded", "record_inbound"]


async def upsert_conversation(
    session: AsyncSession,
    channel: str,
    external_user_id: str,
    *,
    name: str | None = None,
    locale: str | None = None,
) -> int:
    """The conversation id of this user on this channel, creating contact and thread."""
    contact_id = await session.scalar(
        insert(Contact)
        .values(channel=channel, external_id=external_user_id, name=name, locale=locale)
        .on_conflict_do_update(
            constraint="uq_contacts_channel_external_id",
            # A no-op update keeps RETURNING working for an existing row; names fill in once known.
            set_={
                "name": text("coalesce(EXCLUDED.name, contacts.name)"),
                "locale": text("coalesce(EXCLUDED.locale, contacts.locale)"),
            },
        )
        .returning(Contact.id)
    )
    conversation_id = await session.scalar(
        insert(Conversation)
        .values(contact_id=contact_id, channel=channel)
        .on_conflict_do_update(constraint="uq_conversations_contact_id", set_={"channel": channel})
        .returning(Conversation.id)
    )
    assert conversation_id is not None  # RETURNING of an upsert always yields the row
    return int(conversation_id)


async def pause_conversation(
    session: AsyncSession, conversation_id: int, minutes: float, *, now: datetime | None = None
) -> None:
    """Keep the bot quiet in this thread for ``minutes`` (a person is answering there)."""
    until = (now or utcnow()) + timedelta(minutes=minutes)
    await session.execute(
        text(
            "UPDATE conversations SET paused_until = greatest(paused_until, :until), "
            "updated_at = now() WHERE id = :id"
        ),
        {"until": until, "id": conversation_id},
    )


async def set_mode(session: AsyncSession, conversation_id: int, mode: ConversationMode) -> None:
    conversation = await session.get(Conversation, conversation_id)
    if conversation is not None:
        conversation.mode = mode
        if mode == ConversationMode.bot:
            conversation.paused_until = None
        await session.flush()


async def history(
    session: AsyncSession, conversation_id: int, *, before_id: int | None = None, limit: int = 50
) -> list[Message]:
    """The last ``limit`` messages of a conversation, oldest first."""
    query = select(Message).where(Message.conversation_id == conversation_id)
    if before_id is not None:
        query = query.where(Message.id < before_id)
    rows = (await session.scalars(query.order_by(Message.id.desc()).limit(limit))).all()
    return list(reversed(rows))


def bot_may_answer(mode: str, paused_until: datetime | None, now: datetime) -> bool:
    """Whether the bot answers in a conversation: not taken over by staff, not paused."""
    return mode != ConversationMode.human and not (paused_until and paused_until > now)


_CLOSE_QUESTION = text(
    """
    UPDATE messages SET status = 'answered', done_at = clock_timestamp(),
           tier = CASE WHEN :tag_question THEN CAST(:tier AS varchar) ELSE tier END,
           question = :question, lease_until = NULL, error = NULL
    WHERE id = :id AND status = 'answering' AND attempts = :attempt
    RETURNING id
    """
)

_INSERT_REPLY = text(
    """
    INSERT INTO messages (conversation_id, channel, direction, author, kind, text, tier,
                          citations, details, status, reply_to_id, created_at, done_at)
    VALUES (:conversation, :channel, 'out', 'bot', 'text', :text, :tier,
            CAST(:citations AS jsonb), CAST(:details AS jsonb),
            CAST(:status AS message_status), :reply_to, clock_timestamp(),
            CASE WHEN :status = 'sent' THEN clock_timestamp() END)
    RETURNING id
    """
)


# The conversation's answered questions (each as answered: a follow-up in its standalone form),
# when they came and whether the bot read them as small talk (a greeting, a thank-you): the
# conversation step stops at those (bot.answer.followup).
_EARLIER_TURNS = text(
    """
    SELECT coalesce(m.question, m.text) AS text, m.created_at,
           coalesce((SELECT (r.details -> 'why' ->> 'small_talk') IS NOT NULL FROM messages r
                     WHERE r.reply_to_id = m.id AND r.author = 'bot'
                     ORDER BY r.id LIMIT 1), false) AS small_talk
    FROM messages m
    WHERE m.conversation_id = :conversation AND m.direction = 'in' AND m.kind = 'text'
      AND m.status = 'answered' AND m.id < :before
    ORDER BY m.id DESC LIMIT :n
    """
)


@dataclass(frozen=True)
class EarlierTurn:
    text: str
    at: datetime
    small_talk: bool


async def earlier_turns(
    session: AsyncSession, conversation_id: int, before: int, n: int
) -> list[EarlierTurn]:
    """The conversation's last ``n`` answered questions before message ``before``, oldest
    first: each as it was answered, when it came, whether it was small talk."""
    rows = await session.execute(
        _EARLIER_TURNS, {"conversation": conversation_id, "before": before, "n": n}
    )
    return [EarlierTurn(r.text, r.created_at, bool(r.small_talk)) for r in rows][::-1]


_WAITING = text(
    "UPDATE conversations SET waiting_since = coalesce(waiting_since, clock_timestamp()) "
    "WHERE id = :id"
)
# A staff reply settles what made the conversation "cần xử lý": the request for a person and
# the 👎 alike.
_ANSWERED_BY_STAFF = text(
    "UPDATE conversations SET waiting_since = NULL, flagged_since = NULL WHERE id = :id"
)


async def store_reply(
    session: AsyncSession,
    *,
    inbound_id: int,
    attempt: int,
    conversation_id: int,
    channel: str,
    text_: str,
    tier: str | None,
    citations: Sequence[dict[str, Any]],
    details: dict[str, Any],
    question: str | None = None,
    delivered: bool = False,
    tag_question: bool = True,
    wants_staff: bool = False,
) -> int | None:
    """Close the question and store its reply, if this attempt still holds the claim (the
    same attempt number, still answering); None when the claim was lost and the result is late.

    A reply to deliver is queued for the worker (and the workers notified); ``delivered`` marks
    one the caller hands over itself (the web chat streams it to the browser). With
    ``tag_question`` the question row records the tier that answered it too. ``wants_staff``
    (the student asked for a person) marks the conversation as waiting for staff."""
    closed = await session.scalar(
        _CLOSE_QUESTION,
        {
            "id": inbound_id,
            "attempt": attempt,
            "tier": tier,
            "question": question,
            "tag_question": tag_question,
        },
    )
    if closed is None:
        return None
    reply_id = await session.scalar(
        _INSERT_REPLY,
        {
            "conversation": conversation_id,
            "channel": channel,
            "text": text_,
            "tier": tier,
            "citations": json.dumps(list(citations), ensure_ascii=False, default=str),
            "details": json.dumps(details, ensure_ascii=False, default=str),
            "status": "sent" if delivered else "queued",
            "reply_to": inbound_id,
        },
    )
    if wants_staff:
        await session.execute(_WAITING, {"id": conversation_id})
    if not delivered:
        await session.execute(text(f"NOTIFY {OUTBOX_CHANNEL}"))
    return None if reply_id is None else int(reply_id)


async def queue_staff_reply(
    session: AsyncSession, conversation_id: int, text_: str, staff: str
) -> int:
    """Queue a staff member's reply for delivery through the channel's adapter (the worker
    sends it, with the same retries as the bot's); the bot stays quiet in the thread."""
    conversation = await session.get(Conversation, conversation_id)
    if conversation is None:
        raise LookupError(f"no conversation {conversation_id}")
    reply_id = await session.scalar(
        text(
            """
            INSERT INTO messages (conversation_id, channel, direction, author, kind, text,
                                  details, status, created_at)
            VALUES (:conversation, :channel, 'out', 'staff', 'text', :text,
                    CAST(:details AS jsonb), 'queued', clock_timestamp())
            RETURNING id
            """
        ),
        {
            "conversation": conversation_id,
            "channel": conversation.channel,
            "text": text_,
            "details": json.dumps({"staff": staff}, ensure_ascii=False),
        },
    )
    await session.execute(_ANSWERED_BY_STAFF, {"id": conversation_id})
    await session.execute(text(f"NOTIFY {OUTBOX_CHANNEL}"))
    # Wakes the student's open web chat, held by whichever serve process (on commit).
    await session.execute(
        text("SELECT pg_notify(:channel, :conversation)"),
        {"channel": CONVERSATION_CHANNEL, "conversation": str(conversation_id)},
    )
    return int(reply_id)


def citations_json(citations: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {"n": c.n, "title": c.title, "source": c.source, "url": c.url, "page": c.page}
        for c in citations
    ]


@dataclass(frozen=True)
class ConversationState:  # what answering and delivering need of a thread and its contact
    mode: str
    paused_until: datetime | None
    last_inbound_at: datetime | None
    external_id: str
    locale: str | None


_CONVERSATION_STATE = text(
    "SELECT c.mode, c.paused_until, c.last_inbound_at, k.external_id, k.locale "
    "FROM conversations c JOIN contacts k ON k.id = c.contact_id WHERE c.id = :id"
)


async def conversation_state(session: AsyncSession, conversation_id: int) -> ConversationState:
    row = (await session.execute(_CONVERSATION_STATE, {"id": conversation_id})).one()
    return ConversationState(
        row.mode, row.paused_until, row.last_inbound_at, row.external_id, row.locale
    )


async def contact_conversation(
    session: AsyncSession, channel: str, external_user_id: str
) -> Conversation | None:
    """The conversation of this user on this channel, if they ever wrote."""
    return await session.scalar(
        select(Conversation)
        .join(Contact, Contact.id == Conversation.contact_id)
        .where(Contact.channel == channel, Contact.external_id == external_user_id)
    )


async def inbound_event(
    session: AsyncSession, channel: str, event_id: str
) -> tuple[Message, str] | None:
    """The inbound message stored for this event, with the external id of who sent it."""
    found = (
        await session.execute(
            select(Message, Contact.external_id)
            .join(Conversation, Conversation.id == Message.conversation_id)
            .join(Contact, Contact.id == Conversation.contact_id)
            .where(Message.channel == channel, Message.event_id == event_id)
        )
    ).one_or_none()
    return None if found is None else (found[0], found[1])


async def bot_reply_to(session: AsyncSession, inbound_id: int) -> Message | None:
    """The bot's reply to a question, if it has one."""
    return await session.scalar(
        select(Message)
        .where(Message.reply_to_id == inbound_id, Message.author == Author.bot)
        .order_by(Message.id)
        .limit(1)
    )
