"""The SQL fold used by the FAQ search agrees with retrieval.text.fold, in a real PostgreSQL."""

from __future__ import annotations

import unicodedata

import pytest
from sqlalchemy import literal, select
from sqlalchemy.ext.asyncio import AsyncSession

from admin.faq_store import folded, like_pattern
from retrieval.text import fold

SAMPLES = [
    "Học phí ngành Khoa học Máy tính",
    "ĐIỂM CHUẨN năm 2025 — Đại học",
    unicodedata.normalize("NFD", "Trường Đại học Công nghệ Sông Hồng"),
    "Ký túc xá\ncòn  chỗ\tkhông?",
    "Tuition fee for 2026/2027 (USD 1,500)",
    "ữ ỹ ặ ẫ ổ ờ ụ ị ề",
]


@pytest.mark.parametrize("text", SAMPLES)
async def test_sql_fold_is_python_fold(session: AsyncSession, text: str) -> None:
    assert await session.scalar(select(folded(literal(text)))) == fold(text)


def test_like_wildcards_in_a_query_are_plain_characters() -> None:
    assert like_pattern("100%_Học\\") == "%100\\%\\_hoc\\\\%"
