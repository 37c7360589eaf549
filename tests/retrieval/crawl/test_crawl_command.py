"""The crawl and ingest commands reading the small university site into the index."""

from __future__ import annotations

import asyncio
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.cli.commands.crawl import crawl_command
from bot.cli.commands.ingest import ingest_command as ingest
from bot.core.settings import Settings
from bot.db.models import Document
from tests.retrieval.crawl._support import Site


async def test_crawl_command_indexes_each_page_under_its_url(
    site: Site, engine: AsyncEngine, database_url: str, tmp_path: Path
) -> None:
    settings = site.settings(database_url, tmp_path)
    args = [site.url("/"), "--depth", "1", "--delay", "0", "--no-files"]

    # The command runs its own event loop: give it a thread, as a shell would a process.
    outcome = await asyncio.to_thread(
        CliRunner().invoke, crawl_command, args, obj=settings, catch_exceptions=False
    )
    sources = [site.url(p) for p in ("/", "/gioi-thieu", "/tuyen-sinh", "/hoc-phi", "/chuoi/1")]
    try:
        assert outcome.exit_code == 0, outcome.output
        assert "crawled 5 pages, 1 duplicates" in outcome.output
        async with engine.connect() as conn:
            rows = (
                await conn.execute(
                    select(Document.source, Document.title, Document.url).where(
                        Document.source.startswith(site.base)
                    )
                )
            ).all()
        assert sorted(source for source, _, _ in rows) == sorted(sources)
        assert all(url == source for source, _, url in rows)
    finally:
        async with engine.begin() as conn:
            await conn.execute(delete(Document).where(Document.source.startswith(site.base)))


async def test_ingest_takes_urls_beside_files_and_reads_one_page_each(
    site: Site, engine: AsyncEngine, database_url: str, tmp_path: Path
) -> None:
    settings = site.settings(database_url, tmp_path)
    note = tmp_path / "ghi-chu.md"
    note.write_text("# Ghi chú\n\nHạn nộp hồ sơ là ngày 30/6.\n", encoding="utf-8")
    args = [site.url("/tuyen-sinh"), str(note)]
    outcome = await asyncio.to_thread(
        CliRunner().invoke, ingest, args, obj=settings, catch_exceptions=False
    )
    try:
        assert outcome.exit_code == 0, outcome.output
        assert "indexed 1 documents" in outcome.output
        assert "crawled 1 pages" in outcome.output
        async with engine.connect() as conn:
            sources = set(
                (
                    await conn.execute(
                        select(Document.source).where(
                            Document.source.in_([site.url("/tuyen-sinh"), str(note)])
                            | Document.source.startswith(site.base)
                        )
                    )
                ).scalars()
            )
        assert sources == {site.url("/tuyen-sinh"), str(note)}  # depth 0: no linked page
    finally:
        async with engine.begin() as conn:
            await conn.execute(
                delete(Document).where(
                    Document.source.startswith(site.base) | (Document.source == str(note))
                )
            )


async def test_ingest_names_a_missing_file(database_url: str, tmp_path: Path) -> None:
    settings = Settings(_env_file=None, database_url=database_url, data_dir=tmp_path)
    outcome = await asyncio.to_thread(
        CliRunner().invoke, ingest, [str(tmp_path / "nope.pdf")], obj=settings
    )
    assert outcome.exit_code == 2
    assert "no such file or folder" in outcome.output
    assert "nope.pdf" in outcome.output
