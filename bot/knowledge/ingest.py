"""Ingestion, the one use-case that puts documents into the knowledge base: files and folders
(`tuvan ingest`, the demo, the evaluation), single URLs and crawled sites (`tuvan ingest URL`,
`tuvan crawl`) and the admin's uploads and re-ingests.

Every way in ends in the same two steps: ``load_document`` reads a file in a thread (PDF parsing
and OCR are CPU-bound), and ``store_document`` chunks, embeds and stores one document in a
transaction of its own, so one failure loses nothing else and an interrupted run keeps what it
stored. A caller that must write beside the document in that same transaction (the admin's
audit log) passes ``StoreHooks``. A document whose text has not changed is left alone.

How much of a PDF is read is the ``ingest`` settings' (``pdf_options``). In ``serve`` the
admin's ingestions pass the process's ``IngestGate`` (``ingest_file(gate=...)``), one at a time
by default, and load their file in a child process of its own (``load_document(in_child=True)``):
a thread is not enough, since MuPDF holds the GIL while it renders a page (1.1 s for a 25 Mpx
page; 9.4 s for a 7,000 pt page at 300 DPI, when no other thread of `serve` ran), and the
child's memory goes back to the system when it ends. A child that dies (killed for memory, a
crash in MuPDF) fails that one file.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import multiprocessing
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path, PurePosixPath
from typing import Protocol
from urllib.parse import unquote, urlsplit

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.core.errors import IngestError
from bot.core.settings import IngestSettings
from bot.knowledge.gate import IngestGate
from bot.knowledge.jobs import Progress, ProgressBars, no_progress
from retrieval.crawl.crawler import CrawlResult, crawl
from retrieval.crawl.fetch import Fetcher, FetchPolicy
from retrieval.index.documents import IndexResult, index_document
from retrieval.index.indexer import Indexer
from retrieval.index.reindex import count_embeddable, reindex
from retrieval.loading import SUPPORTED_SUFFIXES, load_file
from retrieval.loading.document import LoadedDocument
from retrieval.loading.ocr import OcrOptions
from retrieval.loading.pdf import PdfOptions

log = logging.getLogger(__name__)

Sessions = async_sessionmaker[AsyncSession]


class StoreHooks(Protocol):
    """What a caller does inside a document's transaction, around storing it."""

    async def before(self, session: AsyncSession, source: str) -> None: ...

    async def after(
        self, session: AsyncSession, doc: LoadedDocument, result: IndexResult
    ) -> None: ...


@dataclasses.dataclass
class IngestReport:
    indexed: list[str] = dataclasses.field(default_factory=list)
    unchanged: list[str] = dataclasses.field(default_factory=list)
    skipped: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (source, reason)
    chunks: int = 0

    def count(self, source: str, result: IndexResult) -> None:
        if result.unchanged:
            self.unchanged.append(source)
        else:
            self.indexed.append(source)
            self.chunks += result.chunks


# -- the two steps ----------------------------------------------------------------------------


def pdf_options(settings: IngestSettings) -> PdfOptions:
    """How much of a PDF the ``ingest`` settings let an ingestion read."""
    ocr = OcrOptions(max_pixels=settings.max_page_pixels, budget_s=settings.ocr_budget_s)
    return PdfOptions(max_pages=settings.max_pdf_pages, ocr=ocr)


async def load_document(
    path: Path, pdf: PdfOptions | None = None, *, in_child: bool = False
) -> LoadedDocument:
    """One file read in a thread, or ``in_child`` in a child process of its own (a PDF as
    ``pdf`` says, the defaults if None); `IngestError` names the file and why it can't be used."""
    if not in_child:
        return await asyncio.to_thread(load_file, path, pdf)
    # spawn, not fork: a fork of a process running threads (the embedder's, the loop's
    # executor) may inherit a lock held by one of them.
    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    try:
        return await asyncio.get_running_loop().run_in_executor(pool, load_file, path, pdf)
    except BrokenProcessPool as exc:
        raise IngestError(f"{path.name}: the process reading it died ({exc})") from exc
    finally:
        await asyncio.to_thread(pool.shutdown, True, cancel_futures=True)


async def store_document(
    sessionmaker: Sessions,
    indexer: Indexer,
    doc: LoadedDocument,
    *,
    progress: Progress | None = None,
    hooks: StoreHooks | None = None,
) -> IndexResult:
    """Chunk, embed and store ``doc`` in a transaction of its own."""
    async with sessionmaker.begin() as session:
        return await _store_in(session, indexer, doc, progress, hooks)


async def _store_in(
    session: AsyncSession,
    indexer: Indexer,
    doc: LoadedDocument,
    progress: Progress | None,
    hooks: StoreHooks | None,
) -> IndexResult:
    if hooks is not None:
        await hooks.before(session, doc.source)
    result = await index_document(session, indexer, doc, progress=progress)
    if hooks is not None:
        await hooks.after(session, doc, result)
    return result


# -- files and folders ------------------------------------------------------------------------


def expand_paths(paths: Iterable[Path]) -> Iterator[Path]:
    """The files named, and the readable files under the folders named (hidden ones skipped)."""
    for path in paths:
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                hidden = any(part.startswith(".") for part in child.relative_to(path).parts)
                if child.is_file() and not hidden and child.suffix.lower() in SUPPORTED_SUFFIXES:
                    yield child
        else:
            yield path


def unsupported_by_type(paths: Iterable[Path]) -> dict[str, int]:
    """How many files under the folders named ``expand_paths`` leaves out for their type, by
    suffix (``"(none)"`` for a file without one), most first: what a newcomer expected indexed."""
    counts: Counter[str] = Counter()
    for path in paths:
        if not path.is_dir():
            continue
        for child in path.rglob("*"):
            hidden = any(part.startswith(".") for part in child.relative_to(path).parts)
            suffix = child.suffix.lower()
            if child.is_file() and not hidden and suffix not in SUPPORTED_SUFFIXES:
                counts[suffix or "(none)"] += 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


async def ingest_paths(
    sessionmaker: Sessions,
    indexer: Indexer,
    paths: Iterable[Path],
    *,
    on_file: Callable[[Path], None] | None = None,
    on_loaded: Callable[[LoadedDocument], None] | None = None,
    on_chunks: Progress | None = None,
    on_done: Callable[[Path], None] | None = None,
    pdf: PdfOptions | None = None,
) -> IngestReport:
    """Each file in its own transaction; a file that cannot be read is logged and skipped."""
    report = IngestReport()
    for path in expand_paths(paths):
        if on_file:
            on_file(path)
        try:
            doc = await load_document(path, pdf)
        except IngestError as exc:
            log.warning("skipped %s: %s", path, exc)
            report.skipped.append((str(path), str(exc)))
        else:
            if on_loaded:
                on_loaded(doc)
            report.count(
                doc.source, await store_document(sessionmaker, indexer, doc, progress=on_chunks)
            )
        if on_done:
            on_done(path)
    return report


async def ingest_file(
    sessionmaker: Sessions,
    indexer: Indexer,
    target: Path,
    *,
    staged: Path | None = None,
    hooks: StoreHooks | None = None,
    pdf: PdfOptions | None = None,
    gate: IngestGate | None = None,
) -> IndexResult:
    """Store the file at ``target`` under that name; an upload is read from ``staged`` instead
    and moved to ``target`` inside the transaction that stores it, so a file that fails to
    load or index changes nothing, not even a file already there. ``staged``'s folder (one of
    its own) is removed either way. With a ``gate`` (in ``serve``), loading and storing wait for
    a slot, and the file is loaded in a child process."""
    try:
        if gate is None:
            return await _ingest_file(sessionmaker, indexer, target, staged, hooks, pdf, False)
        async with gate.slot():
            return await _ingest_file(sessionmaker, indexer, target, staged, hooks, pdf, True)
    finally:
        if staged is not None:
            await asyncio.to_thread(shutil.rmtree, staged.parent, True)


async def _ingest_file(
    sessionmaker: Sessions,
    indexer: Indexer,
    target: Path,
    staged: Path | None,
    hooks: StoreHooks | None,
    pdf: PdfOptions | None,
    in_child: bool,
) -> IndexResult:
    loaded = await load_document(staged or target, pdf, in_child=in_child)
    doc = dataclasses.replace(loaded, source=str(target))
    async with sessionmaker.begin() as session:
        result = await _store_in(session, indexer, doc, None, hooks)
        if staged is not None:
            await asyncio.to_thread(os.replace, staged, target)
    return result


# -- URLs and sites ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CrawlOptions:
    depth: int = 2
    max_pages: int = 500
    delay_s: float = 1.0
    concurrency: int = 2
    allow_domains: tuple[str, ...] = ()
    files: bool = True  # download and index the PDFs and DOCX files the pages link to
    pdf: PdfOptions = dataclasses.field(default_factory=PdfOptions)  # how much of each is read
    # Addresses allowed and size caps (from IngestSettings); the default: public addresses only.
    fetch: FetchPolicy = dataclasses.field(default_factory=FetchPolicy)


@dataclasses.dataclass
class CrawlReport:
    crawl: CrawlResult
    stored: IngestReport

    @property
    def skipped(self) -> list[tuple[str, str]]:
        """Pages the crawler could not use, then files that failed to download or load."""
        return [*self.crawl.skipped, *self.stored.skipped]


async def crawl_and_index(
    sessionmaker: Sessions,
    indexer: Indexer,
    urls: Sequence[str],
    options: CrawlOptions,
    bars: ProgressBars = no_progress,
) -> CrawlReport:
    """Crawl from ``urls`` (same site, robots.txt honoured), storing every page as it arrives,
    then download and store the files the pages link to, one by one (politely)."""
    stored = IngestReport()
    pages = bars("pages", options.max_pages)
    chunks = bars("chunks", None)

    async def on_page(doc: LoadedDocument) -> None:
        pages(1)
        result = await store_document(sessionmaker, indexer, doc, progress=chunks)
        stored.count(doc.source, result)

    async with Fetcher(options.fetch) as fetcher:
        result = await crawl(
            urls,
            fetcher=fetcher,
            allow_domains=options.allow_domains or None,
            max_depth=options.depth,
            max_pages=options.max_pages,
            delay_s=options.delay_s,
            concurrency=options.concurrency,
            on_page=on_page,
        )
        if options.files and result.files:
            await _ingest_linked_files(
                sessionmaker, indexer, fetcher, result.files, options, stored, bars
            )
    return CrawlReport(result, stored)


async def _ingest_linked_files(
    sessionmaker: Sessions,
    indexer: Indexer,
    fetcher: Fetcher,
    urls: Sequence[str],
    options: CrawlOptions,
    stored: IngestReport,
    bars: ProgressBars,
) -> None:
    """Download the linked files one by one (politely) and store them under their URLs; a
    download refused, too large or failed (a FetchError) is logged and skipped."""
    chunks = bars("files", None)
    with tempfile.TemporaryDirectory(prefix="tuvan-crawl-") as folder:
        for number, url in enumerate(urls):
            if number:
                await asyncio.sleep(options.delay_s)
            try:
                path = await _download(fetcher, url, Path(folder), number)
                loaded = await load_document(path, options.pdf)
            except IngestError as exc:
                log.warning("crawl: file %s: %s", url, exc)
                stored.skipped.append((url, str(exc) or type(exc).__name__))
                continue
            doc = dataclasses.replace(loaded, source=url, url=url)
            stored.count(url, await store_document(sessionmaker, indexer, doc, progress=chunks))


async def _download(fetcher: Fetcher, url: str, folder: Path, number: int) -> Path:
    """The file at `url` in `folder`, under its own name (the loaders go by the suffix)."""
    name = PurePosixPath(unquote(urlsplit(url).path)).name or "file.pdf"
    target = folder / f"{number}-{name}"
    body = await fetcher.get_file(url)
    await asyncio.to_thread(target.write_bytes, body)
    return target


# -- a new embedder ---------------------------------------------------------------------------


async def reindex_all(
    sessionmaker: Sessions, indexer: Indexer, bars: ProgressBars = no_progress
) -> int:
    """Re-embed every FAQ entry, variant and chunk with ``indexer``'s embedder, in one
    transaction (the vectors of one model are never mixed with another's); how many texts."""
    async with sessionmaker.begin() as session:
        total = await count_embeddable(session)
        return await reindex(session, indexer, progress=bars("re-embedding", total))
