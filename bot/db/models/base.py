"""The declarative base of every table: naming convention, JSONB for dicts, the embedding
dimension, and the column and index shapes the tables share."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import DateTime, Index, MetaData, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

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


def hnsw_cosine(name: str) -> Index:
    """The ANN index of an ``embedding`` column (retrieval.index rebuilds it on a resize)."""
    return Index(
        name,
        "embedding",
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )


def now_column() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), server_default=func.now())
