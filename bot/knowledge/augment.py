"""URAG-D: documents made easier to find with an LLM (`tuvan augment`).

Per document, three kinds of call:

    context   title, headings and the opening → a short paragraph of general context
              (which programme, year, intake, who issued it), stored in ``Document.context``;
    chunk     each chunk rewritten with that context so that it stands on its own, a one-sentence
              summary in front → ``Chunk.augmented_text``, which is then what is embedded and
              keyword-indexed (behind the contextual header); ``Chunk.text`` stays the original
              that answers quote and cite;
    summary   the whole document summarised → ``DocumentSummary`` (mode "summary" ranks by it).

Facts must not be invented. Every number, date and code of a chunk must survive its rewrite, and
a rewrite, context or summary may write no number its source does not: a rewrite that fails this
is rejected and the chunk keeps its original text (behind the header, as before); a context or
summary that fails it is asked for again (``run_batch`` retries) and otherwise left out.

Calls run concurrently under ``TUVAN_LLM__CONCURRENCY`` and are retried (``bot.llm.batch``); each
result is committed as soon as it is stored, so a crash keeps what was done. A re-run skips the
chunks that have augmented text and the documents whose context and summary are of their
present version (re-ingesting a changed document drops both); ``force`` redoes everything.
No transaction is open while the LLM is called.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.core.errors import LlmError
from bot.core.settings import LlmSettings
from bot.db.models import Chunk, Document
from bot.llm.batch import BatchResult, Estimate, run_batch
from bot.llm.client import LlmClient, Message, load_prompt
from bot.llm.numbers import invented_numbers, missing_numbers
from retrieval.chunking.base import HEADING_SEPARATOR, ChunkDraft, approx_tokens
from retrieval.index.documents import chunk_search_text
from retrieval.index.indexer import Indexer
from retrieval.index.summaries import current_summaries, extractive_summary, store_summary

log = logging.getLogger(__name__)

CONTEXT_SAMPLE_TOKENS = 1500  # of the document's opening, for its context
SUMMARY_SAMPLE_TOKENS = 3000  # of the document, for its summary
MAX_HEADINGS = 40
# --dry-run: a context not written yet still goes into each chunk's prompt; count it as this.
_UNWRITTEN_CONTEXT = "ngữ cảnh " * 60
_FENCE = re.compile(r"^```[a-z]*\n|\n?```$")

Progress = Callable[[int], None]


# -- what is read from the store --------------------------------------------------------------


@dataclass(frozen=True)
class ChunkRow:
    id: int
    text: str
    heading_path: str
    page: int | None
    augmented: str | None


@dataclass
class DocumentRow:
    id: int
    source: str
    title: str
    content_hash: str
    context: str | None
    chunks: list[ChunkRow] = field(default_factory=list)
    summary: str | None = None  # the summary of this version, if any

    @property
    def headings(self) -> list[str]:
        seen: dict[str, None] = {}
        for c in self.chunks:
            if c.heading_path:
                seen.setdefault(c.heading_path, None)
        return list(seen)[:MAX_HEADINGS]

    def sample(self, tokens: int) -> str:
        """The document's text from the start, whole chunks up to ~``tokens``."""
        taken: list[str] = []
        budget = tokens
        for c in self.chunks:
            if budget <= 0:
                break
            taken.append(c.text)
            budget -= approx_tokens(c.text)
        return "\n\n".join(taken)

    @property
    def extractive(self) -> str:
        return extractive_summary(self.title, [(c.heading_path, c.text) for c in self.chunks])


def source_matches(source: str, wanted: Sequence[str]) -> bool:
    """``wanted`` empty (every source), or a source as `tuvan sources` lists it or its prefix."""
    return not wanted or any(source == w or source.startswith(w) for w in wanted)


async def load_documents(session: AsyncSession, sources: Sequence[str]) -> list[DocumentRow]:
    """The documents to augment, with their chunks in reading order and current summary."""
    rows = await session.execute(
        select(
            Document.id, Document.source, Document.title, Document.content_hash, Document.context
        ).order_by(Document.id)
    )
    docs = {
        r.id: DocumentRow(r.id, r.source, r.title, r.content_hash, r.context)
        for r in rows
        if source_matches(r.source, sources)
    }
    if not docs:
        return []
    chunks = await session.execute(
        select(
            Chunk.id,
            Chunk.document_id,
            Chunk.text,
            Chunk.heading_path,
            Chunk.page,
            Chunk.augmented_text,
        )
        .where(Chunk.document_id.in_(list(docs)))
        .order_by(Chunk.document_id, Chunk.ordinal)
    )
    for c in chunks:
        docs[c.document_id].chunks.append(
            ChunkRow(c.id, c.text, c.heading_path, c.page, c.augmented_text)
        )
    for doc_id, summary in (await current_summaries(session, list(docs))).items():
        docs[doc_id].summary = summary
    return [d for d in docs.values() if d.chunks]


# -- the job ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class AugmentOptions:
    force: bool = False  # redo what is already done
    summaries: bool = True
    sources: tuple[str, ...] = ()  # only these sources (or prefixes); empty: all
    dry_run: bool = False  # estimate the calls, change nothing


