"""``GET /api/chat/updates``: the long poll that brings a staff reply to an open web chat at once,
over real HTTP on 127.0.0.1, on real transactions (a NOTIFY is sent only on commit). Two apps on
one database stand for two serve processes: the reply stored through one wakes the page held by
the other."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.conversations.store import queue_staff_reply, upsert_conversation
from bot.core.settings import Settings
from bot.db.engine import make_sessionmaker
from bot.db.models import Author, Contact, Direction, Message, MessageStatus
from bot.runtime import Runtime
from bot.web.webchat.handlers import WebChat
from bot.web.webchat.updates import FALLBACK_WAIT_S, ReplyWatch
from tests.bot.web._support import ServeWebChat

Client = TestClient[web.Request, web.Application]
Serve = Callable[[Settings], Awaitable[tuple[Client, WebChat]]]


@pytest.fixture
async def committed(engine: AsyncEngine) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    """Real transactions; the web contacts the test made are deleted after it."""
    sessionmaker = make_sessionmaker(engine)
    async with sessionmaker() as session:
        before = set((await session.scalars(select(Contact.id))).all())
    yield sessionmaker
    async with sessionmaker.begin() as session:
        await session.execute(
            delete(Contact).where(Contact.channel == "web", Contact.id.not_in(before))
        )


@pytest.fixture
async def serve(
    engine: AsyncEngine,
    committed: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    serve_webchat: ServeWebChat,
) -> Serve:
    """Start a web chat app (a serve process) with these settings, its LISTEN connection up."""

    async def start(settings: Settings) -> tuple[Client, WebChat]:
        own_parts = replace(parts, settings=settings)
        runtime = Runtime(settings, engine, committed, own_parts, Answerer(own_parts, committed))
        client, chat = await serve_webchat(runtime)
        await asyncio.wait_for(chat.watch.ready(), 10)
        return client, chat

    return start


def waiting(settings: Settings, seconds: float) -> Settings:
    web_section = settings.web.model_copy(update={"updates_wait_s": seconds})
    return settings.model_copy(update={"web": web_section})


async def visitor_with_a_question(sm: async_sessionmaker[AsyncSession]) -> tuple[str, int, int]:
    """A web visitor who asked once: (visitor id, conversation id, the question's id)."""
    visitor = uuid.uuid4().hex
    async with sm.begin() as session:
        conversation = await upsert_conversation(session, "web", visitor)
        question = Message(
            conversation_id=conversation,
            channel="web",
            direction=Direction.inbound,
            author=Author.user,
            event_id=str(uuid.uuid4()),
            text="Em cần gặp cán bộ tư vấn",
            status=MessageStatus.skipped,
        )
        session.add(question)
        await session.flush()
        return visitor, conversation, question.id


async def updates(client: Client, visitor: str, since: int | str) -> tuple[int, Any]:
    response = await client.get(
        f"/api/chat/updates?since={since}", headers={"X-Visitor-Id": visitor}
    )
    return response.status, await response.json()


async def test_a_message_after_the_cursor_answers_at_once(
    serve: Serve, settings: Settings, committed: async_sessionmaker[AsyncSession]
) -> None:
    client, _ = await serve(waiting(settings, 60))
    visitor, _, question = await visitor_with_a_question(committed)
    status, body = await asyncio.wait_for(updates(client, visitor, question - 1), 10)
    assert (status, body) == (200, {"changed": True, "newest": question})


async def test_nothing_new_answers_unchanged_after_the_wait(
    serve: Serve, settings: Settings, committed: async_sessionmaker[AsyncSession]
) -> None:
    client, _ = await serve(waiting(settings, 0.3))
    visitor, _, question = await visitor_with_a_question(committed)
    assert await updates(client, visitor, question) == (200, {"changed": False, "newest": None})
    # A visitor who never wrote has nothing to wait for either.
    assert await updates(client, uuid.uuid4().hex, 0) == (200, {"changed": False, "newest": None})


async def test_a_staff_reply_through_another_process_wakes_the_held_request(
    serve: Serve, settings: Settings, committed: async_sessionmaker[AsyncSession]
) -> None:
    held_by, chat = await serve(waiting(settings, 60))
    await serve(waiting(settings, 60))  # the other serve process, where staff reply
    visitor, conversation, question = await visitor_with_a_question(committed)
    held = asyncio.create_task(updates(held_by, visitor, question))
    for _ in range(200):  # until the request is held (not a timing assertion)
        if chat.watch.held:
            break
        await asyncio.sleep(0.01)
    assert chat.watch.held == 1
    assert not held.done()

    async with committed.begin() as session:
        reply = await queue_staff_reply(session, conversation, "Chị gọi lại cho em nhé.", "a@b.vn")
    # Without the NOTIFY the request would stay held for its whole minute.
    status, body = await asyncio.wait_for(held, 10)
    assert (status, body) == (200, {"changed": True, "newest": reply})
    assert chat.watch.held == 0


async def test_a_reply_stored_while_the_request_reads_the_database_is_not_missed() -> None:
    watch = ReplyWatch()
    generation = watch.generation  # read before the request looks at the database
    watch.wake(41)  # the reply's NOTIFY, handled before the request was held
    with watch.holding(41, generation) as woken:
        assert woken.is_set()
    with watch.holding(42, generation) as other:
        assert not other.is_set()


async def test_without_the_listen_connection_a_request_waits_only_briefly() -> None:
    watch = ReplyWatch()  # never started: nothing LISTENs
    assert not watch.listening
    assert watch.wait_limit(25) == FALLBACK_WAIT_S
    assert watch.wait_limit(1) == 1


async def test_stopping_lets_every_held_request_go(
    serve: Serve, settings: Settings, committed: async_sessionmaker[AsyncSession]
) -> None:
    client, chat = await serve(waiting(settings, 60))
    visitor, _, question = await visitor_with_a_question(committed)
    held = asyncio.create_task(updates(client, visitor, question))
    for _ in range(200):
        if chat.watch.held:
            break
        await asyncio.sleep(0.01)
    await chat.watch.stop()
    assert await asyncio.wait_for(held, 10) == (200, {"changed": False, "newest": None})


@pytest.mark.parametrize(
    ("visitor", "since"),
    [("", "0"), ("bad id!", "0"), ("ok", "-1"), ("ok", "abc"), ("ok", "²"), ("ok", "9" * 19)],
)
async def test_a_bad_visitor_id_or_cursor_is_a_400(
    serve: Serve, settings: Settings, visitor: str, since: str
) -> None:
    client, _ = await serve(waiting(settings, 0.1))
    headers = {"X-Visitor-Id": visitor} if visitor else {}
    response = await client.get("/api/chat/updates", params={"since": since}, headers=headers)
    assert response.status == 400
    assert isinstance((await response.json())["error"], str)
