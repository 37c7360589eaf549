"""Uploaded files and their ingestion, for the Documents page.

An upload is written under ``<data_dir>/uploads/.incoming/<random>/<name>`` first and ingested
from there by ``bot.knowledge.ingest`` (the one ingestion of the CLI and the admin); only when
it loads and indexes is it moved to ``<data_dir>/uploads/<name>``, inside the transaction that
stores its chunks. A broken file so changes nothing: not the store, not a file already there
under that name. The same name uploaded again replaces that document (its generated FAQ entries
are flagged for review, as with `tuvan ingest`). Every outcome, failures included, is written to
the audit log, which the page shows as recent activity. Ingestions take turns through the
process's ``IngestGate`` (``Runtime.ingest_gate``, one at a time by default), so uploads never
take the cores ``serve`` answers webhooks with.
"""

from __future__ import annotations

import logging
import re
import secrets
import shutil
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from admin import audit
from bot.core.errors import IngestError
from bot.db.models import Chunk, Document
from bot.knowledge import ingest
from bot.runtime import Runtime
from retrieval.index.documents import IndexResult
from retrieval.loading import SUPPORTED_SUFFIXES
from retrieval.loading.document import LoadedDocument

log = logging.getLogger(__name__)

UPLOADS = "uploads"
INCOMING = ".incoming"  # hidden: `tuvan ingest <data_dir>/uploads` skips it
MAX_NAME = 120


def uploads_dir(rt: Runtime) -> Path:
    return rt.settings.data_dir / UPLOADS


def safe_name(filename: str) -> str | None:
    """A file name safe to store: the last path part, letters (any script), digits, ``-``,
    ``_`` and ``.`` only, no leading dot, a supported suffix in lower case; None if the type is
    not one tuvan reads."""
    name = unicodedata.normalize("NFC", filename.replace("\\", "/").rsplit("/", 1)[-1])
    stem, dot, suffix = name.rpartition(".")
    suffix = f".{suffix.lower()}"
    if not dot or suffix not in SUPPORTED_SUFFIXES:
        return None
    stem = re.sub(r"[^\w.-]+", "_", stem).strip("._-")
    stem = re.sub(r"_{2,}", "_", stem)[: MAX_NAME - len(suffix)] or "document"
    return stem + suffix


def is_upload(rt: Runtime, source: str) -> bool:
    """Whether ``source`` is a file of the uploads folder (ours to delete with the document)."""
    try:
        path = Path(source).resolve()
    except (OSError, ValueError):
        return False
    return path.parent == uploads_dir(rt).resolve()


def stage(rt: Runtime, name: str, data: IO[bytes]) -> Path:
    """Copy an uploaded file to a fresh folder of its own under ``.incoming`` (blocking)."""
    folder = uploads_dir(rt) / INCOMING / secrets.token_hex(8)
    folder.mkdir(parents=True)
    staged = folder / name
    data.seek(0)
    with staged.open("wb") as out:
        shutil.copyfileobj(data, out)
    return staged


@dataclass(frozen=True)
class IngestOutcome:
    status: str  # indexed, unchanged, failed
    source: str
    chunks: int = 0
    error: str = ""


async def _snapshot(session: AsyncSession, source: str) -> tuple[int | None, dict[str, Any] | None]:
    found = await session.scalar(select(Document).where(Document.source == source))
    if found is None:
        return None, None
    chunks = await session.scalar(
        select(func.count()).select_from(Chunk).where(Chunk.document_id == found.id)
    )
    return found.id, {
        "source": found.source,
        "title": found.title,
        "content_hash": found.content_hash,
        "chunks": int(chunks or 0),
    }


async def _record_failure(rt: Runtime, actor: str, action: str, source: str, error: str) -> None:
    async with rt.sessionmaker.begin() as session:
        document_id, before = await _snapshot(session, source)
        after = {"source": source, "error": error}
        await audit.record(
            session, actor, f"{action}_failed", "document", document_id, before, after
        )


class _Audited:
    """The audit entry of a stored document, written in the transaction that stores it: what
    the document was before, what it is after (none when nothing changed)."""

    def __init__(self, actor: str, action: str) -> None:
        self.actor = actor
        self.action = action
        self.snapshot: dict[str, Any] | None = None

    async def before(self, session: AsyncSession, source: str) -> None:
        _, self.snapshot = await _snapshot(session, source)

    async def after(self, session: AsyncSession, doc: LoadedDocument, result: IndexResult) -> None:
        if result.unchanged:
            return
        after = {
            "source": doc.source,
            "title": doc.title,
            "content_hash": doc.content_hash,
            "chunks": result.chunks,
        }
        await audit.record(
            session, self.actor, self.action, "document", result.document_id, self.snapshot, after
        )


async def ingest_file(
    rt: Runtime, target: Path, actor: str, action: str, *, staged: Path | None = None
) -> IngestOutcome:
    """Load and index ``target`` (or ``staged``, moved to ``target`` once stored); audited.

    A task boundary: whatever goes wrong becomes a failed outcome (and a log entry), never an
    exception, since the request that started it may already have answered."""
    source = str(target)
    hooks = _Audited(actor, action)
    try:
        try:
            result = await ingest.ingest_file(
                rt.sessionmaker,
                rt.indexer,
                target,
                staged=staged,
                hooks=hooks,
                pdf=ingest.pdf_options(rt.settings.ingest),
                gate=rt.ingest_gate,
            )
        except IngestError as exc:
            await _record_failure(rt, actor, action, source, str(exc))
            return IngestOutcome("failed", source, error=str(exc))
        return IngestOutcome("unchanged" if result.unchanged else "indexed", source, result.chunks)
    except Exception as exc:  # the task's edge: logged, reported, nothing half-stored
        log.exception("admin: ingesting %s failed", source)
        error = f"{type(exc).__name__}: {exc}"
        try:
            await _record_failure(rt, actor, action, source, error)
        except Exception:
            log.exception("admin: recording the failure to ingest %s failed", source)
        return IngestOutcome("failed", source, error=error)
