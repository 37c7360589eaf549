"""URAG-F, part (a): more phrasings for every published FAQ question, as `generated` variants.

With an LLM, the model paraphrases each question into ~N student phrasings (formal and informal,
with and without diacritics). Without one, deterministic phrasings: the question as students
type it in chat, admissions vocabulary replaced by its usual shorthand (the abbreviation list read
backwards: "khoa học máy tính" → "khmt", "ký túc xá" → "ktx") and diacritics dropped.

Variants change matching only: the answer is still returned verbatim. They are stored with origin
`generated`, so staff can see and remove them, and a re-run replaces them (`--force`) or skips the
entries that have them already (resumable).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.errors import TuvanError
from bot.llm import LlmClient
from bot.models import FaqEntry, FaqStatus, FaqVariant, VariantOrigin
from retrieval.index import Indexer, set_variants
from retrieval.text import TextProcessor, fold

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


async def paraphrases(llm: LlmClient, question: str, n: int) -> list[str]:
    reply = await llm.complete(
        [
            {"role": "system", "content": PROMPT.format(n=n)},
            {"role": "user", "content": question},
        ]
    )
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
    skipped: int = 0  # had generated variants already (no --force)
    variants: int = 0
    llm_calls: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)


async def enrich_faq(
    session: AsyncSession,
    indexer: Indexer,
    llm: LlmClient | None,
    *,
    n: int = 10,
    force: bool = False,
    dry_run: bool = False,
    on_entry: Callable[[int], None] | None = None,
) -> EnrichReport:
    """Add generated variants to every published entry; the caller commits."""
    entries: Sequence[FaqEntry] = (
        await session.scalars(
            select(FaqEntry).where(FaqEntry.status == FaqStatus.published).order_by(FaqEntry.id)
        )
    ).all()
    has_generated = set(
        (
            await session.scalars(
                select(FaqVariant.faq_id).where(FaqVariant.origin == VariantOrigin.generated)
            )
        ).all()
    )
    report = EnrichReport()
    for entry in entries:
        if entry.id in has_generated and not force:
            report.skipped += 1
            continue
        report.entries += 1
        if dry_run:
            report.llm_calls += llm is not None
            continue
        variants = shorthand_variants(entry.question, indexer.processor)
        if llm is not None:
            try:
                variants = await paraphrases(llm, entry.question, n) + variants
                report.llm_calls += 1
            except TuvanError as exc:
                log.warning("paraphrasing FAQ %s failed: %s", entry.id, exc)
                report.failed.append((entry.external_id or str(entry.id), str(exc)))
        variants = list(dict.fromkeys(variants))
        await set_variants(session, indexer, entry, variants, VariantOrigin.generated)
        report.variants += len(variants)
        if on_entry:
            on_entry(1)
    return report
