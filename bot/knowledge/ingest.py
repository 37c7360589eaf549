"""Ingesting files: load, chunk, embed, store. A broken file is logged and skipped."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.core.errors import IngestError
from retrieval.index.documents import index_document
from retrieval.index.indexer import Indexer
from retrieval.loading import SUPPORTED_SUFFIXES, load_file
from retrieval.loading.document import LoadedDocument

log = logging.getLogger(__name__)


@dataclass
class IngestReport:
    indexed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (source, reason)
    chunks: int = 0


def expand_paths(paths: Iterable[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                hidden = any(part.startswith(".") for part in child.relative_to(path).parts)
                if child.is_file() and not hidden and child.suffix.lower() in SUPPORTED_SUFFIXES:
                    yield child
        else:
            yield path


async def ingest_paths(
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    paths: Iterable[Path],
    *,
    on_file: Callable[[Path], None] | None = None,
    on_loaded: Callable[[LoadedDocument], None] | None = None,
    on_chunks: Callable[[int], None] | None = None,
    on_done: Callable[[Path], None] | None = None,
) -> IngestReport:
    """Each file in its own transaction, so one failure loses nothing else."""
    report = IngestReport()
    for path in expand_paths(paths):
        if on_file:
            on_file(path)
        try:
            doc: LoadedDocument = load_file(path)
        except IngestError as exc:
            log.warning("skipped %s: %s", path, exc)
            report.skipped.append((str(path), str(exc)))
            if on_done:
                on_done(path)
            continue
        if on_loaded:
            on_loaded(doc)
        async with sessionmaker.begin() as session:
            result = await index_document(session, indexer, doc, progress=on_chunks)
        if result.unchanged:
            report.unchanged.append(doc.source)
        else:
            report.indexed.append(doc.source)
            report.chunks += result.chunks
        if on_done:
            on_done(path)
    return report
