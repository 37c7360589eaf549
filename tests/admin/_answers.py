"""Bot answers stored as the worker stores them (a question, the answer a second later, a vote),
for the pages that read them, and the "Cần xem lại" list read back from its HTML."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.conversations.store import upsert_conversation
from bot.db.models import AnswerFeedback, Author, Direction, Message, MessageStatus

SURE = {"scores": {"chunks": [{"similarity": 0.95}], "t_doc": 0.84}, "reason": "ok"}
FALLBACK = {
    "scores": {"doc_best": 0.71, "t_doc": 0.84},
    "reason": "FAQ: similarity 0.844 below t_faq 0.925; documents: best similarity 0.710",
}
_contacts = iter(range(1, 1_000_000))


async def conversation(sm: async_sessionmaker[AsyncSession]) -> int:
    async with sm.begin() as session:
        return await upsert_conversation(session, "telegram", f"recheck-{next(_contacts)}")


async def exchange(
    sm: async_sessionmaker[AsyncSession],
    question: str,
    tier: str | None,
    at: datetime,
    *,
    conv: int | None = None,
    details: dict[str, Any] | None = None,
    citations: list[dict[str, Any]] | None = None,
    answer: str = "Câu trả lời.",
    standalone: str | None = None,
) -> tuple[int, int]:
    """A question and the bot's answer a second later, stored as the worker stores them:
    (conversation id, the answer's message id)."""
    conv = conv if conv is not None else await conversation(sm)
    async with sm.begin() as session:
        q = Message(
            conversation_id=conv,
            channel="telegram",
            direction=Direction.inbound,
            author=Author.user,
            text=question,
            question=standalone,  # a follow-up's standalone form, as the worker stores it
            tier=tier,
            status=MessageStatus.answered,
            created_at=at,
            done_at=at + timedelta(seconds=1),
        )
        session.add(q)
        await session.flush()
        reply = Message(
            conversation_id=conv,
            channel="telegram",
            direction=Direction.outbound,
            author=Author.bot,
            text=answer,
            tier=tier,
            citations=citations or [],
            details=details if details is not None else SURE,
            status=MessageStatus.sent,
            reply_to_id=q.id,
            created_at=at + timedelta(seconds=1),
        )
        session.add(reply)
        await session.flush()
        return conv, reply.id


async def vote(
    sm: async_sessionmaker[AsyncSession], answer_id: int, value: int, at: datetime
) -> None:
    async with sm.begin() as session:
        reply = await session.get(Message, answer_id)
        assert reply is not None
        found = await session.scalar(
            select(AnswerFeedback).where(AnswerFeedback.message_id == answer_id)
        )
        if found is None:
            found = AnswerFeedback(
                message_id=answer_id, conversation_id=reply.conversation_id, channel="telegram"
            )
            session.add(found)
        found.value = value
        found.created_at = found.updated_at = at


def listed(page: str) -> dict[int, set[str]]:
    """The answers the queue lists, with their signals."""
    out: dict[int, set[str]] = {}
    for answer_id in re.findall(r'data-testid="member-(\d+)"', page):
        out[int(answer_id)] = set(re.findall(rf'data-testid="signal-{answer_id}-(\w+)"', page))
    return out


def outside_details(page: str) -> str:
    """The page without its "Chi tiết kỹ thuật" disclosures."""
    return re.sub(
        r"<details[^>]*><summary>Chi tiết kỹ thuật</summary>.*?</details>", "", page, flags=re.S
    )
