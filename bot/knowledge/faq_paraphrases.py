"""URAG-F, part (a), offline: more phrasings for every published FAQ question, as `generated`
variants.

With an LLM, the model paraphrases each question into ~N student phrasings (formal and informal,
with and without diacritics). Without one, deterministic phrasings: the question as students
type it in chat, admissions vocabulary replaced by its usual shorthand (the abbreviation list read
backwards: "khoa học máy tính" → "khmt", "ký túc xá" → "ktx") and diacritics dropped.

Variants change matching only: the answer is still returned verbatim. They are stored with origin
`generated` and the hash of the question they paraphrase (``source_version``), so staff can see
and remove them. A re-run skips the entries whose phrasings match their current question
(resumable) and redoes those whose question changed since (retrieval.index flags their variants
for review); ``--force`` redoes all. LLM calls go through bot.llm.batch: concurrent, retried,
each entry stored as its phrasings come.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import FaqEntry, FaqStatus, FaqVariant, VariantOrigin
from bot.knowledge.jobs import LlmJob, ProgressBars, no_progress
from bot.llm.batch import Estimate, run_batch
from bot.llm.client import LlmClient, Message
from retrieval.index.faq_entries import set_variants
from retrieval.index.indexer import Indexer
from retrieval.text.folding import fold
from retrieval.text.terms import TextProcessor

log = logging.getLogger(__name__)

PROMPT = (
    "You help a university admissions chatbot recognise questions. Rewrite the student's "
    "question in {n} different ways a Vietnamese high-school student might type it: formal "
    "and informal, some without diacritics, some with chat shorthand (ad, ạ, v, bn, ko). Keep "
    "every fact of the question (majors, years, programmes, numbers) exactly; do not add new "
    "ones. Reply with a JSON list of strings only."
)
MAX_VARIANT_CHARS = 300


def shorthand_variants(question: str, processor: TextProcessor) -> list[str]:
    """Chat-style phrasings without an LLM: expansions replaced by their abbreviation, folded."""
    folded = fold(question).rstrip(" ?.")
    out: list[str] = []
    reverse: list[tuple[str, str]] = []
    for key, abbr in processor.abbreviations().items():
        for expansion in abbr.expansions:
            long_form = fold(expansion)
            if " " in long_form and long_form != key:  # multi-word forms only: "ktx", not "ko"
                reverse.append((long_form, key))
    shortened = folded
    for long_form, key in sorted(reverse, key=lambda p: -len(p[0])):
        shortened = re.sub(rf"(?<!\w){re.escape(long_form)}(?!\w)", key, shortened)
    if shortened != folded:
        out.append(shortened)
    for greeting in ("cho em hoi ", "ad oi "):
        out.append(greeting + (shortened if shortened != folded else folded))
    return list(dict.fromkeys(v for v in out if v and v != fold(question)))


def question_version(question: str) -> str:
    """What a generated variant was made from: the hash of its question, spaces folded."""
    return hashlib.sha256(" ".join(question.split()).encode()).hexdigest()


def paraphrase_messages(question: str, n: int) -> list[Message]:
    return [
        {"role": "system", "content": PROMPT.format(n=n)},
        {"role": "user", "content": question},
    ]


async def paraphrases(llm: LlmClient, question: str, n: int) -> list[str]:
    reply = await llm.complete(paraphrase_messages(question, n))
    text = reply.strip()
    start, end = text.find("["), text.rfind("]")
    try:
        items = json.loads(text[start : end + 1]) if start >= 0 and end > start else []
    except json.JSONDecodeError:
        items = []
    if not isinstance(items, list):
        items = []
    if not items:  # a model that ignored the format: one phrasing per line
        items = [line.strip(" -•*\t\"'0123456789.)") for line in text.splitlines()]
    clean = [str(i).strip() for i in items if isinstance(i, str | int | float)]
    keep = [c for c in clean if c and len(c) <= MAX_VARIANT_CHARS and c != question]
    return list(dict.fromkeys(keep))[:n]


@dataclass
class EnrichReport:
    entries: int = 0
    skipped: int = 0  # had generated variants of their current question already (no --force)
    variants: int = 0
    llm_calls: int = 0  # attempts made (retries included); with --dry-run, calls it would make
    failed: list[tuple[str, str]] = field(default_factory=list)
    estimate: Estimate = field(default_factory=Estimate)


@dataclass(frozen=True)
class _Item:
    """An entry as the job needs it: plain values, safe to use after a commit."""

    id: int
    question: str
    label: str


async def store_generated_variants(
    session: AsyncSession, indexer: Indexer, entry: FaqEntry, texts: Sequence[str]
) -> None:
    """Replace the entry's generated variants with ``texts``, stamped with its question's hash."""
    await set_variants(session, indexer, entry, texts, VariantOrigin.generated)
    await session.execute(
        update(FaqVariant)
        .where(FaqVariant.faq_id == entry.id, FaqVariant.origin == VariantOrigin.generated)
        .values(source_version=question_version(entry.question), needs_review=False)
    )


async def _enriched(session: AsyncSession, ids: Sequence[int]) -> set[int]:
    """The entries among ``ids`` whose generated variants paraphrase their current question.

    Variants made before versions were recorded (NULL) count as current unless flagged.
    """
    if not ids:
        return set()
    rows = await session.execute(
        select(
            FaqVariant.faq_id, FaqVariant.source_version, FaqVariant.needs_review, FaqEntry.question
        )
        .join(FaqEntry, FaqEntry.id == FaqVariant.faq_id)
        .where(FaqVariant.origin == VariantOrigin.generated, FaqVariant.faq_id.in_(ids))
    )
    stale: set[int] = set()
    seen: set[int] = set()
    for faq_id, version, flagged, question in rows:
        seen.add(faq_id)
        if flagged or (version is not None and version != question_version(question)):
            stale.add(faq_id)
    return seen - stale


@dataclass(frozen=True)
class FaqParaphraseOptions:
    n: int = 10  # phrasings asked for per question
    force: bool = False  # redo entries whose phrasings are current
    entry_ids: tuple[int, ...] | None = None  # these entries (drafts too); None: every published


class FaqParaphraseJob(LlmJob[FaqParaphraseOptions]):
    """Generated phrasings for FAQ questions (`tuvan faq enrich`): an ``OfflineJob``
    (``bot.knowledge.jobs``). Each entry's phrasings are stored in a transaction of their own as
    soon as they arrive; an entry whose LLM call fails every attempt still gets the shorthand
    phrasings, and so does every entry when ``llm`` is None."""

    async def _todo(self) -> tuple[EnrichReport, list[_Item]]:
        query = select(FaqEntry.id, FaqEntry.question, FaqEntry.external_id).order_by(FaqEntry.id)
        if self.options.entry_ids is None:
            query = query.where(FaqEntry.status == FaqStatus.published)
        else:
            query = query.where(FaqEntry.id.in_(self.options.entry_ids))
        async with self.sessionmaker() as session:
            rows = (await session.execute(query)).all()
            items = [_Item(id_, question, external or str(id_)) for id_, question, external in rows]
            done = set() if self.options.force else await _enriched(session, [i.id for i in items])
        todo = [i for i in items if i.id not in done]
        return EnrichReport(entries=len(todo), skipped=len(items) - len(todo)), todo

    async def plan(self) -> EnrichReport:
        """The entries to enrich, those done already, and the LLM calls a run would make."""
        report, todo = await self._todo()
        if self.llm is not None:
            for item in todo:
                report.estimate.add(
                    paraphrase_messages(item.question, self.options.n), self.limits.max_tokens
                )
        report.llm_calls = report.estimate.calls
        return report

    async def run(self, bars: ProgressBars = no_progress) -> EnrichReport:
        report, todo = await self._todo()
        progress = bars("FAQ entries", report.entries)

        async def store(item: _Item, extra: list[str]) -> None:
            async with self.sessionmaker.begin() as session:
                entry = await session.get(FaqEntry, item.id)
                if entry is None:  # removed while the job ran
                    return
                shorthand = shorthand_variants(item.question, self.indexer.processor)
                variants = list(dict.fromkeys(extra + shorthand))
                await store_generated_variants(session, self.indexer, entry, variants)
            report.variants += len(variants)
            progress(1)

        if self.llm is None:
            for item in todo:
                await store(item, [])
            return report
        llm, n = self.llm, self.options.n
        batch = await run_batch(
            todo,
            lambda item: paraphrases(llm, item.question, n),
            **self.limits.batch_options(),
            on_done=store,
        )
        report.llm_calls = batch.calls
        for item, reason in batch.failed:
            log.warning("paraphrasing FAQ %s failed: %s", item.label, reason)
            report.failed.append((item.label, reason))
            await store(item, [])
        return report
