"""The school's catalogue and facts tables (issue 2/4), read from the knowledge base's tables at
ingest (retrieval.facts) and kept by staff: an item or fact staff corrected or added
(``origin`` "staff") is never replaced by the next ingest; an extracted one is replaced with its
document."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from bot.db.models.base import Base, now_column

EXTRACTED = "extracted"
STAFF = "staff"


class _FromDocuments:
    """What catalogue items and facts share: read from a document (which takes them along when
    it goes) or set by staff, where in it, and who changed them when."""

    origin: Mapped[str] = mapped_column(String(16), default=EXTRACTED, server_default=EXTRACTED)
    document_id: Mapped[int | None] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    place: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default="{}")
    created_at: Mapped[datetime] = now_column()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )
    updated_by: Mapped[str | None] = mapped_column(String(320))


class CatalogueRow(_FromDocuments, Base):
    """A major, programme, admission method or subject combination of the school."""

    __tablename__ = "catalogue_items"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(Text)
    code: Mapped[str | None] = mapped_column(String(64))
    aliases: Mapped[list[str]] = mapped_column(JSONB, default=list, server_default="[]")
    hidden: Mapped[bool] = mapped_column(Boolean, default=False, server_default="false")

    __table_args__ = (
        Index("ix_catalogue_items_kind", "kind"),
        Index("ix_catalogue_items_document_id", "document_id"),
    )


class FactRow(_FromDocuments, Base):
    """One value of a facts table with where it was found (retrieval.facts.model.Fact)."""

    __tablename__ = "facts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    attribute: Mapped[str] = mapped_column(String(64))
    major: Mapped[str] = mapped_column(Text)
    code: Mapped[str | None] = mapped_column(String(64))
    programme: Mapped[str | None] = mapped_column(Text)
    method: Mapped[str | None] = mapped_column(Text)
    year: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    value: Mapped[float | None] = mapped_column(Float)
    offered: Mapped[bool] = mapped_column(Boolean, default=True, server_default="true")
    scale: Mapped[float | None] = mapped_column(Float)
    unit: Mapped[str | None] = mapped_column(Text)
    combinations: Mapped[list[str]] = mapped_column(JSONB, default=list, server_default="[]")
    campus: Mapped[str | None] = mapped_column(Text)  # None: its column names no campus
    published: Mapped[bool] = mapped_column(Boolean, default=True, server_default="true")

    __table_args__ = (
        Index("ix_facts_attribute_year", "attribute", "year"),
        Index("ix_facts_document_id", "document_id"),
    )
