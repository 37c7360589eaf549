"""The web chat over real HTTP on 127.0.0.1: a visitor id unused for ``visitor_days`` no
longer opens its conversation."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.core.clock import utcnow
from bot.db.models import Contact, Conversation
from bot.runtime import Runtime
from tests.bot.web._webchat import FAQ_QUESTION, chat_body
from tests.bot.web.webchat._support import (
    DOCS_QUESTION,
    Client,
    get_history,
    make_app,
    post_chat,
    with_web,
)


async def conversation_of_visitor(
    sessionmaker: async_sessionmaker[AsyncSession], visitor: str
) -> int | None:
    async with sessionmaker() as session:
        found = await session.scalar(
            select(Conversation.id)
            .join(Contact, Contact.id == Conversation.contact_id)
            .where(Contact.channel == "web", Contact.external_id == visitor)
        )
    return found


async def last_wrote(
    sessionmaker: async_sessionmaker[AsyncSession], conversation_id: int, days_ago: float
) -> None:
    """Move the conversation's contact and its last message ``days_ago`` into the past."""
    then = utcnow() - timedelta(days=days_ago)
    async with sessionmaker.begin() as session:
        conversation = await session.get(Conversation, conversation_id)
        assert conversation is not None
        conversation.last_inbound_at = then
        await session.execute(
            update(Contact).where(Contact.id == conversation.contact_id).values(created_at=then)
        )


async def test_a_visitor_id_unused_for_visitor_days_no_longer_opens_its_conversation(
    client: Client, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    visitor = uuid.uuid4().hex
    await post_chat(client, chat_body(FAQ_QUESTION, visitor=visitor))
    old = await conversation_of_visitor(sessionmaker, visitor)
    assert old is not None

    await last_wrote(sessionmaker, old, days_ago=29)  # within the 30 days: still theirs
    kept = await (await get_history(client, visitor)).json()
    assert (kept["expired"], len(kept["messages"])) == (False, 2)

    await last_wrote(sessionmaker, old, days_ago=31)
    expired = await (await get_history(client, visitor)).json()
    assert expired == {"expired": True, "visitor_days": 30, "human": False, "messages": []}
    # a read writes nothing (a client looping on history costs no UPDATE): the id's next
    # message retires it
    assert await conversation_of_visitor(sessionmaker, visitor) == old
    # the same id asking again starts a new conversation, which holds only the new question
    await post_chat(client, chat_body(DOCS_QUESTION, visitor=visitor))
    async with sessionmaker() as session:  # kept for staff, under an id no visitor can send
        contact = await session.scalar(
            select(Contact).join(Conversation).where(Conversation.id == old)
        )
        assert contact is not None
        assert contact.external_id == f"retired:{contact.id}"
    new = await conversation_of_visitor(sessionmaker, visitor)
    assert new is not None
    assert new != old
    again = await (await get_history(client, visitor)).json()
    assert again["expired"] is False
    assert [m["text"] for m in again["messages"] if m["author"] == "user"] == [DOCS_QUESTION]


async def test_a_stale_visitor_id_that_writes_gets_a_new_conversation(
    runtime: Runtime, serve: Callable[..., Any], sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    week = replace(runtime, settings=with_web(runtime.settings, visitor_days=7))
    client = await serve(make_app(week))
    visitor = uuid.uuid4().hex
    await post_chat(client, chat_body(FAQ_QUESTION, visitor=visitor))
    old = await conversation_of_visitor(sessionmaker, visitor)
    assert old is not None
    await last_wrote(sessionmaker, old, days_ago=8)
    await post_chat(client, chat_body(DOCS_QUESTION, visitor=visitor))  # no history asked first
    new = await conversation_of_visitor(sessionmaker, visitor)
    assert new is not None
    assert new != old
    history = await (await get_history(client, visitor)).json()
    assert history["visitor_days"] == 7
    assert [m["text"] for m in history["messages"] if m["author"] == "user"] == [DOCS_QUESTION]