@dataclass
class AugmentReport:
    documents: int = 0  # matched, with chunks
    planned: int = 0  # LLM jobs to run (a retry is not a job)
    contexts: int = 0
    chunks: int = 0  # rewrites stored
    kept_original: int = 0  # rewrites rejected (a number lost or added): the original stays
    summaries: int = 0
    already_done: int = 0  # chunks skipped because they have augmented text
    calls: int = 0  # LLM calls made, retries included
    failed: list[tuple[str, str]] = field(default_factory=list)  # (what, why)
    estimate: Estimate = field(default_factory=Estimate)


@dataclass(frozen=True)
class _DocumentJob:
    kind: Literal["context", "summary"]
    doc: DocumentRow


@dataclass(frozen=True)
class _ChunkJob:
    doc: DocumentRow
    chunk: ChunkRow


@dataclass(frozen=True)
class _Rewrite:
    text: str  # what becomes augmented_text
    rejected: str | None = None  # why the LLM's rewrite was not used


def _describe(job: _DocumentJob | _ChunkJob) -> str:
    if isinstance(job, _ChunkJob):
        return f"rewrite of {job.doc.source} chunk {job.chunk.id}"
    return f"{job.kind} of {job.doc.source}"


class Augmenter:
    """Runs `tuvan augment` over a store; holds the prompts, the LLM and the indexer."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        indexer: Indexer,
        llm: LlmClient | None,
        settings: LlmSettings,
        *,
        base_delay: float = 1.0,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.indexer = indexer
        self.llm = llm
        self.settings = settings
        self.base_delay = base_delay
        self._prompts = {
            kind: load_prompt(settings, f"augment_{kind}")
            for kind in ("context", "summary", "chunk")
        }

    # -- prompts ------------------------------------------------------------------------------

    def document_messages(self, job: _DocumentJob) -> list[Message]:
        doc = job.doc
        head = f"Title: {doc.title}\nHeadings: {'; '.join(doc.headings) or '-'}\n\n"
        if job.kind == "context":
            user = f"{head}Beginning of the document:\n{doc.sample(CONTEXT_SAMPLE_TOKENS)}"
        else:
            user = f"{head}Document:\n{doc.sample(SUMMARY_SAMPLE_TOKENS)}"
        return [
            {"role": "system", "content": self._prompts[job.kind]},
            {"role": "user", "content": user},
        ]

    def chunk_messages(self, job: _ChunkJob, context: str | None = None) -> list[Message]:
        doc, chunk = job.doc, job.chunk
        user = (
            f"Document: {doc.title}\nContext: {context or doc.context or ''}\n"
            f"Section: {chunk.heading_path or '-'}\n\nPassage:\n{chunk.text}"
        )
        return [
            {"role": "system", "content": self._prompts["chunk"]},
            {"role": "user", "content": user},
        ]

    # -- one call -----------------------------------------------------------------------------

    async def _complete(self, messages: list[Message], what: str) -> str:
        if self.llm is None:
            raise LlmError("no LLM configured")
        reply = _FENCE.sub("", (await self.llm.complete(messages)).strip()).strip()
        if not reply:
            raise LlmError(f"empty reply for the {what}")
        return reply

    async def _write(self, job: _DocumentJob) -> str:
        """A context or summary; one that writes a number its document does not is an error,
        so run_batch asks again and, failing that, leaves it out."""
        reply = await self._complete(self.document_messages(job), job.kind)
        doc = job.doc
        tokens = CONTEXT_SAMPLE_TOKENS if job.kind == "context" else SUMMARY_SAMPLE_TOKENS
        invented = invented_numbers(reply, [doc.title, " ".join(doc.headings), doc.sample(tokens)])
        if invented:
            raise LlmError(f"the {job.kind} writes numbers the document does not: {invented}")
        return reply

    async def _rewrite(self, job: _ChunkJob) -> _Rewrite:
        """A chunk rewritten, or its original when the rewrite lost or added a number (asking
        again would cost calls and rarely fixes it; the chunk still has its header)."""
        doc, chunk = job.doc, job.chunk
        reply = await self._complete(self.chunk_messages(job), "rewrite")
        lost = missing_numbers(chunk.text, reply)
        added = invented_numbers(
            reply, [chunk.text, doc.context or "", doc.title, chunk.heading_path]
        )
        why = None
        if lost:
            why = f"it drops {lost}"
        elif added:
            why = f"it adds {added}"
        elif len(reply) > 4 * len(chunk.text) + 1000:
            why = "it is far longer than the chunk"
        if why is not None:
            log.warning(
                "rewrite of chunk %d (%s) rejected, the original is kept: %s",
                chunk.id,
                doc.source,
                why,
            )
            return _Rewrite(chunk.text, rejected=why)
        return _Rewrite(reply)

    # -- storing ------------------------------------------------------------------------------

    async def _store_written(self, job: _DocumentJob, value: str, report: AugmentReport) -> None:
        doc = job.doc
        async with self.sessionmaker.begin() as session:
            if job.kind == "summary":
                await store_summary(
                    session, self.indexer, doc.id, doc.title, doc.content_hash, value
                )
                report.summaries += 1
                return
            # Only onto the version it was written for (a re-ingest may have come meanwhile).
            changed = await session.scalar(
                update(Document)
                .where(Document.id == doc.id, Document.content_hash == doc.content_hash)
                .values(context=value)
                .returning(Document.id)
            )
            if changed is not None:
                doc.context = value
                report.contexts += 1

    async def _store_rewrite(self, job: _ChunkJob, value: _Rewrite, report: AugmentReport) -> None:
        doc, chunk = job.doc, job.chunk
        async with self.sessionmaker.begin() as session:
            row = await session.get(Chunk, chunk.id)
            if row is None:  # the document was re-ingested meanwhile: its chunks are new
                return
            path = tuple(p for p in chunk.heading_path.split(HEADING_SEPARATOR) if p)
            draft = ChunkDraft(
                ordinal=0, text=chunk.text, heading_path=path, page=chunk.page, token_count=0
            )
            search_text = chunk_search_text(
                doc.title, draft, header=self.indexer.context_header, augmented=value.text
            )
            [vector] = await self.indexer.passages([search_text])
            row.augmented_text = value.text
            row.keyword_text = self.indexer.processor.keyword_text(search_text)
            row.embedding = vector
        report.chunks += 1
        report.kept_original += value.rejected is not None

    # -- the run ------------------------------------------------------------------------------

    async def run(
        self,
        options: AugmentOptions,
        *,
        on_plan: Progress | None = None,
        on_progress: Progress | None = None,
    ) -> AugmentReport:
        """Augment the matching documents; ``on_plan(n)`` learns how many jobs there are."""
        async with self.sessionmaker() as session:
            docs = await load_documents(session, options.sources)
        report = AugmentReport(documents=len(docs))
        written = [_DocumentJob("context", d) for d in docs if options.force or not d.context]
        if options.summaries:
            written += [
                _DocumentJob("summary", d)
                for d in docs
                if options.force or d.summary is None or d.summary == d.extractive
            ]
        rewrites = [
            _ChunkJob(d, c) for d in docs for c in d.chunks if options.force or c.augmented is None
        ]
        report.already_done = sum(len(d.chunks) for d in docs) - len(rewrites)
        report.planned = len(written) + len(rewrites)
        if on_plan is not None:
            on_plan(report.planned)
        if options.dry_run:
            for job in written:
                report.estimate.add(self.document_messages(job), self.settings.max_tokens)
            for chunk_job in rewrites:
                unwritten = options.force or not chunk_job.doc.context
                messages = self.chunk_messages(chunk_job, _UNWRITTEN_CONTEXT if unwritten else None)
                report.estimate.add(messages, self.settings.max_tokens)
            return report
        if self.llm is None:
            raise LlmError("tuvan augment needs an LLM: set TUVAN_LLM__BASE_URL")

        async def store_written(job: _DocumentJob, value: str) -> None:
            await self._store_written(job, value, report)

        async def store_rewrite(job: _ChunkJob, value: _Rewrite) -> None:
            await self._store_rewrite(job, value, report)

        first = await run_batch(written, self._write, **self._batch(store_written, on_progress))
        self._collect(first, report)
        # A chunk is rewritten with its document's context: without one it waits for a re-run.
        ready = [j for j in rewrites if j.doc.context]
        for doc in {j.doc.id: j.doc for j in rewrites if not j.doc.context}.values():
            report.failed.append((f"rewrites of {doc.source}", "no context yet: run again"))
            if on_progress is not None:
                on_progress(sum(j.doc is doc for j in rewrites))
        second = await run_batch(ready, self._rewrite, **self._batch(store_rewrite, on_progress))
        self._collect(second, report)
        return report

    def _batch(self, on_done: Any, on_progress: Progress | None) -> dict[str, Any]:
        return {
            "concurrency": self.settings.concurrency,
            "attempts": self.settings.attempts,
            "base_delay": self.base_delay,
            "on_done": on_done,
            "on_progress": on_progress,
        }

    @staticmethod
    def _collect(result: BatchResult[Any, Any], report: AugmentReport) -> None:
        report.calls += result.calls
        report.failed += [(_describe(job), why) for job, why in result.failed]


async def write_extractive_summaries(
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    options: AugmentOptions,
    on_progress: Progress | None = None,
) -> AugmentReport:
    """Summaries without an LLM: each document's title, opening lines and headings.

    A baseline for the summary-first mode, not URAG-D: it says only what the document's start
    and headings say. An LLM summary is kept unless ``force``; `tuvan augment` with an LLM
    replaces these. One transaction per document.
    """
    async with sessionmaker() as session:
        docs = await load_documents(session, options.sources)
    report = AugmentReport(documents=len(docs))
    todo = [d for d in docs if options.force or d.summary is None]
    report.planned = len(todo)
    if options.dry_run:
        return report
    for doc in todo:
        async with sessionmaker.begin() as session:
            await store_summary(
                session, indexer, doc.id, doc.title, doc.content_hash, doc.extractive
            )
        report.summaries += 1
        if on_progress is not None:
            on_progress(1)
    return report
