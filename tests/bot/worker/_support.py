"""What the worker's tests share: questions put in the inbox as a web visitor would."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.conversations.store import record_inbound
from bot.core.messages import InboundMessage


async def ask(sm: async_sessionmaker[AsyncSession], user: str, *questions: str) -> list[int]:
    """Store ``questions`` from the web visitor ``user``, committed; their message ids."""
    ids = []
    async with sm.begin() as session:
        for question in questions:
            recorded = await record_inbound(
                session,
                InboundMessage(
                    channel="web",
                    event_id=uuid.uuid4().hex,
                    external_user_id=user,
                    kind="text",
                    text=question,
                ),
            )
            assert recorded.message_id is not None
            ids.append(recorded.message_id)
    return ids
