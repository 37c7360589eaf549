"""The rate limits' table: one token bucket per key (``chat-ip:<address>``,
``chat-visitor:<id>``), shared by every serve process (``bot.web.rate_limits``)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from bot.db.models.base import Base


class RateBucket(Base):
    """A token bucket stored as the time it is full again (``full_at``): its tokens at any
    moment follow from that and the limit's rate, so a check is one upsert, and a row whose
    ``full_at`` has passed is the same as no row (``bot.web.rate_limits`` prunes those)."""

    __tablename__ = "rate_buckets"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    full_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_rate_buckets_full_at", "full_at"),)
