"""Conversations: one store for every channel (contacts, threads, messages in and out) and the
platform tokens the channels keep."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    DateTime,
    Enum,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy import text as sql_text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from bot.db.models.base import Base, now_column


class ConversationMode(enum.StrEnum):
    bot = "bot"  # the bot answers
    human = "human"  # staff took over: the bot stays quiet until handed back


class Direction(enum.StrEnum):
    inbound = "in"
    outbound = "out"


class Author(enum.StrEnum):
    user = "user"
    bot = "bot"
    staff = "staff"


class MessageStatus(enum.StrEnum):
    # inbound: received → answering → answered | skipped | failed
    received = "received"
    answering = "answering"
    answered = "answered"
    skipped = "skipped"  # stored, not answered (an event, a paused thread)
    # outbound: queued → sending → sent | undeliverable | failed
    queued = "queued"
    sending = "sending"
    sent = "sent"
    undeliverable = "undeliverable"  # outside the platform's window, or channel not set up
    failed = "failed"  # attempts exhausted or a permanent error; `error` says why


class Contact(Base):
    __tablename__ = "contacts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    channel: Mapped[str] = mapped_column(String(16))
    external_id: Mapped[str] = mapped_column(String(200))  # Telegram chat id, PSID, Zalo user id
    name: Mapped[str | None] = mapped_column(Text)
    locale: Mapped[str | None] = mapped_column(String(16))
    created_at: Mapped[datetime] = now_column()

    __table_args__ = (
        UniqueConstraint("channel", "external_id", name="uq_contacts_channel_external_id"),
    )


class Conversation(Base):
    """One thread per contact; ``mode`` and ``paused_until`` say whether the bot may answer."""

    __tablename__ = "conversations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    contact_id: Mapped[int] = mapped_column(
        ForeignKey("contacts.id", ondelete="CASCADE"), unique=True
    )
    channel: Mapped[str] = mapped_column(String(16))
    mode: Mapped[ConversationMode] = mapped_column(
        Enum(ConversationMode, name="conversation_mode"),
        default=ConversationMode.bot,
        server_default=ConversationMode.bot.value,
    )
    paused_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_inbound_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Since when the student has been waiting for a person (they asked for one); cleared by a
    # staff reply. The admin lists these conversations first.
    waiting_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Since when the student has been unhappy with an answer (they marked it 👎); cleared by a
    # staff reply or by staff marking the conversation handled. Listed first, beside
    # ``waiting_since``, as "cần xử lý".
    flagged_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = now_column()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )

    __table_args__ = (
        Index("ix_conversations_updated_at", "updated_at"),
        # "cần xử lý", counted on every admin page: only the conversations that need staff.
        Index(
            "ix_conversations_needs_attention",
            "id",
            postgresql_where=sql_text("waiting_since IS NOT NULL OR flagged_since IS NOT NULL"),
        ),
    )


class Message(Base):
    __tablename__ = "messages"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    channel: Mapped[str] = mapped_column(String(16))
    direction: Mapped[Direction] = mapped_column(
        Enum(Direction, name="message_direction", values_callable=lambda e: [m.value for m in e])
    )
    author: Mapped[Author] = mapped_column(Enum(Author, name="message_author"))
    # The platform's id of an inbound event: the dedup key (unique per channel).
    event_id: Mapped[str | None] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(16), default="text", server_default="text")
    text: Mapped[str] = mapped_column(Text, default="", server_default="")
    question: Mapped[str | None] = mapped_column(Text)  # the standalone form of a follow-up
    tier: Mapped[str | None] = mapped_column(String(16))
    citations: Mapped[list[Any]] = mapped_column(JSONB, default=list, server_default="[]")
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default="{}")
    status: Mapped[MessageStatus] = mapped_column(Enum(MessageStatus, name="message_status"))
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    error: Mapped[str | None] = mapped_column(Text)
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    reply_to_id: Mapped[int | None] = mapped_column(ForeignKey("messages.id", ondelete="SET NULL"))
    raw: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default="{}")
    created_at: Mapped[datetime] = now_column()
    done_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        UniqueConstraint("channel", "event_id", name="uq_messages_channel_event_id"),
        Index("ix_messages_conversation_id_id", "conversation_id", "id"),
        # The work queues: only rows still to do are in these indexes.
        Index(
            "ix_messages_inbox",
            "id",
            postgresql_where=sql_text("status IN ('received', 'answering')"),
        ),
        Index(
            "ix_messages_outbox",
            "id",
            postgresql_where=sql_text("status IN ('queued', 'sending')"),
        ),
        Index("ix_messages_created_at", "created_at"),
        # A claim's "no earlier row of this conversation still to do": one probe of the rows
        # still to do, never a walk through the conversation's history.
        Index(
            "ix_messages_pending_conversation",
            "conversation_id",
            "id",
            postgresql_where=sql_text("status IN ('received', 'answering', 'queued', 'sending')"),
        ),
        # Deleting a message sets reply_to_id NULL in the replies to it: without this index
        # every deleted row scans the table (`tuvan prune`).
        Index("ix_messages_reply_to_id", "reply_to_id"),
        # Messages whose raw payload is still kept: `tuvan prune` empties the old ones without
        # walking the months of messages already emptied.
        Index(
            "ix_messages_raw_kept",
            "created_at",
            postgresql_where=sql_text("raw <> '{}'::jsonb"),
        ),
    )


class AnswerFeedback(Base):
    """A student's 👍 (``value`` 1) or 👎 (-1) on one of the bot's answers: one per answer, the
    latest vote wins. ``message_id`` is the outbound answer; its question is its
    ``reply_to_id``."""

    __tablename__ = "answer_feedback"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    message_id: Mapped[int] = mapped_column(
        ForeignKey("messages.id", ondelete="CASCADE"), unique=True
    )
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    channel: Mapped[str] = mapped_column(String(16))
    value: Mapped[int] = mapped_column(SmallInteger)
    created_at: Mapped[datetime] = now_column()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )

    __table_args__ = (
        CheckConstraint("value IN (-1, 1)", name="value_is_vote"),
        Index("ix_answer_feedback_created_at", "created_at"),
        Index("ix_answer_feedback_conversation_id", "conversation_id"),
    )


class SettledAnswer(Base):
    """An answer staff looked at again in the admin's "Cần xem lại" queue and marked "đã xem":
    it leaves the queue (a 👎 newer than ``settled_at`` brings it back). ``message_id`` is the
    outbound answer; who settled it, and when, is also in the audit log."""

    __tablename__ = "settled_answers"

    message_id: Mapped[int] = mapped_column(
        ForeignKey("messages.id", ondelete="CASCADE"), primary_key=True
    )
    settled_by: Mapped[str] = mapped_column(String(320))
    settled_at: Mapped[datetime] = now_column()


class ChannelToken(Base):
    """Platform tokens that rotate (Zalo OA): the current pair, replaced atomically."""

    __tablename__ = "channel_tokens"

    channel: Mapped[str] = mapped_column(String(16), primary_key=True)
    access_token: Mapped[str] = mapped_column(Text)
    refresh_token: Mapped[str] = mapped_column(Text)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )
