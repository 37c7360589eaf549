"""URAG-F (b) and (c): FAQ drafts written by the LLM from document chunks, and their phrasings.

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
touched.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.core.errors import LlmError
from bot.db.models import Chunk, Document, FaqEntry, FaqOrigin, FaqStatus
from bot.knowledge.faq_paraphrases import enrich_faq, paraphrase_messages
from bot.llm.batch import Estimate, run_batch
from bot.llm.client import LlmClient, Message
from bot.llm.numbers import invented_numbers
from retrieval.index.faq_entries import embed_faq_entry
from retrieval.index.indexer import Indexer
from retrieval.text.language import detect_language

log = logging.getLogger(__name__)

GENERATED_BY = "tuvan:faq-generate"  # updated_by of an entry no person has edited yet
DONE_KEY = "faq_generated"  # Document.meta: {"version": hash, "ordinals": [chunks asked]}
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

# Numbers and dates: 2025, 3.000, 32,5, 30/08/2024, 8:00. Ranges ("2025-2026") split into parts.


@dataclass(frozen=True)
class QaPair:
    question: str
    answer: str


@dataclass(frozen=True)
class ChunkJob:
    """A chunk to ask about, as plain values (safe across commits and concurrent calls)."""

    chunk_id: int
    ordinal: int
    document_id: int
    source: str
    title: str
    url: str | None
    version: str  # the document's content hash
    heading_path: str
    text: str


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


def generate_messages(job: ChunkJob, n: int) -> list[Message]:
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


# -- the store ----------------------------------------------------------------------------


async def select_chunks(
    session: AsyncSession, sources: Sequence[str]
) -> tuple[list[ChunkJob], list[str]]:
    """Every chunk, or those of the documents whose source is or starts with one of
    ``sources``; and the ``sources`` that matched no document."""
    query = (
        select(Chunk, Document)
        .join(Document, Document.id == Chunk.document_id)
        .order_by(Document.source, Chunk.ordinal)
    )
    if sources:
        query = query.where(
            or_(
                *(
                    or_(Document.source == s, Document.source.startswith(s, autoescape=True))
                    for s in sources
                )
            )
        )
    rows = (await session.execute(query)).all()
    jobs = [
        ChunkJob(
            chunk_id=c.id,
            ordinal=c.ordinal,
            document_id=d.id,
            source=d.source,
            title=d.title,
            url=d.url,
            version=d.content_hash,
            heading_path=c.heading_path,
            text=c.text,
        )
        for c, d in rows
    ]
    unmatched = [s for s in sources if not any(j.source.startswith(s) for j in jobs)]
    return jobs, unmatched


async def _done(session: AsyncSession, jobs: Sequence[ChunkJob]) -> set[int]:
    """The chunk ids asked about (or with drafts) for their document's current version."""
    if not jobs:
        return set()
    rows = await session.execute(
        select(FaqEntry.source_chunk_id, FaqEntry.source_version).where(
            FaqEntry.origin == FaqOrigin.generated,
            FaqEntry.source_chunk_id.in_(sorted({j.chunk_id for j in jobs})),
        )
    )
    versions = {(chunk_id, version) for chunk_id, version in rows}
    metas = await session.execute(
        select(Document.id, Document.meta).where(
            Document.id.in_(sorted({j.document_id for j in jobs}))
        )
    )
    asked = {doc_id: meta.get(DONE_KEY) or {} for doc_id, meta in metas}
    done = set()
    for job in jobs:
        marker = asked.get(job.document_id, {})
        if (job.chunk_id, job.version) in versions or (
            marker.get("version") == job.version and job.ordinal in marker.get("ordinals", [])
        ):
            done.add(job.chunk_id)
    return done


def _untouched_drafts() -> list[Any]:
    return [
        FaqEntry.origin == FaqOrigin.generated,
        FaqEntry.status == FaqStatus.draft,
        FaqEntry.updated_by == GENERATED_BY,
    ]


async def store_drafts(
    session: AsyncSession,
    indexer: Indexer,
    job: ChunkJob,
    pairs: Sequence[QaPair],
    *,
    force: bool,
) -> tuple[list[int], int]:
    """Store ``pairs`` as drafts traced to ``job``; returns their ids and how many earlier
    drafts were replaced: the chunk's own (``force``) and the document's drafts of an older
    version that nobody touched (the re-ingest flagged them; these take their place)."""
    stale = FaqEntry.source_version != job.version
    if force:
        stale = or_(stale, FaqEntry.source_chunk_id == job.chunk_id)
    replaced = (
        await session.scalars(
            delete(FaqEntry)
            .where(FaqEntry.source_document_id == job.document_id, stale, *_untouched_drafts())
            .returning(FaqEntry.id)
        )
    ).all()
    ids = []
    for pair in pairs:
        entry = FaqEntry(
            question=pair.question,
            answer=pair.answer,
            source=job.title or job.source,
            source_url=job.url,
            language=detect_language(pair.question),
            status=FaqStatus.draft,
            origin=FaqOrigin.generated,
            source_document_id=job.document_id,
            source_chunk_id=job.chunk_id,
            source_text=job.text,
            source_version=job.version,
            updated_by=GENERATED_BY,
        )
        session.add(entry)
        await embed_faq_entry(session, indexer, entry)
        ids.append(entry.id)
    await _record_asked(session, job)
    return ids, len(replaced)


