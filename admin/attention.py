"""The conversations that need staff, "cần xử lý": the student asked for a person
(``waiting_since``) or marked an answer 👎 (``flagged_since``). A staff reply clears both
(bot.conversations.store.queue_staff_reply); so does the "Đã xử lý" button (``mark_handled``).
The admin lists them first and counts them in its menu on every page.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import Conversation

NEEDS_ATTENTION = or_(
    Conversation.waiting_since.is_not(None), Conversation.flagged_since.is_not(None)
)


async def needs_attention_count(session: AsyncSession) -> int:
    """How many conversations need staff (the menu's count on every page: a partial index,
    ``ix_conversations_needs_attention``, holds only those)."""
    return int(
        await session.scalar(select(func.count()).select_from(Conversation).where(NEEDS_ATTENTION))
        or 0
    )


async def mark_handled(session: AsyncSession, conversation_id: int) -> dict[str, Any] | None:
    """Clear the request for a person and the 👎 flag ("Đã xử lý"); what was set before (for the
    audit log), or None when the conversation does not exist."""
    conversation = await session.get(Conversation, conversation_id, with_for_update=True)
    if conversation is None:
        return None
    before = {
        "waiting_since": conversation.waiting_since.isoformat()
        if conversation.waiting_since
        else None,
        "flagged_since": conversation.flagged_since.isoformat()
        if conversation.flagged_since
        else None,
    }
    conversation.waiting_since = None
    conversation.flagged_since = None
    await session.flush()
    return before
