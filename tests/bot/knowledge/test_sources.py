"""`tuvan sources`: what derives from each source is counted, flagged when the source changes and
removed with it (the listing and removal the command runs, against a real PostgreSQL)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.parts import AnswererParts
from bot.db.models import FaqEntry, FaqStatus, FaqVariant, VariantOrigin
from bot.knowledge.faq_drafts import FaqDraftJob, FaqDraftOptions
from bot.knowledge.sources import SourceRow, list_sources
from bot.llm.client import LlmClient
from retrieval.index.documents import delete_document, index_document
from retrieval.index.indexer import Indexer
from retrieval.loading import load_file
from tests.fakes.openai_stub import OpenAIStub

DORM = "# Ký túc xá\n\nPhí ký túc xá là 500.000 đồng mỗi tháng, phòng 4 người.\n"
PAIRS = [
    {"question": "Phí ký túc xá bao nhiêu một tháng?", "answer": "500.000 đồng mỗi tháng."},
    {"question": "Phòng ký túc xá mấy người?", "answer": "Phòng 4 người."},
]


@pytest.fixture
async def llm(parts: AnswererParts, stub: OpenAIStub) -> AsyncIterator[LlmClient]:
    settings = parts.settings.llm.model_copy(
        update={"base_url": stub.base_url, "api_key": SecretStr("k"), "model": "m"}
    )
    client = LlmClient(settings, max_retries=0)
    try:
        yield client
    finally:
        await client.aclose()


def reply(body: dict[str, Any]) -> str:
    system, user = (m["content"] for m in body["messages"])
    if "question-answer pairs" in system:
        return json.dumps(PAIRS, ensure_ascii=False)
    return json.dumps([user.lower().rstrip("?")], ensure_ascii=False)


async def row_of(session: AsyncSession, source: str) -> SourceRow | None:
    return next((r for r in await list_sources(session) if r.source == source), None)


async def test_sources_count_flag_and_remove_what_was_generated(
    sessionmaker: async_sessionmaker[AsyncSession],
    session: AsyncSession,
    indexer: Indexer,
    llm: LlmClient,
    stub: OpenAIStub,
    tmp_path: Path,
) -> None:
    path = tmp_path / "ky-tuc-xa.md"
    path.write_text(DORM, encoding="utf-8")
    async with sessionmaker.begin() as s:
        document_id = (await index_document(s, indexer, load_file(path))).document_id
    for _ in range(3):
        stub.script_chat(reply)
    options = FaqDraftOptions(sources=(str(path),), paraphrases=3)
    report = await FaqDraftJob(sessionmaker, indexer, llm, options).run()
    assert report.drafts == 2
    async with sessionmaker.begin() as s:
        first = await s.scalar(select(FaqEntry).where(FaqEntry.question == PAIRS[0]["question"]))
        assert first is not None
        first.status = FaqStatus.published

    row = await row_of(session, str(path))
    assert row is not None
    assert (row.state, row.drafts, row.published, row.flagged, row.flagged_variants) == (
        "indexed",
        1,
        1,
        0,
        0,
    )
    assert row.to_json()["faq"] == {
        "drafts": 1,
        "published": 1,
        "flagged": 0,
        "flagged_variants": 0,
    }
    ids = list(
        (
            await session.scalars(
                select(FaqEntry.id).where(FaqEntry.source_document_id == document_id)
            )
        ).all()
    )
    assert len(ids) == 2
    generated_variants = await session.scalar(
        select(func.count())
        .select_from(FaqVariant)
        .where(FaqVariant.faq_id.in_(ids), FaqVariant.origin == VariantOrigin.generated)
    )
    assert generated_variants

    # The source changes: both entries and their generated phrasings wait for staff.
    path.write_text(DORM.replace("500.000", "550.000"), encoding="utf-8")
    async with sessionmaker.begin() as s:
        await index_document(s, indexer, load_file(path))
    session.expunge_all()
    row = await row_of(session, str(path))
    assert row is not None
    assert (row.drafts, row.published, row.flagged) == (1, 1, 2)
    assert row.flagged_variants == generated_variants
    entries = (await session.scalars(select(FaqEntry).where(FaqEntry.id.in_(ids)))).all()
    assert all(e.needs_review and e.source_chunk_id is None for e in entries)
    assert all("500.000" in str(e.source_text) for e in entries)

    # Removing the source removes what was generated from it, published or not.
    async with sessionmaker.begin() as s:
        assert await delete_document(s, str(path))
    session.expunge_all()
    assert await row_of(session, str(path)) is None
    assert (
        await session.scalar(select(func.count()).select_from(FaqEntry).where(FaqEntry.id.in_(ids)))
        == 0
    )
    assert (
        await session.scalar(
            select(func.count()).select_from(FaqVariant).where(FaqVariant.faq_id.in_(ids))
        )
        == 0
    )