async def _record_asked(session: AsyncSession, job: ChunkJob) -> None:
    """Mark the chunk done for this version, so that a re-run does not ask again even when it
    gave no usable pair or staff deleted its drafts (a re-ingest of a changed document resets
    the metadata, and with it the marks)."""
    row = (
        await session.execute(
            select(Document.meta).where(
                Document.id == job.document_id, Document.content_hash == job.version
            )
        )
    ).first()
    if row is None:  # removed or re-ingested meanwhile
        return
    meta = dict(row.meta)
    marker = meta.get(DONE_KEY) or {}
    ordinals = marker.get("ordinals", []) if marker.get("version") == job.version else []
    meta[DONE_KEY] = {"version": job.version, "ordinals": sorted({*ordinals, job.ordinal})}
    # updated_at kept: it says when the source was indexed (`tuvan sources`), not this mark.
    await session.execute(
        update(Document)
        .where(Document.id == job.document_id)
        .values(meta=meta, updated_at=Document.updated_at)
    )


# -- the job ------------------------------------------------------------------------------


async def generate_faq(
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    llm: LlmClient | None,
    *,
    per_chunk: int = 3,
    sources: Sequence[str] = (),
    force: bool = False,
    dry_run: bool = False,
    paraphrases: int = 5,
    concurrency: int = 4,
    attempts: int = 3,
    base_delay: float = 1.0,
    max_tokens: int = 700,
    on_chunk: Callable[[int], None] | None = None,
    on_entry: Callable[[int], None] | None = None,
) -> GenerateReport:
    """Draft FAQ entries from every chunk in scope, then phrasings of their questions.

    Each chunk's drafts are committed as they come, so an interrupted run keeps them. Needs
    ``llm`` unless ``dry_run`` (which only counts and estimates; it changes nothing).
    """
    report = GenerateReport()
    async with sessionmaker() as session:
        jobs, report.unmatched = await select_chunks(session, sources)
        done = set() if force else await _done(session, jobs)
    todo = [j for j in jobs if j.chunk_id not in done]
    report.chunks, report.skipped = len(todo), len(jobs) - len(todo)
    if dry_run:
        for job in todo:
            report.estimate.add(generate_messages(job, per_chunk), max_tokens)
        if paraphrases:
            for _ in range(len(todo) * per_chunk):  # at most, if every chunk gives N pairs
                report.estimate.add(paraphrase_messages(_SAMPLE_QUESTION, paraphrases), max_tokens)
        return report
    if llm is None:
        raise LlmError("generating FAQ drafts needs an LLM: set TUVAN_LLM__BASE_URL")
    client = llm

    async def ask(job: ChunkJob) -> list[QaPair]:
        return parse_pairs(await client.complete(generate_messages(job, per_chunk)), per_chunk)

    async def keep(job: ChunkJob, pairs: list[QaPair]) -> None:
        usable = []
        for pair in pairs:
            missing = invented_numbers(pair.answer, [job.text])
            if missing:
                log.info(
                    "dropped %r: %s not in %s #%d", pair.question, missing, job.source, job.ordinal
                )
                report.rejected += 1
            else:
                usable.append(pair)
        async with sessionmaker.begin() as session:
            ids, replaced = await store_drafts(session, indexer, job, usable, force=force)
        report.drafts += len(ids)
        report.replaced += replaced

    batch = await run_batch(
        todo,
        ask,
        concurrency=concurrency,
        attempts=attempts,
        base_delay=base_delay,
        on_done=keep,
        on_progress=on_chunk,
    )
    report.llm_calls = batch.calls
    report.failed = [(f"{job.source} #{job.ordinal}", reason) for job, reason in batch.failed]
    if paraphrases:
        async with sessionmaker() as session:
            entries = (
                await session.scalars(
                    select(FaqEntry)
                    .where(
                        FaqEntry.origin == FaqOrigin.generated,
                        FaqEntry.source_chunk_id.in_(sorted({j.chunk_id for j in jobs})),
                    )
                    .order_by(FaqEntry.id)
                )
            ).all()
            # Entries with phrasings of their current question are skipped (faq_paraphrases).
            enriched = await enrich_faq(
                session,
                indexer,
                client,
                n=paraphrases,
                entries=entries,
                concurrency=concurrency,
                attempts=attempts,
                base_delay=base_delay,
                max_tokens=max_tokens,
                on_entry=on_entry,
                on_stored=session.commit,
            )
        report.variants = enriched.variants
        report.llm_calls += enriched.llm_calls
        report.failed += [(f"FAQ {label}", f"phrasings: {why}") for label, why in enriched.failed]
    return report
