"""The FAQ as the admin reads and writes it: filtered lists, checked forms, audited changes.

Every change re-embeds what it touched before the transaction commits (retrieval.index), so
the very next question is matched against the new text; and writes an audit entry (entity
``faq``, the entry's id) in the same transaction.

Search is accent-insensitive on both sides: the query is folded with ``retrieval.text.fold``
and the stored text by the same steps in SQL with built-in functions (``normalize`` to NFD,
marks removed, đ → d; the store has no ``unaccent`` extension). A ``translate()`` over a table
of every accented letter was tried first: its per-character scan of the table took 7 s on 1,000
entries with 10,000 phrasings. Values always travel as bound parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import ColumnElement, Select, exists, func, literal, literal_column, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admin import audit
from bot.db.models import FaqEntry, FaqOrigin, FaqStatus, FaqVariant, VariantOrigin
from retrieval.index.faq_entries import FaqDraft, FaqValidity, drop_folded_variants, write_faq
from retrieval.index.indexer import Indexer
from retrieval.text.folding import fold

MAX_QUESTION = 2000
MAX_ANSWER = 20_000
MAX_SOURCE = 2000
LANGUAGE_CHOICES = ("vi", "en")


# Combining marks (U+0300-U+036F), as a regular-expression class: what ``fold`` strips after NFD.
_MARKS = "[\u0300-\u036f]+"


def folded(column: Any) -> ColumnElement[str]:
    """``column`` folded in SQL as ``fold`` folds in Python: NFD, marks dropped, đ → d, lower
    case, whitespace collapsed. Built-in functions only, each linear in the text."""
    decomposed = func.normalize(column, literal_column("NFD"))
    bare = func.regexp_replace(decomposed, literal(_MARKS), literal(""), literal("g"))
    lowered = func.translate(func.lower(bare), literal("đĐ"), literal("dd"))
    return func.regexp_replace(lowered, literal(r"\s+"), literal(" "), literal("g"))


def like_pattern(text: str) -> str:
    escaped = fold(text).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


# -- the list ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FaqFilters:
    q: str = ""
    status: str = ""
    language: str = ""
    source: str = ""
    origin: str = ""
    review: bool = False
    page: int = 1

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> FaqFilters:
        """Unknown values are ignored, not errors: a hand-edited URL still shows a list."""

        def choice(name: str, allowed: object) -> str:
            value = query.get(name, "")
            return value if value in allowed else ""  # type: ignore[operator]

        try:
            page = max(1, min(int(query.get("page", "1")), 100_000))
        except ValueError:
            page = 1
        return cls(
            q=query.get("q", "").strip()[:200],
            status=choice("status", FaqStatus.__members__),
            language=choice("language", LANGUAGE_CHOICES),
            source=query.get("source", "").strip()[:MAX_SOURCE],
            origin=choice("origin", FaqOrigin.__members__),
            review=query.get("review") == "1",
            page=page,
        )

    def query(self, **changes: Any) -> dict[str, str]:
        """These filters as URL parameters (empty ones left out), with ``changes`` applied."""
        values = {
            "q": self.q,
            "status": self.status,
            "language": self.language,
            "source": self.source,
            "origin": self.origin,
            "review": "1" if self.review else "",
            "page": str(self.page) if self.page > 1 else "",
        }
        values.update({k: str(v) for k, v in changes.items()})
        return {k: v for k, v in values.items() if v}


def _filtered(filters: FaqFilters) -> Select[FaqEntry]:
    stmt = select(FaqEntry)
    if filters.q:
        pattern = like_pattern(filters.q)
        in_variants = exists().where(
            FaqVariant.faq_id == FaqEntry.id, folded(FaqVariant.text).like(pattern, escape="\\")
        )
        stmt = stmt.where(
            or_(
                folded(FaqEntry.question).like(pattern, escape="\\"),
                folded(FaqEntry.answer).like(pattern, escape="\\"),
                in_variants,
            )
        )
    if filters.status:
        stmt = stmt.where(FaqEntry.status == FaqStatus(filters.status))
    if filters.language:
        stmt = stmt.where(FaqEntry.language == filters.language)
    if filters.source:
        stmt = stmt.where(FaqEntry.source == filters.source)
    if filters.origin:
        stmt = stmt.where(FaqEntry.origin == FaqOrigin(filters.origin))
    if filters.review:
        stmt = stmt.where(FaqEntry.needs_review.is_(True))
    return stmt


async def list_entries(
    session: AsyncSession, filters: FaqFilters, page_size: int
) -> tuple[list[FaqEntry], int]:
    """One page of entries (newest change first) and how many match in all.

    The total rides on the page's rows as a window count: the folded search is evaluated once.
    """
    stmt = _filtered(filters).add_columns(func.count().over().label("total"))
    rows = (
        await session.execute(
            stmt.options(selectinload(FaqEntry.variants))
            .order_by(FaqEntry.updated_at.desc(), FaqEntry.id.desc())
            .offset((filters.page - 1) * page_size)
            .limit(page_size)
        )
    ).all()
    if rows:
        return [row[0] for row in rows], int(rows[0][1])
    if filters.page == 1:
        return [], 0
    # Past the last page: say how many there are, so the pager can lead back.
    total = await session.scalar(select(func.count()).select_from(_filtered(filters).subquery()))
    return [], int(total or 0)


async def known_sources(session: AsyncSession) -> list[str]:
    rows = await session.scalars(
        select(FaqEntry.source).where(FaqEntry.source.is_not(None)).distinct().limit(500)
    )
    return sorted(s for s in rows if s)


async def get_entry(session: AsyncSession, faq_id: int) -> FaqEntry | None:
    return await session.scalar(
        select(FaqEntry).where(FaqEntry.id == faq_id).options(selectinload(FaqEntry.variants))
    )


# -- the form ---------------------------------------------------------------------------------


@dataclass
class EntryForm:
    """What the editor sends, checked; ``errors`` holds i18n keys per field."""

    question: str = ""
    answer: str = ""
    source: str = ""
    source_url: str = ""
    language: str = "vi"
    status: str = FaqStatus.draft.value
    needs_review: bool = False
    year: str = ""  # the year it speaks of ("" none)
    valid_until: str = ""  # YYYY-MM-DD, as a date field sends it ("" none)
    validity_given: bool = False  # the form had the fields (an API client may leave them out)
    errors: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, entry: FaqEntry) -> EntryForm:
        return cls(
            question=entry.question,
            answer=entry.answer,
            source=entry.source or "",
            source_url=entry.source_url or "",
            language=entry.language,
            status=entry.status.value,
            needs_review=entry.needs_review,
            year=str(entry.year or ""),
            valid_until=entry.valid_until.isoformat() if entry.valid_until else "",
        )

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> EntryForm:
        def text(name: str, limit: int) -> str:
            value = data.get(name)
            if not isinstance(value, str):
                return ""
            return value.replace("\x00", "").replace("\r\n", "\n").strip()[: limit + 1]

        form = cls(
            question=" ".join(text("question", MAX_QUESTION).split()),
            answer=text("answer", MAX_ANSWER),
            source=text("source", MAX_SOURCE),
            source_url=text("source_url", MAX_SOURCE),
            language=text("language", 8),
            status=text("status", 16),
            needs_review=data.get("needs_review") == "1",
            year=text("year", 4),
            valid_until=text("valid_until", 10),
            validity_given="year" in data or "valid_until" in data,
        )
        form.check()
        return form

    def check(self) -> None:
        if not self.question:
            self.errors["question"] = "faq.error.question_required"
        elif len(self.question) > MAX_QUESTION:
            self.errors["question"] = "faq.error.too_long"
        if not self.answer:
            self.errors["answer"] = "faq.error.answer_required"
        elif len(self.answer) > MAX_ANSWER:
            self.errors["answer"] = "faq.error.too_long"
        if len(self.source) > MAX_SOURCE:
            self.errors["source"] = "faq.error.too_long"
        if self.source_url:
            parts = urlsplit(self.source_url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                self.errors["source_url"] = "faq.error.url"
        if self.language not in LANGUAGE_CHOICES:
            self.errors["language"] = "faq.error.choice"
        if self.status not in FaqStatus.__members__:
            self.errors["status"] = "faq.error.choice"
        if self.year and not (self.year.isdigit() and 2000 <= int(self.year) <= 2100):
            self.errors["year"] = "faq.error.year"
        if self.valid_until and self.until is None:
            self.errors["valid_until"] = "faq.error.date"

    @property
    def until(self) -> date | None:
        try:
            return date.fromisoformat(self.valid_until) if self.valid_until else None
        except ValueError:
            return None


def snapshot(entry: FaqEntry) -> dict[str, Any]:
    """The fields the history shows (variants are recorded by their own add/remove entries)."""
    return {
        "question": entry.question,
        "answer": entry.answer,
        "source": entry.source,
        "source_url": entry.source_url,
        "language": entry.language,
        "status": entry.status.value,
        "needs_review": entry.needs_review,
        "year": entry.year,
        "valid_until": entry.valid_until.isoformat() if entry.valid_until else None,
    }


async def save_entry(
    session: AsyncSession,
    indexer: Indexer,
    entry: FaqEntry | None,
    form: EntryForm,
    actor: str,
) -> FaqEntry:
    """Create (``entry`` None) or update an entry from a checked form, re-embedded at once
    (``write_faq``, the writer every entry's text goes through), and audited."""
    before = snapshot(entry) if entry is not None else None
    # The year and valid-until date are staff's if they changed them in this save (a new
    # entry: if they gave them); else the writer reads them again from a changed text.
    if entry is None:
        validity_set = bool(form.year or form.valid_until)
    else:
        validity_set = form.validity_given and (
            form.year != str(entry.year or "") or form.until != entry.valid_until
        )
    draft = FaqDraft(
        question=form.question,
        answer=form.answer,
        source=form.source or None,
        source_url=form.source_url or None,
        language=form.language,
        status=FaqStatus(form.status),
        updated_by=actor,
        validity=FaqValidity(int(form.year) if form.year else None, form.until)
        if validity_set
        else None,
    )
    entry = await write_faq(session, indexer, entry, draft)
    entry.needs_review = form.needs_review
    if not form.needs_review:
        entry.review_note = None
    after = snapshot(entry)
    if before != after:
        await audit.record(
            session, actor, "create" if before is None else "update", "faq", entry.id, before, after
        )
    return entry


async def set_status(
    session: AsyncSession, entry: FaqEntry, status: FaqStatus, actor: str, action: str
) -> None:
    """Publish (approve) or unpublish; publishing also settles a pending review."""
    before = snapshot(entry)
    entry.status = status
    if status == FaqStatus.published:
        entry.needs_review = False
        entry.review_note = None
    entry.updated_by = actor
    await session.flush()
    await audit.record(session, actor, action, "faq", entry.id, before, snapshot(entry))


async def delete_entry(session: AsyncSession, entry: FaqEntry, actor: str, action: str) -> None:
    await audit.record(session, actor, action, "faq", entry.id, snapshot(entry), None)
    await session.delete(entry)
    await session.flush()


async def add_variant(
    session: AsyncSession, indexer: Indexer, entry: FaqEntry, text: str, actor: str
) -> bool:
    """Add a staff phrasing (embedded at once); False when the entry already has it."""
    text = " ".join(text.split())[:MAX_QUESTION]
    if not text or text == entry.question or any(v.text == text for v in entry.variants):
        return False
    [vector] = await indexer.questions([text])
    entry.variants.append(
        FaqVariant(
            text=text,
            origin=VariantOrigin.staff,
            keyword_text=indexer.processor.keyword_text(text),
            embedding=vector,
        )
    )
    entry.updated_by = actor
    await session.flush()
    await drop_folded_variants(session, entry)
    await audit.record(
        session, actor, "add_variant", "faq", entry.id, None, {"variant": text, "origin": "staff"}
    )
    return True


async def remove_variant(
    session: AsyncSession, indexer: Indexer, entry: FaqEntry, variant_id: int, actor: str
) -> bool:
    """Remove a staff or generated phrasing (and any copy without diacritics a tuvan before 2/6
    left: those are never kept)."""
    variant = next((v for v in entry.variants if v.id == variant_id), None)
    if variant is None or variant.origin == VariantOrigin.folded:
        return False
    removed = {"variant": variant.text, "origin": variant.origin.value}
    entry.variants.remove(variant)
    entry.updated_by = actor
    await session.flush()
    await drop_folded_variants(session, entry)
    await audit.record(session, actor, "remove_variant", "faq", entry.id, removed, None)
    return True
