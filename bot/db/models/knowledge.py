"""The knowledge store: FAQ entries and their variants, documents and their chunks, summaries,
the index state and the text models (the diacritic restorer) built from them."""

from __future__ import annotations

import enum
from datetime import date, datetime
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    Boolean,
    Computed,
    Date,
    DateTime,
    Enum,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR
from sqlalchemy.orm import Mapped, mapped_column, relationship

from bot.db.models.base import EMBEDDING_DIM, TSV_EXPR, Base, hnsw_cosine, now_column


class FaqStatus(enum.StrEnum):
    draft = "draft"
    published = "published"


class VariantOrigin(enum.StrEnum):
    staff = "staff"
    generated = "generated"
    folded = "folded"


class FaqOrigin(enum.StrEnum):
    staff = "staff"  # written or imported by staff
    generated = "generated"  # generated from a document chunk (URAG-F b): a draft until published


class FaqEntry(Base):
    __tablename__ = "faq_entries"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    external_id: Mapped[str | None] = mapped_column(String(200), unique=True)
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text)
    source: Mapped[str | None] = mapped_column(Text)
    source_url: Mapped[str | None] = mapped_column(Text)
    language: Mapped[str] = mapped_column(String(8), default="vi", server_default="vi")
    status: Mapped[FaqStatus] = mapped_column(
        Enum(FaqStatus, name="faq_status"),
        default=FaqStatus.draft,
        server_default=FaqStatus.draft.value,
    )
    keyword_text: Mapped[str] = mapped_column(Text, default="", server_default="")
    tsv: Mapped[Any] = mapped_column(TSVECTOR, Computed(TSV_EXPR, persisted=True))
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True)
    created_at: Mapped[datetime] = now_column()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )
    updated_by: Mapped[str | None] = mapped_column(String(320))
    origin: Mapped[FaqOrigin] = mapped_column(
        Enum(FaqOrigin, name="faq_origin"),
        default=FaqOrigin.staff,
        server_default=FaqOrigin.staff.value,
    )
    # Traceability of a generated entry: the document (removing it removes the entry), the chunk
    # (set NULL when a re-ingest replaces the chunks), the chunk's text and the document version
    # (content hash) it was generated from.
    source_document_id: Mapped[int | None] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE")
    )
    source_chunk_id: Mapped[int | None] = mapped_column(
        ForeignKey("chunks.id", ondelete="SET NULL")
    )
    source_text: Mapped[str | None] = mapped_column(Text)
    source_version: Mapped[str | None] = mapped_column(String(64))
    # Set when the source changed after generation: staff should look at it again.
    needs_review: Mapped[bool] = mapped_column(Boolean, default=False, server_default="false")
    review_note: Mapped[str | None] = mapped_column(Text)
    # The year it speaks of, and the day after which it is about something past: tier 1 never
    # answers it verbatim then (retrieval.facts.years; read from its text, or set by staff).
    year: Mapped[int | None] = mapped_column(Integer)
    valid_until: Mapped[date | None] = mapped_column(Date)

    variants: Mapped[list[FaqVariant]] = relationship(
        back_populates="entry", cascade="all, delete-orphan", passive_deletes=True
    )

    __table_args__ = (
        hnsw_cosine("ix_faq_entries_embedding_hnsw"),
        Index("ix_faq_entries_tsv", "tsv", postgresql_using="gin"),
        Index("ix_faq_entries_status", "status"),
        Index("ix_faq_entries_source_document_id", "source_document_id"),
    )


class FaqVariant(Base):
    __tablename__ = "faq_variants"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    faq_id: Mapped[int] = mapped_column(ForeignKey("faq_entries.id", ondelete="CASCADE"))
    text: Mapped[str] = mapped_column(Text)
    origin: Mapped[VariantOrigin] = mapped_column(
        Enum(VariantOrigin, name="variant_origin"),
        default=VariantOrigin.staff,
        server_default=VariantOrigin.staff.value,
    )
    keyword_text: Mapped[str] = mapped_column(Text, default="", server_default="")
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True)
    created_at: Mapped[datetime] = now_column()
    # A generated variant: the question text it paraphrased (flagged when that changes).
    source_version: Mapped[str | None] = mapped_column(String(64))
    needs_review: Mapped[bool] = mapped_column(Boolean, default=False, server_default="false")

    entry: Mapped[FaqEntry] = relationship(back_populates="variants")

    __table_args__ = (
        UniqueConstraint("faq_id", "text", name="uq_faq_variants_faq_id_text"),
        hnsw_cosine("ix_faq_variants_embedding_hnsw"),
        Index("ix_faq_variants_faq_id", "faq_id"),
    )


