"""The knowledge store: FAQ entries and their variants, documents and their chunks.

Vectors are declared with the default embedder's dimension; `tuvan reindex` with an embedder of
another dimension changes the column type and rebuilds the HNSW indexes (retrieval.index).
Every schema change goes through an Alembic migration; tests check that both agree.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any, ClassVar

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    Computed,
    DateTime,
    Enum,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

EMBEDDING_DIM = 384

# Stable constraint names, so that autogenerate and hand-written migrations agree.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# to_tsvector(regconfig, text) is IMMUTABLE, so it may feed a generated column; the 'simple'
# configuration keeps our own Vietnamese-aware terms (retrieval.text) as they are.
TSV_EXPR = "to_tsvector('simple'::regconfig, coalesce(keyword_text, ''))"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSONB}


class FaqStatus(enum.StrEnum):
    draft = "draft"
    published = "published"


class VariantOrigin(enum.StrEnum):
    staff = "staff"
    generated = "generated"
    folded = "folded"


def _hnsw_cosine(name: str) -> Index:
    """The ANN index of an ``embedding`` column (retrieval.index rebuilds it on a resize)."""
    return Index(
        name,
        "embedding",
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )


def _now_column() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), server_default=func.now())


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
    created_at: Mapped[datetime] = _now_column()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )
    updated_by: Mapped[str | None] = mapped_column(String(320))

    variants: Mapped[list[FaqVariant]] = relationship(
        back_populates="entry", cascade="all, delete-orphan", passive_deletes=True
    )

    __table_args__ = (
        _hnsw_cosine("ix_faq_entries_embedding_hnsw"),
        Index("ix_faq_entries_tsv", "tsv", postgresql_using="gin"),
        Index("ix_faq_entries_status", "status"),
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
    created_at: Mapped[datetime] = _now_column()

    entry: Mapped[FaqEntry] = relationship(back_populates="variants")

    __table_args__ = (
        UniqueConstraint("faq_id", "text", name="uq_faq_variants_faq_id_text"),
        _hnsw_cosine("ix_faq_variants_embedding_hnsw"),
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
    created_at: Mapped[datetime] = _now_column()
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

    document: Mapped[Document] = relationship(back_populates="chunks")

    __table_args__ = (
        UniqueConstraint("document_id", "ordinal", name="uq_chunks_document_id_ordinal"),
        _hnsw_cosine("ix_chunks_embedding_hnsw"),
        Index("ix_chunks_tsv", "tsv", postgresql_using="gin"),
        Index("ix_chunks_document_id", "document_id"),
    )


class IndexState(Base):
    """Which embedder built the stored vectors (one row), and thresholds calibrated for it."""

    __tablename__ = "index_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, default=1)
    embedder: Mapped[str] = mapped_column(Text)
    dimension: Mapped[int] = mapped_column(Integer)
    thresholds: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default="{}")
    built_at: Mapped[datetime] = _now_column()
