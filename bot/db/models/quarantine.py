"""Quarantined webhook events: authentic events that could not be stored as messages.

A platform retries a webhook until it gets a 200. An event that can never be stored (a value
PostgreSQL refuses, an id longer than its column, an event without a sender) would be retried
forever; it is kept here as it came instead, and acknowledged. Staff see the count in the admin.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from bot.db.models.base import Base, now_column


class QuarantinedEvent(Base):
    __tablename__ = "quarantined_events"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    channel: Mapped[str] = mapped_column(String(16))
    # Where in the body the event is ("entry[0].messaging[1]", "event m_123") and why it was
    # not stored.
    location: Mapped[str] = mapped_column(String(200))
    reason: Mapped[str] = mapped_column(Text)
    # The whole request body, as text (bytes that are not UTF-8 backslash-escaped, NUL too).
    raw_body: Mapped[str] = mapped_column(Text)
    # SHA-256 of the body and the location: a platform's retry of the same event adds nothing.
    fingerprint: Mapped[str] = mapped_column(String(64))
    received_at: Mapped[datetime] = now_column()

    __table_args__ = (
        UniqueConstraint("channel", "fingerprint", name="uq_quarantined_events_channel"),
    )
