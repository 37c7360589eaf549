"""URAG-F (b) and (c), offline: FAQ drafts written by the LLM from document chunks, and their
phrasings.

For each chunk the model proposes up to N question–answer pairs a prospective student would ask
and the chunk answers. A pair whose answer carries a number or date the chunk does not is
dropped (the model made it up or reformatted it; answers must quote the chunk's facts). Each
kept pair becomes a *draft* FAQ entry of origin `generated` that records where it came from (the
document, the chunk, the chunk's text and the document's version), so tier 1 never answers with
it until staff publish it, `tuvan sources` counts it, a changed source flags it and removing the
source removes it. Then each generated question gets paraphrases (faq_paraphrases) as variants.

Resumable: the chunks asked about are marked in their document's metadata with its version (a
re-ingest of a changed document replaces the metadata), and a re-run skips them, as it skips
chunks with drafts of the current version: so a chunk that gave no usable pair, or whose drafts
staff deleted, is not asked again. ``force`` asks again, replacing the chunk's earlier drafts
that are still unpublished and untouched by staff; published or staff-edited entries are never
touched. The store side is ``faq_draft_store``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from bot.core.errors import LlmError
from bot.knowledge.faq_draft_store import (
    GENERATED_BY,
    QaPair,
    SourceChunk,
    asked_chunks,
    generated_entries,
    select_chunks,
    store_drafts,
)
from bot.knowledge.faq_paraphrases import (
    FaqParaphraseJob,
    FaqParaphraseOptions,
    paraphrase_messages,
)
from bot.knowledge.jobs import LlmJob, ProgressBars, no_progress
from bot.llm.batch import Estimate, run_batch
from bot.llm.client import Message
from bot.llm.numbers import invented_numbers

log = logging.getLogger(__name__)

__all__ = ["GENERATED_BY", "FaqDraftJob", "FaqDraftOptions", "GenerateReport", "parse_pairs"]
MAX_QUESTION_CHARS = 300
MAX_ANSWER_CHARS = 1500
# A typical student question, for estimating the paraphrase calls before the questions exist.
_SAMPLE_QUESTION = "Học phí ngành Khoa học Máy tính năm 2025 là bao nhiêu một năm ạ?"

PROMPT = (
    "You write FAQ entries for a university admissions chatbot. From the passage the user "
    "gives, write up to {n} question-answer pairs that a prospective student would ask and "
    "that the passage answers completely. Write in the passage's language. Each answer must "
    "quote the passage's facts exactly: numbers, dates, amounts, names and codes as they are "
    "written there; add nothing the passage does not say. Skip what the passage does not "
    'answer. Reply with a JSON list only: [{{"question": "...", "answer": "..."}}]; reply [] '
    "if the passage answers no such question."
)


@dataclass
class GenerateReport:
    chunks: int = 0  # asked (or, with --dry-run, to ask)
    skipped: int = 0  # done for this version already
    drafts: int = 0
    rejected: int = 0  # pairs whose answer has a number or date the chunk has not
    replaced: int = 0  # earlier unpublished drafts removed (--force, or an older version)
    variants: int = 0
    llm_calls: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (source #ordinal, reason)
    unmatched: list[str] = field(default_factory=list)  # --source values matching nothing
    estimate: Estimate = field(default_factory=Estimate)


# -- the model's reply --------------------------------------------------------------------


def generate_messages(job: SourceChunk, n: int) -> list[Message]:
    where = " › ".join(p for p in (job.title, job.heading_path) if p)
    return [
        {"role": "system", "content": PROMPT.format(n=n)},
        {"role": "user", "content": f"{where}\n\n{job.text}"},
    ]


def parse_pairs(reply: str, n: int) -> list[QaPair]:
    """The pairs in a reply, read defensively: the JSON list may sit inside prose or a code
    fence, or be wrapped in an object; rows without both texts are dropped.

    Raises LlmError when the reply holds no JSON list at all (worth another attempt).
    """
    text = reply.strip()
    start, end = text.find("["), text.rfind("]")
    try:
        data: Any = json.loads(text[start : end + 1]) if start >= 0 and end > start else None
    except json.JSONDecodeError:
        data = None
    if data is None:
        try:
            data = json.loads(text[text.find("{") : text.rfind("}") + 1])
        except json.JSONDecodeError as exc:
            raise LlmError("the reply was not a JSON list of question-answer pairs") from exc
    if isinstance(data, dict):  # {"pairs": [...]} or {"faq": [...]}
        data = next((v for v in data.values() if isinstance(v, list)), [data])
    if not isinstance(data, list):
        raise LlmError("the reply was not a JSON list of question-answer pairs")
    pairs: dict[str, QaPair] = {}
    for row in data:
        if not isinstance(row, dict):
            continue
        question = _text(row.get("question") or row.get("q"))
        answer = _text(row.get("answer") or row.get("a"))
        if question and answer and len(question) <= MAX_QUESTION_CHARS:
            pairs.setdefault(question, QaPair(question, answer[:MAX_ANSWER_CHARS]))
    return list(pairs.values())[:n]


def _text(value: object) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


# -- the job ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FaqDraftOptions:
    per_chunk: int = 3  # question-answer pairs asked for per chunk
    sources: tuple[str, ...] = ()  # only these sources (or prefixes); empty: all
    force: bool = False  # ask again, replacing untouched unpublished drafts
    paraphrases: int = 5  # phrasings generated per drafted question (0: none)


class FaqDraftJob(LlmJob[FaqDraftOptions]):
    """Draft FAQ entries from every chunk in scope, then phrasings of their questions
    (`tuvan faq generate`): an ``OfflineJob`` (``bot.knowledge.jobs``). Each chunk's drafts are
    committed as they come, so an interrupted run keeps them. A run needs ``llm``."""

    async def _todo(self) -> tuple[GenerateReport, list[SourceChunk], list[SourceChunk]]:
        report = GenerateReport()
        async with self.sessionmaker() as session:
            chunks, report.unmatched = await select_chunks(session, self.options.sources)
            done = set() if self.options.force else await asked_chunks(session, chunks)
        todo = [c for c in chunks if c.chunk_id not in done]
        report.chunks, report.skipped = len(todo), len(chunks) - len(todo)
        return report, chunks, todo

    async def plan(self) -> GenerateReport:
        """The chunks to ask about, and the calls: one per chunk, then at most one per draft
        for its phrasings (if every chunk gives ``per_chunk`` pairs)."""
        report, _, todo = await self._todo()
        per_chunk, n, max_tokens = (
            self.options.per_chunk,
            self.options.paraphrases,
            self.limits.max_tokens,
        )
        for chunk in todo:
            report.estimate.add(generate_messages(chunk, per_chunk), max_tokens)
        if n:
            for _ in range(len(todo) * per_chunk):
                report.estimate.add(paraphrase_messages(_SAMPLE_QUESTION, n), max_tokens)
        return report

    async def run(self, bars: ProgressBars = no_progress) -> GenerateReport:
        report, chunks, todo = await self._todo()
        if self.llm is None:
            raise LlmError("generating FAQ drafts needs an LLM: set TUVAN_LLM__BASE_URL")
        client, per_chunk = self.llm, self.options.per_chunk

        async def ask(chunk: SourceChunk) -> list[QaPair]:
            return parse_pairs(
                await client.complete(generate_messages(chunk, per_chunk)), per_chunk
            )

        async def keep(chunk: SourceChunk, pairs: list[QaPair]) -> None:
            usable = []
            for pair in pairs:
                missing = invented_numbers(pair.answer, [chunk.text])
                if missing:
                    log.info(
                        "dropped %r: %s not in %s #%d",
                        pair.question,
                        missing,
                        chunk.source,
                        chunk.ordinal,
                    )
                    report.rejected += 1
                else:
                    usable.append(pair)
            async with self.sessionmaker.begin() as session:
                ids, replaced = await store_drafts(
                    session, self.indexer, chunk, usable, force=self.options.force
                )
            report.drafts += len(ids)
            report.replaced += replaced

        batch = await run_batch(
            todo,
            ask,
            **self.limits.batch_options(),
            on_done=keep,
            on_progress=bars("chunks", len(todo)),
        )
        report.llm_calls = batch.calls
        report.failed = [(f"{c.source} #{c.ordinal}", reason) for c, reason in batch.failed]
        if self.options.paraphrases:
            await self._paraphrase(chunks, report, bars)
        return report

    async def _paraphrase(
        self, chunks: list[SourceChunk], report: GenerateReport, bars: ProgressBars
    ) -> None:
        """Phrasings of the chunks' generated questions; those with phrasings of their current
        question are skipped (``faq_paraphrases``)."""
        async with self.sessionmaker() as session:
            entries = await generated_entries(session, chunks)
        options = FaqParaphraseOptions(
            n=self.options.paraphrases, entry_ids=tuple(e.id for e in entries)
        )
        job = FaqParaphraseJob(self.sessionmaker, self.indexer, self.llm, options, self.limits)
        enriched = await job.run(lambda _, total: bars("phrasings", total))
        report.variants = enriched.variants
        report.llm_calls += enriched.llm_calls
        report.failed += [(f"FAQ {label}", f"phrasings: {why}") for label, why in enriched.failed]
