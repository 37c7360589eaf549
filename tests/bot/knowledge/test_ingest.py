"""The one ingestion: files stored each in a transaction of its own, unreadable ones skipped,
an upload moved into place only once stored, and hooks run inside the document's transaction."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.core.errors import IngestError
from bot.db.models import Document
from bot.knowledge.ingest import ingest_file, ingest_paths
from retrieval.index.documents import IndexResult
from retrieval.index.indexer import Indexer
from retrieval.loading.document import LoadedDocument

DORM = "# Ký túc xá\n\nKý túc xá có 800 chỗ ở, giá 400.000 đồng mỗi tháng.\n"


class Recorder:
    """Hooks that note what they saw, and whether the document was visible from inside."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, bool]] = []

    async def before(self, session: AsyncSession, source: str) -> None:
        stored = await session.scalar(select(Document.id).where(Document.source == source))
        self.seen.append(("before", source, stored is not None))

    async def after(self, session: AsyncSession, doc: LoadedDocument, result: IndexResult) -> None:
        stored = await session.get(Document, result.document_id)
        self.seen.append(("after", doc.source, stored is not None))


async def documents(session: AsyncSession, folder: Path) -> int:
    count = await session.scalar(
        select(func.count()).select_from(Document).where(Document.source.startswith(str(folder)))
    )
    return int(count or 0)


async def test_a_folder_is_stored_file_by_file_and_a_broken_file_is_skipped(
    sessionmaker: async_sessionmaker[AsyncSession],
    session: AsyncSession,
    indexer: Indexer,
    tmp_path: Path,
) -> None:
    (tmp_path / "ky-tuc-xa.md").write_text(DORM, encoding="utf-8")
    (tmp_path / "hong.pdf").write_bytes(b"not a pdf")
    (tmp_path / ".an").mkdir()
    (tmp_path / ".an" / "an.md").write_text(DORM, encoding="utf-8")
    report = await ingest_paths(sessionmaker, indexer, [tmp_path])
    assert report.indexed == [str(tmp_path / "ky-tuc-xa.md")]
    assert [source for source, _ in report.skipped] == [str(tmp_path / "hong.pdf")]
    assert report.chunks >= 1
    assert await documents(session, tmp_path) == 1
    again = await ingest_paths(sessionmaker, indexer, [tmp_path / "ky-tuc-xa.md"])
    assert again.unchanged == [str(tmp_path / "ky-tuc-xa.md")]


async def test_an_upload_is_moved_into_place_only_once_stored(
    sessionmaker: async_sessionmaker[AsyncSession],
    session: AsyncSession,
    indexer: Indexer,
    tmp_path: Path,
) -> None:
    staged = tmp_path / "incoming" / "x1" / "ky-tuc-xa.md"
    staged.parent.mkdir(parents=True)
    staged.write_text(DORM, encoding="utf-8")
    target = tmp_path / "uploads" / "ky-tuc-xa.md"
    target.parent.mkdir()
    hooks = Recorder()
    result = await ingest_file(sessionmaker, indexer, target, staged=staged, hooks=hooks)
    assert not result.unchanged
    assert target.read_text(encoding="utf-8") == DORM
    assert not staged.parent.exists()
    assert hooks.seen == [("before", str(target), False), ("after", str(target), True)]

    broken = tmp_path / "incoming" / "x2" / "ky-tuc-xa.md"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"  \n")  # an empty file
    with pytest.raises(IngestError):
        await ingest_file(sessionmaker, indexer, target, staged=broken, hooks=Recorder())
    assert target.read_text(encoding="utf-8") == DORM  # the stored file stays as it was
    assert not broken.parent.exists()
    assert await documents(session, tmp_path / "uploads") == 1
