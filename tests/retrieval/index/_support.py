"""What the index tests share: a small document, and the vector columns as PostgreSQL holds them."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

VECTOR_TABLES = ("faq_entries", "faq_variants", "chunks")
HNSW_INDEXES = {f"ix_{t}_embedding_hnsw" for t in VECTOR_TABLES}

HANDBOOK = """\
# Sổ tay tân sinh viên

## Thẻ sinh viên
Thẻ sinh viên được cấp trong tuần đầu nhập học tại phòng Công tác sinh viên.

## Gửi xe
Bãi gửi xe mở cửa từ 6:00 đến 22:00; phí gửi xe máy là 3.000 đồng mỗi lượt.
"""


async def vector_columns(session: AsyncSession) -> dict[str, tuple[int, str]]:
    """Each vector column's declared dimension (pgvector keeps it in atttypmod) and storage."""
    rows = await session.execute(
        text(
            "SELECT c.relname, a.atttypmod, a.attstorage FROM pg_attribute a "
            "JOIN pg_class c ON c.oid = a.attrelid "
            "WHERE a.attname = 'embedding' AND c.relname = ANY(:tables)"
        ),
        {"tables": list(VECTOR_TABLES)},
    )
    return {name: (int(mod), str(storage)) for name, mod, storage in rows}


async def dimensions(session: AsyncSession) -> dict[str, int]:
    return {name: dim for name, (dim, _) in (await vector_columns(session)).items()}


async def embedding_storage(session: AsyncSession) -> dict[str, str]:
    return {name: storage for name, (_, storage) in (await vector_columns(session)).items()}
