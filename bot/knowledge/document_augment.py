"""URAG-D, offline: documents made easier to find with an LLM (`tuvan augment`). What it makes
is augmented documents: a context per document, chunks rewritten to stand on their own, and
document summaries; hence ``document_augment`` (the online answer writer is
``bot.answer.llm_answer``).

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

Without an LLM, ``ExtractiveSummaryJob`` (``extractive_summaries``) writes the summaries alone.

Calls run concurrently under ``TUVAN_LLM__CONCURRENCY`` and are retried (``bot.llm.batch``); each
result is committed as soon as it is stored, so a crash keeps what was done. A re-run skips the
chunks that have augmented text and the documents whose context and summary are of their
present version (re-ingesting a changed document drops both); ``force`` redoes everything.
No transaction is open while the LLM is called.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from sqlalchemy import update

from bot.core.errors import LlmError
from bot.core.settings import LlmSettings
from bot.db.models import Chunk, Document
from bot.knowledge.jobs import LlmJob, ProgressBars, no_progress
from bot.knowledge.stored_documents import ChunkRow, DocumentRow, load_documents
from bot.llm.batch import BatchResult, Estimate, run_batch
from bot.llm.client import Message, load_prompt
from bot.llm.numbers import invented_numbers, missing_numbers
from retrieval.chunking.base import HEADING_SEPARATOR, ChunkDraft
from retrieval.index.documents import chunk_search_text
from retrieval.index.summaries import store_summary

log = logging.getLogger(__name__)

CONTEXT_SAMPLE_TOKENS = 1500  # of the document's opening, for its context
SUMMARY_SAMPLE_TOKENS = 3000  # of the document, for its summary
# --dry-run: a context not written yet still goes into each chunk's prompt; count it as this.
_UNWRITTEN_CONTEXT = "ngữ cảnh " * 60
_FENCE = re.compile(r"^```[a-z]*\n|\n?```$")


# -- the job ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DocumentAugmentOptions:
    force: bool = False  # redo what is already done
    summaries: bool = True
    sources: tuple[str, ...] = ()  # only these sources (or prefixes); empty: all


@dataclass
class DocumentAugmentReport:
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
class DocumentCall:
    """A context or a summary to write for a document."""

    kind: Literal["context", "summary"]
    doc: DocumentRow


@dataclass(frozen=True)
class ChunkCall:
    """A chunk to rewrite with its document's context."""

    doc: DocumentRow
    chunk: ChunkRow


@dataclass(frozen=True)
class Rewrite:
    text: str  # what becomes augmented_text
    rejected: str | None = None  # why the LLM's rewrite was not used


@dataclass
class _Plan:
    docs: list[DocumentRow]
    written: list[DocumentCall]
    rewrites: list[ChunkCall]

    def report(self) -> DocumentAugmentReport:
        done = sum(len(d.chunks) for d in self.docs) - len(self.rewrites)
        planned = len(self.written) + len(self.rewrites)
        return DocumentAugmentReport(documents=len(self.docs), planned=planned, already_done=done)


def _describe(call: DocumentCall | ChunkCall) -> str:
    if isinstance(call, ChunkCall):
        return f"rewrite of {call.doc.source} chunk {call.chunk.id}"
    return f"{call.kind} of {call.doc.source}"


