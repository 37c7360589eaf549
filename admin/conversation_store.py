"""Conversations as the admin reads them: a filtered list, newest activity first, and
transcripts with what each bot reply was based on.

Reading only; taking over, replying and handing back go through bot.conversations.store (the worker
then delivers through the channel's adapter). Search ignores case and diacritics, as the FAQ
list's does (admin.faq_store.folded). Values always travel as bound parameters.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import Select, exists, func, or_, select, true
from sqlalchemy.ext.asyncio import AsyncSession

from admin.contacts import contact_reference, shortened
from admin.faq_store import folded, like_pattern
from bot.conversations.store import history
from bot.core.citations import citation_label, public_url
from bot.core.types import CHANNELS
from bot.db.models import Author, Contact, Conversation, ConversationMode, Message

TRANSCRIPT_PAGE = 200
MAX_SEARCH = 200


def first_question(conversation_id: Any) -> Any:
    """The text of the conversation's first question (a text message from the student): with
    the channel and the time it names a contact the platform gave no name (a web visitor)."""
    return (
        select(Message.text)
        .where(
            Message.conversation_id == conversation_id,
            Message.author == Author.user,
            Message.kind == "text",
        )
        .order_by(Message.id)
        .limit(1)
        .scalar_subquery()
    )


def _day(value: str) -> date | None:
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


@dataclass(frozen=True)
class ConversationFilters:
    channel: str = ""
    mode: str = ""
    start: date | None = None  # last activity on or after this day (UTC)
    end: date | None = None  # ... and on or before this one
    q: str = ""
    page: int = 1

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> ConversationFilters:
        """Unknown values are ignored, not errors: a hand-edited URL still shows a list."""
        channel = query.get("channel", "")
        mode = query.get("mode", "")
        try:
            page = max(1, min(int(query.get("page", "1")), 100_000))
        except ValueError:
            page = 1
        return cls(
            channel=channel if channel in CHANNELS else "",
            mode=mode if mode in ConversationMode.__members__ else "",
            start=_day(query.get("from", "")),
            end=_day(query.get("to", "")),
            q=" ".join(query.get("q", "").split())[:MAX_SEARCH],
            page=page,
        )

    def query(self, **changes: Any) -> dict[str, str]:
        values = {
            "channel": self.channel,
            "mode": self.mode,
            "from": self.start.isoformat() if self.start else "",
            "to": self.end.isoformat() if self.end else "",
            "q": self.q,
            "page": str(self.page) if self.page > 1 else "",
        }
        values.update({k: str(v) for k, v in changes.items()})
        return {k: v for k, v in values.items() if v != ""}


@dataclass(frozen=True)
class ConversationRow:
    id: int
    channel: str
    mode: str
    name: str | None
    external_id: str
    last_text: str | None
    last_author: str | None
    activity: datetime
    waiting_since: datetime | None = None  # the student asked for a person, no staff reply yet
    flagged_since: datetime | None = None  # the student marked an answer 👎, not yet handled
    first_text: str | None = None  # the contact's first question: names a contact without one
    first_at: datetime | None = None  # when the conversation's first message came

    @property
    def contact_ref(self) -> str:
        """The contact's id as staff see it (a web visitor's only as a tag: admin.contacts)."""
        return contact_reference(self.channel, self.external_id)

    @property
    def needs_attention(self) -> bool:
        """ "cần xử lý": a request for a person or a 👎 staff have not handled yet."""
        return self.waiting_since is not None or self.flagged_since is not None

    @property
    def first_question(self) -> str:
        return shortened(self.first_text or "")


def _listing(filters: ConversationFilters) -> Select[Any]:
    last = (
        select(
            Message.text.label("text"),
            Message.author.label("author"),
            Message.created_at.label("at"),
        )
        .where(Message.conversation_id == Conversation.id)
        .order_by(Message.id.desc())
        .limit(1)
        .lateral("last")
    )
    first = (
        select(Message.created_at.label("at"))
        .where(Message.conversation_id == Conversation.id)
        .order_by(Message.id)
        .limit(1)
        .lateral("first")
    )
    activity = func.coalesce(last.c.at, Conversation.updated_at).label("activity")
    query = (
        select(
            Conversation.id,
            Conversation.channel,
            Conversation.mode,
            Conversation.waiting_since,
            Conversation.flagged_since,
            Contact.name,
            Contact.external_id,
            last.c.text.label("last_text"),
            last.c.author.label("last_author"),
            activity,
            first_question(Conversation.id).label("first_text"),
            first.c.at.label("first_at"),
        )
        .join(Contact, Contact.id == Conversation.contact_id)
        .outerjoin(last, true())
        .outerjoin(first, true())
    )
    if filters.channel:
        query = query.where(Conversation.channel == filters.channel)
    if filters.mode:
        query = query.where(Conversation.mode == ConversationMode(filters.mode))
    if filters.start:
        query = query.where(activity >= datetime.combine(filters.start, time(), UTC))
    if filters.end:
        after = datetime.combine(filters.end + timedelta(days=1), time(), UTC)
        query = query.where(activity < after)
    if filters.q:
        pattern = like_pattern(filters.q)
        said = exists(
            select(Message.id).where(
                Message.conversation_id == Conversation.id,
                folded(Message.text).like(pattern, escape="\\"),
            )
        )
        named = folded(func.coalesce(Contact.name, "")).like(pattern, escape="\\")
        query = query.where(or_(said, named, Contact.external_id == filters.q))
    return query


async def _one_page(
    session: AsyncSession, query: Select[Any], page: int, page_size: int
) -> tuple[list[Any], int]:
    """A page of ``query`` and the number of all its rows, in one statement (a window count:
    the search's per-message folding runs once, not once for the count and again for the page)."""
    ordered = (
        query.add_columns(func.count().over().label("total"))
        .order_by(
            # "cần xử lý" first (a request for a person, a 👎), the longest waiting at the top;
            # least() passes over a NULL.
            func.least(Conversation.waiting_since, Conversation.flagged_since).asc().nulls_last(),
            query.selected_columns.activity.desc(),
            Conversation.id.desc(),
        )
        .limit(page_size)
        .offset((page - 1) * page_size)
    )
    rows = list((await session.execute(ordered)).all())
    return rows, int(rows[0].total) if rows else 0


async def list_conversations(
    session: AsyncSession, filters: ConversationFilters, page_size: int
) -> tuple[list[ConversationRow], int]:
    """One page of conversations matching ``filters`` (those waiting for staff first, then the
    newest activity first), and the total.
    A page past the end shows the last one."""
    query = _listing(filters)
    rows, total = await _one_page(session, query, filters.page, page_size)
    if not rows and filters.page > 1:
        total = int(await session.scalar(select(func.count()).select_from(query.subquery())) or 0)
        if total:
            last = math.ceil(total / page_size)
            rows, total = await _one_page(session, query, last, page_size)
    return [
        ConversationRow(
            id=r.id,
            channel=r.channel,
            mode=r.mode.value,
            name=r.name,
            external_id=r.external_id,
            last_text=r.last_text,
            last_author=r.last_author.value if r.last_author is not None else None,
            activity=r.activity,
            waiting_since=r.waiting_since,
            flagged_since=r.flagged_since,
            first_text=r.first_text,
            first_at=r.first_at,
        )
        for r in rows
    ], total


# -- a transcript -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CitationView:
    n: Any
    title: str
    page: Any
    source: str
    href: str | None  # only http(s) links are made clickable


@dataclass(frozen=True)
class Line:
    """One message of a transcript, with what the page shows about it."""

    id: int
    direction: str
    author: str
    staff: str | None
    kind: str
    text: str
    question: str | None  # the standalone form of a follow-up, when it differs
    at: datetime
    status: str
    error: str | None
    attempts: int  # claims of it, answering or sending: a failed one says how many were tried
    tier: str | None
    score: float | None  # tier 1: FAQ similarity; tier 2 and fallback: best chunk similarity
    threshold: float | None  # the threshold that score was held against
    reason: str
    citations: list[CitationView] = field(default_factory=list)
    reply_to: int | None = None  # a reply's question
    # What a bot reply was stored with (reason, why, scores, timings): admin.explanations
    details: dict[str, Any] = field(default_factory=dict)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def reply_score(tier: str | None, scores: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """The score a bot reply rests on, and the threshold it was compared with."""
    if tier == "faq":
        # Since 1/4 a probability and the threshold this FAQ set for it; older replies kept the
        # similarity and t_faq.
        if "faq_probability" in scores:
            return _number(scores.get("faq_probability")), _number(scores.get("faq_threshold"))
        return _number(scores.get("faq")), _number(scores.get("t_faq"))
    chunks = scores.get("chunks")
    similarities = [
        s
        for c in (chunks if isinstance(chunks, list) else [])
        if isinstance(c, dict) and (s := _number(c.get("similarity"))) is not None
    ]
    best = max(similarities, default=_number(scores.get("doc_best")))
    return best, _number(scores.get("t_doc"))


def safe_href(url: Any) -> str | None:
    return public_url(url) if isinstance(url, str) else None


def _citations(raw: Any) -> list[CitationView]:
    found = []
    for c in raw if isinstance(raw, list) else []:
        if not isinstance(c, dict):
            continue
        found.append(
            CitationView(
                n=c.get("n"),
                title=citation_label(str(c.get("title") or ""), str(c.get("source") or "")),
                page=c.get("page"),
                source=str(c.get("source") or ""),
                href=safe_href(c.get("url")),
            )
        )
    return found


def line_of(m: Message) -> Line:
    details = m.details if isinstance(m.details, dict) else {}
    scores = details.get("scores")
    score, threshold = (None, None)
    if m.author.value == "bot" and m.tier:
        score, threshold = reply_score(m.tier, scores if isinstance(scores, dict) else {})
    staff = details.get("staff")
    return Line(
        id=m.id,
        direction=m.direction.value,
        author=m.author.value,
        staff=staff if isinstance(staff, str) else None,
        kind=m.kind,
        text=m.text,
        question=m.question if m.question and m.question != m.text else None,
        at=m.created_at,
        status=m.status.value,
        error=m.error,
        attempts=m.attempts,
        tier=m.tier if m.author.value == "bot" else None,
        score=score,
        threshold=threshold,
        reason=str(details.get("reason") or ""),
        citations=_citations(m.citations),
        reply_to=m.reply_to_id,
        details=details if m.author.value == "bot" else {},
    )


@dataclass(frozen=True)
class Transcript:
    conversation: Conversation
    contact: Contact
    lines: list[Line]
    older: int | None  # ``before`` for the previous page, None at the start
    first_text: str | None = None  # the contact's first question
    first_at: datetime | None = None  # when the conversation's first message came

    @property
    def contact_ref(self) -> str:
        """The contact's id as staff see it (a web visitor's only as a tag: admin.contacts)."""
        return contact_reference(self.contact.channel, self.contact.external_id)

    @property
    def first_question(self) -> str:
        return shortened(self.first_text or "")

    @property
    def needs_attention(self) -> bool:
        c = self.conversation
        return c.waiting_since is not None or c.flagged_since is not None


async def transcript(
    session: AsyncSession, conversation_id: int, before: int | None = None
) -> Transcript | None:
    conversation = await session.get(Conversation, conversation_id)
    if conversation is None:
        return None
    contact = await session.get(Contact, conversation.contact_id)
    assert contact is not None  # contact_id is a non-null foreign key
    rows = await history(session, conversation_id, before_id=before, limit=TRANSCRIPT_PAGE)
    older = rows[0].id if len(rows) == TRANSCRIPT_PAGE else None
    first_at = await session.scalar(
        select(Message.created_at)
        .where(Message.conversation_id == conversation_id)
        .order_by(Message.id)
        .limit(1)
    )
    first_text = await session.scalar(select(first_question(conversation_id)))
    return Transcript(
        conversation, contact, [line_of(m) for m in rows], older, first_text, first_at
    )
