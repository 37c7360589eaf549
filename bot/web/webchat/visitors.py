"""A web visitor's id: the browser's key to its conversation, and when it stops being one.

The page makes the id (128 random bits), keeps it in its ``localStorage`` and sends it in the
body of ``POST /api/chat`` or in the ``X-Visitor-Id`` header of ``GET /api/chat/history``:
never in a URL, which proxies and servers write to their logs.

Whoever holds the id reads the conversation, so it must not live for ever: an id not used to
write for ``TUVAN_WEB__VISITOR_DAYS`` no longer opens its conversation. Its contact is retired
(its external id becomes ``retired:<contact id>``, which no visitor id can be: ``VISITOR_ID``
has no colon), the conversation stays for staff, and the id's next message starts a new one.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.clock import utcnow
from bot.db.models import Contact, Conversation
from bot.runtime import Runtime
from bot.web.webchat.answering import CHANNEL

VISITOR_HEADER = "X-Visitor-Id"
RETIRED_PREFIX = "retired:"


def _stale(visitor_id: str, cutoff: datetime) -> ColumnElement[bool]:
    """The visitor's contact, made before ``cutoff`` and not written from since."""
    written_since = (
        select(Conversation.id)
        .where(Conversation.contact_id == Contact.id, Conversation.last_inbound_at >= cutoff)
        .exists()
    )
    return and_(
        Contact.channel == CHANNEL,
        Contact.external_id == visitor_id,
        Contact.created_at < cutoff,
        ~written_since,
    )


async def retire_stale_visitor(
    session: AsyncSession, visitor_id: str, *, days: int, now: datetime
) -> bool:
    """Detach ``visitor_id`` from its conversation if it has not written for ``days`` (nor
    was its contact made within them); True if it was."""
    retired = await session.execute(
        update(Contact)
        .where(_stale(visitor_id, now - timedelta(days=days)))
        .values(external_id=func.concat(RETIRED_PREFIX, Contact.id))
        .returning(Contact.id)
    )
    return retired.first() is not None


async def is_stale(session: AsyncSession, visitor_id: str, *, days: int, now: datetime) -> bool:
    """Whether ``retire_stale_visitor`` would retire ``visitor_id``, read without writing (the
    page's history read; the id's next message retires it)."""
    cutoff = now - timedelta(days=days)
    found = select(Contact.id).where(_stale(visitor_id, cutoff)).exists()
    return bool(await session.scalar(select(found)))


async def retire_if_stale(runtime: Runtime, visitor_id: str) -> bool:
    """``retire_stale_visitor`` in a transaction of its own, with the configured days."""
    async with runtime.sessionmaker.begin() as session:
        return await retire_stale_visitor(
            session, visitor_id, days=runtime.settings.web.visitor_days, now=utcnow()
        )