class DocumentAugmentJob(LlmJob[DocumentAugmentOptions]):
    """`tuvan augment` over a store: an ``OfflineJob`` (``bot.knowledge.jobs``)."""

    @cached_property
    def _prompts(self) -> dict[str, str]:
        """The bundled prompts (only the answer prompt can be replaced by a file)."""
        return {
            kind: load_prompt(LlmSettings(), f"augment_{kind}")
            for kind in ("context", "summary", "chunk")
        }

    # -- prompts ------------------------------------------------------------------------------

    def document_messages(self, call: DocumentCall) -> list[Message]:
        doc = call.doc
        head = f"Title: {doc.title}\nHeadings: {'; '.join(doc.headings) or '-'}\n\n"
        if call.kind == "context":
            user = f"{head}Beginning of the document:\n{doc.sample(CONTEXT_SAMPLE_TOKENS)}"
        else:
            user = f"{head}Document:\n{doc.sample(SUMMARY_SAMPLE_TOKENS)}"
        return [
            {"role": "system", "content": self._prompts[call.kind]},
            {"role": "user", "content": user},
        ]

    def chunk_messages(self, call: ChunkCall, context: str | None = None) -> list[Message]:
        doc, chunk = call.doc, call.chunk
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

    async def _write(self, call: DocumentCall) -> str:
        """A context or summary; one that writes a number its document does not is an error,
        so run_batch asks again and, failing that, leaves it out."""
        reply = await self._complete(self.document_messages(call), call.kind)
        doc = call.doc
        tokens = CONTEXT_SAMPLE_TOKENS if call.kind == "context" else SUMMARY_SAMPLE_TOKENS
        invented = invented_numbers(reply, [doc.title, " ".join(doc.headings), doc.sample(tokens)])
        if invented:
            raise LlmError(f"the {call.kind} writes numbers the document does not: {invented}")
        return reply

    async def _rewrite(self, call: ChunkCall) -> Rewrite:
        """A chunk rewritten, or its original when the rewrite lost or added a number (asking
        again would cost calls and rarely fixes it; the chunk still has its header)."""
        doc, chunk = call.doc, call.chunk
        reply = await self._complete(self.chunk_messages(call), "rewrite")
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
            return Rewrite(chunk.text, rejected=why)
        return Rewrite(reply)

    # -- storing ------------------------------------------------------------------------------

    async def _store_written(
        self, call: DocumentCall, value: str, report: DocumentAugmentReport
    ) -> None:
        doc = call.doc
        async with self.sessionmaker.begin() as session:
            if call.kind == "summary":
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

    async def _store_rewrite(
        self, call: ChunkCall, value: Rewrite, report: DocumentAugmentReport
    ) -> None:
        doc, chunk = call.doc, call.chunk
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

    # -- plan and run -------------------------------------------------------------------------

    async def _plan(self) -> _Plan:
        options = self.options
        async with self.sessionmaker() as session:
            docs = await load_documents(session, options.sources)
        written = [DocumentCall("context", d) for d in docs if options.force or not d.context]
        if options.summaries:
            written += [
                DocumentCall("summary", d)
                for d in docs
                if options.force or d.summary is None or d.summary == d.extractive
            ]
        rewrites = [
            ChunkCall(d, c) for d in docs for c in d.chunks if options.force or c.augmented is None
        ]
        return _Plan(docs, written, rewrites)

    async def plan(self) -> DocumentAugmentReport:
        """The documents matched, the calls a run would make and their estimate."""
        plan = await self._plan()
        report = plan.report()
        max_tokens = self.limits.max_tokens
        for call in plan.written:
            report.estimate.add(self.document_messages(call), max_tokens)
        for chunk_call in plan.rewrites:
            unwritten = self.options.force or not chunk_call.doc.context
            messages = self.chunk_messages(chunk_call, _UNWRITTEN_CONTEXT if unwritten else None)
            report.estimate.add(messages, max_tokens)
        return report

    async def run(self, bars: ProgressBars = no_progress) -> DocumentAugmentReport:
        """Augment the matching documents: contexts and summaries, then the chunk rewrites."""
        plan = await self._plan()
        report = plan.report()
        progress = bars("augmenting", report.planned)
        if self.llm is None:
            raise LlmError("tuvan augment needs an LLM: set TUVAN_LLM__BASE_URL")

        async def store_written(call: DocumentCall, value: str) -> None:
            await self._store_written(call, value, report)

        async def store_rewrite(call: ChunkCall, value: Rewrite) -> None:
            await self._store_rewrite(call, value, report)

        first = await run_batch(
            plan.written,
            self._write,
            **self.limits.batch_options(),
            on_done=store_written,
            on_progress=progress,
        )
        self._collect(first, report)
        # A chunk is rewritten with its document's context: without one it waits for a re-run.
        rewrites = plan.rewrites
        ready = [c for c in rewrites if c.doc.context]
        for doc in {c.doc.id: c.doc for c in rewrites if not c.doc.context}.values():
            report.failed.append((f"rewrites of {doc.source}", "no context yet: run again"))
            progress(sum(c.doc is doc for c in rewrites))
        second = await run_batch(
            ready,
            self._rewrite,
            **self.limits.batch_options(),
            on_done=store_rewrite,
            on_progress=progress,
        )
        self._collect(second, report)
        return report

    @staticmethod
    def _collect(result: BatchResult[Any, Any], report: DocumentAugmentReport) -> None:
        report.calls += result.calls
        report.failed += [(_describe(call), why) for call, why in result.failed]