class Document(Base):
    __tablename__ = "documents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    source: Mapped[str] = mapped_column(Text, unique=True)  # file path or URL, the identity
    title: Mapped[str] = mapped_column(Text, default="", server_default="")
    url: Mapped[str | None] = mapped_column(Text)  # public link for citations, when known
    language: Mapped[str] = mapped_column(String(8), default="vi", server_default="vi")
    content_hash: Mapped[str] = mapped_column(String(64))
    meta: Mapped[dict[str, Any]] = mapped_column(
        "metadata", JSONB, default=dict, server_default="{}"
    )
    # URAG-D: the document's general context, extracted by the LLM (`tuvan augment`).
    context: Mapped[str | None] = mapped_column(Text)
    # The link-graph community of a crawled page (`tuvan graph`), None for files.
    community: Mapped[int | None] = mapped_column(Integer)
    # The year it speaks of and the day after which it is about something past
    # (retrieval.facts.years.document_validity), read at ingest unless staff set them.
    year: Mapped[int | None] = mapped_column(Integer)
    valid_until: Mapped[date | None] = mapped_column(Date)
    validity_by_staff: Mapped[bool] = mapped_column(Boolean, default=False, server_default="false")
    created_at: Mapped[datetime] = now_column()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )

    chunks: Mapped[list[Chunk]] = relationship(
        back_populates="document", cascade="all, delete-orphan", passive_deletes=True
    )


class Chunk(Base):
    __tablename__ = "chunks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    ordinal: Mapped[int] = mapped_column(Integer)
    page: Mapped[int | None] = mapped_column(Integer)
    heading_path: Mapped[str] = mapped_column(Text, default="", server_default="")
    text: Mapped[str] = mapped_column(Text)  # the original, quoted in answers and citations
    external_id: Mapped[str | None] = mapped_column(String(200))  # pre-cut passage id (eval)
    keyword_text: Mapped[str] = mapped_column(Text, default="", server_default="")
    tsv: Mapped[Any] = mapped_column(TSVECTOR, Computed(TSV_EXPR, persisted=True))
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True)
    token_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # URAG-D: the chunk rewritten with its document's context, with a one-sentence summary in
    # front. When set, it is what is embedded and keyword-indexed; `text` is still what is quoted.
    augmented_text: Mapped[str | None] = mapped_column(Text)

    document: Mapped[Document] = relationship(back_populates="chunks")

    __table_args__ = (
        UniqueConstraint("document_id", "ordinal", name="uq_chunks_document_id_ordinal"),
        hnsw_cosine("ix_chunks_embedding_hnsw"),
        Index("ix_chunks_tsv", "tsv", postgresql_using="gin"),
        Index("ix_chunks_document_id", "document_id"),
    )


class DocumentSummary(Base):
    """A document's summary (URAG-D, with an LLM): searched first in the summary-first mode."""

    __tablename__ = "document_summaries"

    document_id: Mapped[int] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True
    )
    summary: Mapped[str] = mapped_column(Text)
    source_version: Mapped[str] = mapped_column(String(64))  # the document's content hash
    keyword_text: Mapped[str] = mapped_column(Text, default="", server_default="")
    tsv: Mapped[Any] = mapped_column(TSVECTOR, Computed(TSV_EXPR, persisted=True))
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True)
    created_at: Mapped[datetime] = now_column()

    __table_args__ = (
        hnsw_cosine("ix_document_summaries_embedding_hnsw"),
        Index("ix_document_summaries_tsv", "tsv", postgresql_using="gin"),
    )


class IndexState(Base):
    """Which embedder built the stored vectors (one row), and thresholds calibrated for it."""

    __tablename__ = "index_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, default=1)
    embedder: Mapped[str] = mapped_column(Text)
    dimension: Mapped[int] = mapped_column(Integer)
    thresholds: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default="{}")
    built_at: Mapped[datetime] = now_column()


class TextModel(Base):
    """A model learned from the knowledge (the diacritic restorer's counts), shared by every
    process: rebuilt by the first one that finds the knowledge changed (``signature``)."""

    __tablename__ = "text_models"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    signature: Mapped[str] = mapped_column(Text)
    data: Mapped[bytes] = mapped_column(LargeBinary)
    built_at: Mapped[datetime] = now_column()
