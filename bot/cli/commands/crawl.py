"""``tuvan crawl URL...``: crawl a web site and index its pages (and the PDFs it links to).

Each page is indexed in its own transaction as it arrives, so an interrupted crawl keeps what it
indexed, and a page whose main text has not changed since the last crawl is left alone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import tempfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

import aiohttp
import click

from bot.cli.common import pass_settings, progress, with_runtime
from bot.core.errors import IngestError
from bot.core.settings import Settings
from bot.runtime import Runtime
from retrieval.crawl.crawler import CrawlResult, crawl
from retrieval.index.documents import index_document
from retrieval.loading import load_file
from retrieval.loading.document import LoadedDocument

log = logging.getLogger(__name__)

USER_AGENT = "tuvan-crawler"
_TIMEOUT = aiohttp.ClientTimeout(total=60, sock_connect=15)
_MAX_FILE_BYTES = 50_000_000


@dataclasses.dataclass
class _Tally:
    indexed: int = 0
    unchanged: int = 0
    chunks: int = 0
    failed: list[tuple[str, str]] = dataclasses.field(default_factory=list)


async def _index(rt: Runtime, doc: LoadedDocument, tally: _Tally, chunks_bar: Any) -> None:
    async with rt.sessionmaker.begin() as session:
        result = await index_document(session, rt.indexer, doc, progress=chunks_bar.update)
    if result.unchanged:
        tally.unchanged += 1
    else:
        tally.indexed += 1
        tally.chunks += result.chunks


async def _download(http: aiohttp.ClientSession, url: str, folder: Path, number: int) -> Path:
    """The file at `url` in `folder`, under its own name (the loaders go by the suffix)."""
    name = PurePosixPath(unquote(urlsplit(url).path)).name or "file.pdf"
    target = folder / f"{number}-{name}"
    async with http.get(url, headers={"User-Agent": USER_AGENT}) as response:
        response.raise_for_status()
        body = await response.content.read(_MAX_FILE_BYTES + 1)
    if len(body) > _MAX_FILE_BYTES:
        raise IngestError(f"{url}: larger than {_MAX_FILE_BYTES // 1_000_000} MB")
    await asyncio.to_thread(target.write_bytes, body)
    return target


async def _index_files(
    rt: Runtime, http: aiohttp.ClientSession, result: CrawlResult, delay_s: float, tally: _Tally
) -> None:
    """Download the linked PDFs one by one (politely) and index them under their URLs."""
    if not result.files:
        return
    bar = progress(None, "files", "chunk")
    with tempfile.TemporaryDirectory(prefix="tuvan-crawl-") as folder:
        for number, url in enumerate(result.files):
            if number:
                await asyncio.sleep(delay_s)
            try:
                path = await _download(http, url, Path(folder), number)
                doc = await asyncio.to_thread(load_file, path)
            except (aiohttp.ClientError, TimeoutError, IngestError) as exc:
                log.warning("crawl: file %s: %s", url, exc)
                tally.failed.append((url, str(exc) or type(exc).__name__))
                continue
            await _index(rt, dataclasses.replace(doc, source=url, url=url), tally, bar)
    bar.close()


@dataclasses.dataclass(frozen=True)
class CrawlOptions:
    depth: int = 2
    max_pages: int = 500
    delay_s: float = 1.0
    concurrency: int = 2
    allow_domains: tuple[str, ...] = ()
    files: bool = True  # download and index the PDFs the pages link to


async def crawl_and_index(rt: Runtime, urls: Sequence[str], options: CrawlOptions) -> None:
    """Crawl from ``urls``, index every page as it arrives, then the linked files; report."""
    tally = _Tally()
    pages_bar = progress(options.max_pages, "pages", "page")
    chunks_bar = progress(None, "chunks", "chunk")

    async def on_page(doc: LoadedDocument) -> None:
        pages_bar.update(1)
        pages_bar.set_postfix_str(doc.source[-40:])
        await _index(rt, doc, tally, chunks_bar)

    async with aiohttp.ClientSession(timeout=_TIMEOUT) as http:
        result = await crawl(
            urls,
            http=http,
            allow_domains=options.allow_domains or None,
            max_depth=options.depth,
            max_pages=options.max_pages,
            delay_s=options.delay_s,
            concurrency=options.concurrency,
            user_agent=USER_AGENT,
            on_page=on_page,
        )
        pages_bar.close()
        chunks_bar.close()
        if options.files:
            await _index_files(rt, http, result, options.delay_s, tally)
    click.echo(
        f"crawled {len(result.pages)} pages, {len(result.duplicates)} duplicates, "
        f"{len(result.files)} files; indexed {tally.indexed} documents ({tally.chunks} "
        f"chunks), {tally.unchanged} unchanged, "
        f"{len(result.skipped) + len(tally.failed)} skipped"
    )
    for url, reason in [*result.skipped, *tally.failed]:
        click.echo(f"  skipped {url}: {reason}", err=True)


@click.command("crawl")
@click.argument("urls", nargs=-1, required=True)
@click.option(
    "--depth", default=2, show_default=True, type=click.IntRange(min=0), help="Link hops from URL."
)
@click.option("--max-pages", default=500, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--delay",
    default=1.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Seconds between requests to one host.",
)
@click.option("--concurrency", default=2, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--allow-domain",
    "allow_domains",
    multiple=True,
    help="Also follow links to this domain (repeatable).",
)
@click.option("--no-files", is_flag=True, help="Do not download and index the PDFs linked.")
@pass_settings
def crawl_command(
    settings: Settings,
    urls: tuple[str, ...],
    depth: int,
    max_pages: int,
    delay: float,
    concurrency: int,
    allow_domains: tuple[str, ...],
    no_files: bool,
) -> None:
    """Crawl the web site at URL (same domain, robots.txt honoured) and index its pages."""
    options = CrawlOptions(depth, max_pages, delay, concurrency, allow_domains, not no_files)

    async def body(rt: Runtime) -> None:
        await crawl_and_index(rt, urls, options)

    with_runtime(settings, body)
