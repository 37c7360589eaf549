"""FAQ entries in the store: inserted or updated from a draft, embedded, their variants set.

``write_faq`` is the one writer of an entry's text, whoever gives it: a file or an evaluation
(through ``upsert_faq``, by external id) and the admin's form (``admin.faq_store``, which adds
the review flag and the audit)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import FaqEntry, FaqOrigin, FaqStatus, FaqVariant, VariantOrigin
from retrieval.facts.years import valid_until, year_of
from retrieval.index.indexer import Indexer
from retrieval.text.language import detect_language


@dataclass(frozen=True)
class FaqValidity:
    """The year an entry speaks of and the day it holds until, as staff set them."""

    year: int | None
    valid_until: date | None


@dataclass
class FaqDraft:
    """An FAQ entry as a file, the admin or a job gives it, before it is stored. ``validity``:
    what staff set; None to read it from the text (when the entry is new or its text changed).
    ``variants``: the staff phrasings ``upsert_faq`` stores with it."""

    question: str
    answer: str
    external_id: str | None = None
    source: str | None = None
    source_url: str | None = None
    language: str | None = None
    status: FaqStatus = FaqStatus.published
    variants: list[str] = field(default_factory=list)
    updated_by: str | None = None
    validity: FaqValidity | None = None


async def flag_generated_variants(session: AsyncSession, faq_id: int) -> None:
    """An entry's question changed: the phrasings generated from the old one wait for staff,
    and `tuvan faq enrich` redoes them."""
    await session.execute(
        update(FaqVariant)
        .where(FaqVariant.faq_id == faq_id, FaqVariant.origin == VariantOrigin.generated)
        .values(needs_review=True)
    )


async def write_faq(
    session: AsyncSession, indexer: Indexer, entry: FaqEntry | None, draft: FaqDraft
) -> FaqEntry:
    """Create (``entry`` None) or update an entry from ``draft``, embedded at once, so the very
    next question is matched against the new text. Its phrasings are left as they are."""
    text_changed = entry is None or (entry.question, entry.answer) != (draft.question, draft.answer)
    if entry is None:
        entry = FaqEntry(external_id=draft.external_id, origin=FaqOrigin.staff)
        session.add(entry)
    elif entry.question != draft.question:
        await flag_generated_variants(session, entry.id)
    entry.question = draft.question
    entry.answer = draft.answer
    entry.source = draft.source
    entry.source_url = draft.source_url
    entry.language = draft.language or detect_language(draft.question)
    entry.status = draft.status
    entry.updated_by = draft.updated_by
    if draft.validity is not None:
        entry.year, entry.valid_until = draft.validity.year, draft.validity.valid_until
    elif text_changed:
        # An unchanged text keeps what was read or set before: read again today, a date of
        # the text that has passed would no longer count, and an expired entry look current.
        read_validity(entry)
    await embed_faq_entry(session, indexer, entry)
    await drop_folded_variants(session, entry)
    return entry


async def upsert_faq(session: AsyncSession, indexer: Indexer, draft: FaqDraft) -> FaqEntry:
    """Create or update an FAQ entry (by ``external_id`` when given), embedded at once, its
    staff phrasings replaced by the draft's."""
    entry = None
    if draft.external_id:
        entry = await session.scalar(
            select(FaqEntry).where(FaqEntry.external_id == draft.external_id)
        )
    entry = await write_faq(session, indexer, entry, draft)
    await set_variants(session, indexer, entry, draft.variants)
    return entry


def read_validity(entry: FaqEntry, *, today: date | None = None) -> None:
    """The year the entry speaks of and until when it holds, as its text says
    (retrieval.facts.years)."""
    entry.year = year_of(entry.question, entry.answer)
    entry.valid_until = valid_until(entry.answer, today or date.today())


async def drop_folded_variants(session: AsyncSession, entry: FaqEntry) -> None:
    """Remove the copies without diacritics that tuvan stored before 2/6.

    A question typed without diacritics is now restored before it is matched, and a verbatim
    phrasing is matched on its folded words (retrieval.faq), so the copies only crowded the
    ranking: without them the nearest entry is the right one more often (docs/benchmarks.md,
    "How stored FAQ texts are embedded").
    """
    await session.execute(
        delete(FaqVariant).where(
            FaqVariant.faq_id == entry.id, FaqVariant.origin == VariantOrigin.folded
        )
    )


async def embed_faq_entry(session: AsyncSession, indexer: Indexer, entry: FaqEntry) -> None:
    [vector] = await indexer.questions([entry.question])
    entry.embedding = vector
    entry.keyword_text = indexer.processor.keyword_text(entry.question)
    await session.flush()


async def set_variants(
    session: AsyncSession,
    indexer: Indexer,
    entry: FaqEntry,
    texts: Sequence[str],
    origin: VariantOrigin = VariantOrigin.staff,
) -> None:
    """Replace the entry's variants of ``origin`` with ``texts``, embedded."""
    await session.flush()
    await session.execute(
        delete(FaqVariant).where(FaqVariant.faq_id == entry.id, FaqVariant.origin == origin)
    )
    unique = [t for t in dict.fromkeys(t.strip() for t in texts) if t and t != entry.question]
    if not unique:
        return
    vectors = await indexer.questions(unique)
    session.add_all(
        FaqVariant(
            faq_id=entry.id,
            text=t,
            origin=origin,
            keyword_text=indexer.processor.keyword_text(t),
            embedding=vectors[i],
        )
        for i, t in enumerate(unique)
    )
    await session.flush()


# -- re-embedding -----------------------------------------------------------------------------
