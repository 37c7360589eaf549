"""What in the knowledge is going stale (2/4): FAQ entries and documents past or near their
valid-until date, entries whose dates have all passed, entries and documents about an earlier
year than the admission year, and documents whose tables hold last year's figures where another
document has this year's. Each item is listed once, for the first of those reasons."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import Document, FactRow, FaqEntry, FaqStatus
from retrieval.facts.years import admission_year, dates_in

SOON_DAYS = 30  # an entry whose valid-until date is this close is listed before it passes

# Why an item is listed (admin strings "stale.<reason>").
EXPIRED = "expired"  # past its valid-until date: tier 1 no longer answers it verbatim
EXPIRING = "expiring"
DATES_PAST = "dates_past"  # every date its answer names has passed
OLDER_YEAR = "older_year"  # about an earlier year than the admission year
OLDER_FIGURES = "older_figures"  # a document's table of a year another document has newer


@dataclass(frozen=True)
class StaleItem:
    kind: str  # "faq" or "document"
    id: int
    title: str
    reason: str
    detail: str  # the date or the years concerned, as staff read them


async def current_admission_year(session: AsyncSession, setting: int, today: date) -> int:
    """The setting, else the latest year the documents' titles name (retrieval.facts.years)."""
    if setting:
        return setting
    titles = (await session.scalars(select(Document.title))).all()
    return admission_year(0, titles, today)


async def stale_items(session: AsyncSession, setting: int, today: date) -> list[StaleItem]:
    year = await current_admission_year(session, setting, today)
    items: list[StaleItem] = []
    entries = (
        await session.scalars(select(FaqEntry).where(FaqEntry.status == FaqStatus.published))
    ).all()
    for entry in entries:
        reason, detail = _entry_staleness(entry, today, year)
        if reason:
            items.append(StaleItem("faq", entry.id, entry.question, reason, detail))
    return items + await _documents(session, today, year)


async def _documents(session: AsyncSession, today: date, year: int) -> list[StaleItem]:
    """Each document once: past or near its date, else older tables, else an earlier year."""
    documents = (
        await session.execute(
            select(Document.id, Document.title, Document.valid_until, Document.year).order_by(
                Document.id
            )
        )
    ).all()
    found: dict[int, StaleItem] = {}
    for d in documents:
        reason, detail = _until(d.valid_until, today)
        if reason:
            found[d.id] = StaleItem("document", d.id, d.title, reason, detail)
    for item in await _older_figures(session):
        found.setdefault(item.id, item)
    for d in documents:
        if d.id not in found and d.year is not None and d.year < year:
            found[d.id] = StaleItem("document", d.id, d.title, OLDER_YEAR, f"{d.year} < {year}")
    return list(found.values())


def _until(until: date | None, today: date) -> tuple[str, str]:
    if until is None:
        return "", ""
    if until < today:
        return EXPIRED, _day(until)
    if until <= today + timedelta(days=SOON_DAYS):
        return EXPIRING, _day(until)
    return "", ""


def _entry_staleness(entry: FaqEntry, today: date, year: int) -> tuple[str, str]:
    if entry.valid_until is not None:
        return _until(entry.valid_until, today)
    dates = dates_in(entry.answer)
    if dates and max(dates) < today:
        return DATES_PAST, _day(max(dates))
    if entry.year is not None and entry.year < year:
        return OLDER_YEAR, f"{entry.year} < {year}"
    return "", ""


async def _older_figures(session: AsyncSession) -> list[StaleItem]:
    """Documents whose newest figures of an attribute are older than another document's."""
    newest = dict(
        (
            await session.execute(
                select(FactRow.attribute, func.max(FactRow.year)).group_by(FactRow.attribute)
            )
        ).all()
    )
    rows = (
        await session.execute(
            select(Document.id, Document.title, FactRow.attribute, func.max(FactRow.year))
            .join(FactRow, FactRow.document_id == Document.id)
            .group_by(Document.id, Document.title, FactRow.attribute)
            .order_by(Document.id)
        )
    ).all()
    items: dict[int, StaleItem] = {}  # one per document, its first attribute's
    for document_id, title, attribute, year in rows:
        if year < newest[attribute] and document_id not in items:
            detail = f"{attribute} {year} < {newest[attribute]}"
            items[document_id] = StaleItem("document", document_id, title, OLDER_FIGURES, detail)
    return list(items.values())


def _day(value: date) -> str:
    return value.strftime("%d/%m/%Y")
