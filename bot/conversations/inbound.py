"""Recording an inbound event: once per platform event id, in one statement, with the
per-conversation cap on questions waiting to be answered (the same rule for every channel), and
a question held by that cap taken up again once there is room (``release_held``).

Functions take the session (or an autocommit connection) first and never commit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from bot.core.clock import utcnow
from bot.core.messages import InboundMessage
from bot.db.models import Author, Direction, MessageStatus
from retrieval.text.language import detect_language

# Inbound kinds the worker acts on; the rest are stored as skipped.
ANSWERABLE = ("text", "command", "follow", "unsupported")


@dataclass(frozen=True)
class Recorded:
    message_id: int | None  # None: this event was stored before (a platform retry)
    conversation_id: int
    held: bool = False  # stored but not to be answered: too many questions were waiting
    noticed: bool = False  # answered later, in turn; the student was told to wait


# One statement, one round trip: the webhook's whole write. Contact and conversation are upserted
# (RETURNING works for a row that already exists because the conflict does a harmless update),
# the message is inserted unless this event is already stored, and the workers are notified only
# when it was. A single statement is atomic on its own, so it runs without BEGIN/COMMIT.
# A question arriving while its conversation already has :cap questions waiting (received or
# answering) is held: stored, but skipped with the reason in `error`, and nobody is notified.
# With a :flood cap (the platforms'), it is held only past :flood questions waiting; the first
# that finds :cap or more waiting, with no notice queued since the oldest of them arrived, is
# answered in its turn like the rest, and a short bot notice ("I am still answering your earlier
# questions") is queued in the same statement. Not "exactly :cap": questions stored at the same
# moment do not see each other, and a burst of 500 could pass :cap without one seeing it.
# Only the conversation's last PENDING_WINDOW messages are looked at (newest first on the
# (conversation_id, id) index), so a long thread costs the same as a short one.
RECORD_INBOUND = text(
    """
    WITH contact AS (
        INSERT INTO contacts (channel, external_id, name, locale)
        VALUES (:channel, :user, :name, :locale)
        ON CONFLICT ON CONSTRAINT uq_contacts_channel_external_id DO UPDATE
        SET name = coalesce(EXCLUDED.name, contacts.name),
            locale = coalesce(EXCLUDED.locale, contacts.locale)
        RETURNING id
    ), conversation AS (
        INSERT INTO conversations (contact_id, channel, last_inbound_at)
        SELECT id, :channel, CASE WHEN :answerable THEN CAST(:at AS timestamptz) END FROM contact
        ON CONFLICT ON CONSTRAINT uq_conversations_contact_id DO UPDATE
        SET last_inbound_at = CASE WHEN :answerable
                THEN greatest(conversations.last_inbound_at, EXCLUDED.last_inbound_at)
                ELSE conversations.last_inbound_at END,
            updated_at = now()
        RETURNING id
    ), recent AS (
        SELECT m.id, m.direction, m.status, m.details FROM messages m, conversation c
        WHERE m.conversation_id = c.id
        ORDER BY m.id DESC LIMIT :window
    ), waiting AS (
        SELECT count(*) AS n, min(id) AS oldest FROM recent
        WHERE recent.direction = 'in' AND recent.status IN ('received', 'answering')
    ), told AS (
        SELECT EXISTS (
            SELECT 1 FROM recent, waiting
            WHERE recent.direction = 'out' AND recent.details ->> 'notice' = 'waiting'
              AND recent.id > waiting.oldest
        ) AS yes
    ), held AS (
        SELECT :status = 'received' AND CASE
                WHEN CAST(:flood AS integer) > 0 THEN waiting.n >= CAST(:flood AS integer)
                ELSE CAST(:cap AS integer) > 0 AND waiting.n >= CAST(:cap AS integer)
            END AS yes,
            :status = 'received' AND CAST(:flood AS integer) > 0 AND CAST(:cap AS integer) > 0
                AND waiting.n >= CAST(:cap AS integer) AND NOT told.yes AS notice
        FROM waiting, told
    ), message AS (
        INSERT INTO messages (conversation_id, channel, direction, author, event_id, kind, text,
                              status, error, raw, created_at, done_at)
        SELECT id, :channel, CAST(:direction AS message_direction),
               CAST(:author AS message_author), :event_id, :kind, :text,
               CAST(CASE WHEN held.yes THEN 'skipped' ELSE :status END AS message_status),
               CASE WHEN held.yes THEN CAST(:held_error AS text) END,
               CAST(:raw AS jsonb), :now,
               CASE WHEN :status = 'received' AND NOT held.yes
                    THEN NULL ELSE CAST(:now AS timestamptz) END
        FROM conversation, held
        ON CONFLICT ON CONSTRAINT uq_messages_channel_event_id DO NOTHING
        RETURNING id
    ), notice AS (
        INSERT INTO messages (conversation_id, channel, direction, author, kind, text, details,
                              status, created_at)
        SELECT conversation.id, :channel, 'out', 'bot', 'text', :notice_text,
               CAST('{"notice": "waiting"}' AS jsonb), 'queued', :now
        FROM conversation, held
        WHERE held.notice AND EXISTS (SELECT 1 FROM message)
        RETURNING id
    )
    SELECT (SELECT id FROM message) AS message_id, (SELECT id FROM conversation) AS conversation_id,
           (SELECT yes FROM held) AS held, EXISTS (SELECT 1 FROM notice) AS noticed,
           CASE WHEN :notify AND NOT (SELECT yes FROM held) AND EXISTS (SELECT 1 FROM message)
                THEN pg_notify('tuvan_inbox', '') END AS notified,
           CASE WHEN EXISTS (SELECT 1 FROM notice) THEN pg_notify('tuvan_outbox', '') END
               AS notice_sent
    """
)

# The reason a held question gives in `error`; the web chat recognises a repeat of it by this.
HELD_ERROR = "held: too many questions of this conversation were waiting to be answered"
PENDING_WINDOW = 100
# The bot's notice to a student whose questions wait behind earlier ones, by language.
WAITING_NOTICE = {
    "vi": "Mình đang trả lời các câu trước của bạn, bạn đợi chút nhé.",
    "en": "I am still answering your earlier questions; please wait a moment.",
}


async def record_inbound(
    session: AsyncSession | AsyncConnection,
    message: InboundMessage,
    *,
    now: datetime | None = None,
    max_pending: int = 0,
    flood: int = 0,
) -> Recorded:
    """Store one inbound event once; a repeated delivery is recognised and left alone.

    Staff replies typed in a platform's own inbox (kind ``staff``) are stored as staff messages
    and are not answered. Text, commands, follows and unsupported media wait for a worker,
    unless ``max_pending`` (> 0) questions of the conversation are waiting already: then the
    question is held (stored as skipped, ``HELD_ERROR`` in ``error``; ``Recorded.held``).
    With ``flood`` (> 0, the platforms'), a question is held only past ``flood`` waiting; the
    first finding ``max_pending`` or more waiting and no notice since the oldest of them is
    answered in its turn and a notice is queued for the student (``Recorded.noticed``), so no
    question waits unsaid.
    """
    row = (
        await session.execute(
            RECORD_INBOUND,
            inbound_params(message, now=now, max_pending=max_pending, flood=flood),
        )
    ).one()
    return recorded(row.message_id, row.conversation_id, row.held, row.noticed)


def inbound_params(
    message: InboundMessage, *, now: datetime | None = None, max_pending: int = 0, flood: int = 0
) -> dict[str, Any]:
    """The parameters of ``RECORD_INBOUND`` for ``message`` (``record_inbound``'s)."""
    now = now or utcnow()
    staff = message.kind == "staff"
    answerable = message.kind in ANSWERABLE
    if staff:
        status = MessageStatus.sent
    else:
        status = MessageStatus.received if answerable else MessageStatus.skipped
    return {
        "channel": message.channel,
        "user": message.external_user_id,
        "name": message.user_name,
        "locale": message.locale,
        "answerable": answerable,
        "at": message.sent_at or now,
        "direction": (Direction.outbound if staff else Direction.inbound).value,
        "author": (Author.staff if staff else Author.user).value,
        "event_id": message.event_id,
        "kind": message.kind,
        "text": message.text,
        "status": status.value,
        "raw": json.dumps(dict(message.raw), ensure_ascii=False, default=str),
        "now": now,
        "notify": answerable,
        "cap": max_pending,
        "flood": flood,
        "window": PENDING_WINDOW,
        "held_error": HELD_ERROR,
        "notice_text": WAITING_NOTICE[detect_language(message.text or "")],
    }


def recorded(message_id: Any, conversation_id: Any, held: Any, noticed: Any) -> Recorded:
    """``Recorded`` from the first four columns of ``RECORD_INBOUND``'s row."""
    stored = message_id is not None
    return Recorded(
        int(message_id) if stored else None,
        int(conversation_id),
        bool(held) and stored,
        bool(noticed),
    )


# A held question taken up again, if its conversation has room now: the same count as
# RECORD_INBOUND's (the last :window messages, questions received or being answered).
_RELEASE_HELD = text(
    """
    UPDATE messages m SET status = 'received', error = NULL, done_at = NULL
    WHERE m.id = :id AND m.status = 'skipped' AND m.error = :held_error
      AND (CAST(:cap AS integer) = 0 OR (
          SELECT count(*) FROM (
              SELECT r.direction, r.status FROM messages r
              WHERE r.conversation_id = m.conversation_id
              ORDER BY r.id DESC LIMIT :window
          ) recent
          WHERE recent.direction = 'in' AND recent.status IN ('received', 'answering')
      ) < CAST(:cap AS integer))
    RETURNING m.id
    """
)


async def release_held(session: AsyncSession, message_id: int, *, max_pending: int) -> bool:
    """Let a held question (``HELD_ERROR``) wait to be answered again once fewer than
    ``max_pending`` questions of its conversation are waiting: the web chat's page sends a held
    question again with the same message id, and that resend is the one to answer. False: still
    held (or no longer held: another request took it up first)."""
    params = {
        "id": message_id,
        "held_error": HELD_ERROR,
        "cap": max_pending,
        "window": PENDING_WINDOW,
    }
    return (await session.scalar(_RELEASE_HELD, params)) is not None
