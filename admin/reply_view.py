"""One reply of tuvan as an admissions officer reads it, on the conversation view and in Try it:
the answer with its Markdown rendered (tables as tables), where it came from (the FAQ entry,
the documents, as titled links) and how sure tuvan was, in words.

What the engine weighed on the way (the guard's reasons, scores, tiers, the candidates) is not
here: admin.explanations keeps it apart, and the pages fold it under "Chi tiết kỹ thuật".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admin.answer_markup import answer_html
from admin.confidence import SCORED_TIERS, is_unsure, sureness, unsure_sentence
from admin.i18n import Translator, add_strings
from bot.db.models import FaqEntry

add_strings(
    {
        "reply.sources": ("Nguồn", "Sources"),
        "reply.entry": ("#{id} · {question}", "#{id} · {question}"),
        "reply.entry_gone": (
            "Câu hỏi thường gặp #{id} (đã xoá)",
            "FAQ entry #{id} (deleted)",
        ),
        "reply.page": ("trang {page}", "page {page}"),
        "reply.tier": ("Tầng trả lời: {tier}", "Answered by: {tier}"),
    }
)


@dataclass(frozen=True)
class SourceLink:
    """Where a reply came from: a document (its title, its public address if it has one) or an
    entry of this FAQ (``entry``: the page links to the entry's admin page)."""

    label: str
    href: str | None = None
    page: Any = None
    entry: int | None = None
    n: Any = None  # its number in the reply ("[1]"), for a citation


@dataclass(frozen=True)
class ReplyView:
    """What a page shows of a bot reply above its technical details."""

    html: Markup
    sources: list[SourceLink] = field(default_factory=list)
    sure: str | None = None  # the key of the confidence's words; None: the reply has none
    unsure: str = ""  # why it goes to "Cần xem lại" for its confidence, or ""

    @property
    def level(self) -> str:
        """The words' band as a style name: high, mid, low."""
        return _LEVELS.get(self.sure or "", "")


_LEVELS = {"confidence.sure": "high", "confidence.fairly": "mid", "confidence.unsure_word": "low"}


def faq_id_of(tier: str | None, details: Mapping[str, Any]) -> int | None:
    """The FAQ entry a tier-1 reply gave, from what it was stored with."""
    value = details.get("faq_id")
    if tier != "faq" or not isinstance(value, int) or isinstance(value, bool):
        return None
    return value


async def faq_questions(session: AsyncSession, ids: Iterable[int]) -> dict[int, str]:
    """The question of each FAQ entry of ``ids`` that still exists."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    rows = await session.execute(
        select(FaqEntry.id, FaqEntry.question).where(FaqEntry.id.in_(wanted))
    )
    return {entry_id: question for entry_id, question in rows}


def reply_view(
    t: Translator,
    text: str,
    tier: str | None,
    confidence: float | None,
    review_below: float,
    *,
    entry: tuple[int, str | None] | None = None,
    cited: Iterable[SourceLink] = (),
) -> ReplyView:
    """A reply of ``tier`` laid out: ``entry`` is the FAQ entry that answered (its id and its
    question, None when it is gone), ``cited`` the reply's citations in their order."""
    sources: list[SourceLink] = []
    if entry is not None:
        entry_id, question = entry
        if question is None:
            sources.append(SourceLink(t("reply.entry_gone", id=entry_id)))
        else:
            label = t("reply.entry", id=entry_id, question=question)
            sources.append(SourceLink(label, entry=entry_id))
    sources += [c for c in cited if c.label or c.href]
    scored = tier in SCORED_TIERS  # a fallback claims nothing to be sure of
    return ReplyView(
        html=answer_html(text),
        sources=sources,
        sure=sureness(confidence, review_below) if scored and confidence is not None else None,
        unsure=(
            unsure_sentence(t, confidence, review_below)
            if confidence is not None and is_unsure(tier, confidence, review_below)
            else ""
        ),
    )
