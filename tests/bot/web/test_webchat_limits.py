"""The web chat's limits over real HTTP on 127.0.0.1 and the real database: the token buckets
(also shared by two apps on two connection pools), the text's length, the content type and
origin, and the per-conversation pending cap (the answers in flight: test_webchat_in_flight)."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.conversations.store import HELD_ERROR, record_inbound
from bot.core.clock import utcnow
from bot.core.messages import InboundMessage
from bot.core.settings import Settings
from bot.db.engine import make_engine, make_sessionmaker
from bot.db.models import Message, MessageStatus, RateBucket
from bot.runtime import Runtime
from bot.web.rate_limits import RateLimit, prune_full_buckets, take_token
from bot.web.webchat.protocol import MAX_CHAT_TEXT
from tests.bot.web._webchat import FAQ_QUESTION, chat_body, limited, parse_sse, stored_ids

Client = TestClient[web.Request, web.Application]
JSON = {"Content-Type": "application/json"}


def wait_of(response: Any) -> int:
    value = int(response.headers["Retry-After"])
    assert value >= 1
    return value


# -- token buckets -----------------------------------------------------------------------------


async def test_an_address_past_its_burst_gets_429_with_retry_after_and_nothing_stored(
    make_runtime: Callable[..., Runtime],
    serve_webchat: Any,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    client, _ = await serve_webchat(make_runtime(chat_ip_per_minute=1.0, chat_ip_burst=2))
    for n in range(2):  # a new visitor each time: only the address's bucket counts
        response = await client.post("/api/chat", json=chat_body("xin chào", visitor=f"v{n}"))
        assert response.status == 200
        await response.read()
    body = chat_body(FAQ_QUESTION, visitor="v3")
    refused = await client.post("/api/chat", json=body)
    assert refused.status == 429
    assert 55 <= wait_of(refused) <= 60  # one token a minute, the bucket just emptied
    assert "wait" in (await refused.json())["error"]
    assert body["message_id"] not in await stored_ids(sessionmaker)


async def test_a_visitor_past_their_burst_gets_429_while_another_visitor_is_answered(
    make_runtime: Callable[..., Runtime], serve_webchat: Any
) -> None:
    client, _ = await serve_webchat(make_runtime(chat_visitor_per_minute=6.0, chat_visitor_burst=1))
    first = await client.post("/api/chat", json=chat_body("xin chào", visitor="fast"))
    assert first.status == 200
    await first.read()
    again = await client.post("/api/chat", json=chat_body("xin chào nữa", visitor="fast"))
    assert again.status == 429
    assert 9 <= wait_of(again) <= 10  # a token every 10 s
    other = await client.post("/api/chat", json=chat_body("xin chào", visitor="slow"))
    assert other.status == 200


async def test_two_apps_on_their_own_connection_pools_share_one_bucket(
    settings: Settings,
    database_url: str,
    parts: AnswererParts,
    answerer: Answerer,
    serve_webchat: Any,
) -> None:
    """Two serve processes, as far as the database can tell: two engines, two apps."""
    engines = [make_engine(database_url), make_engine(database_url)]
    try:
        apps = []
        for engine in engines:
            runtime = Runtime(
                limited(settings, chat_ip_per_minute=1.0, chat_ip_burst=2),
                engine,
                make_sessionmaker(engine),
                parts,
                answerer,
            )
            apps.append((await serve_webchat(runtime))[0])
        first, second = apps
        # Bad bodies: each takes a token of the address, then is refused before storing.
        assert (await first.post("/api/chat", data=b"{}", headers=JSON)).status == 400
        assert (await second.post("/api/chat", data=b"{}", headers=JSON)).status == 400
        refused = await first.post("/api/chat", data=b"{}", headers=JSON)
        assert refused.status == 429
        assert (await second.post("/api/chat", data=b"{}", headers=JSON)).status == 429
    finally:
        async with make_sessionmaker(engines[0]).begin() as session:
            await session.execute(delete(RateBucket))
        for engine in engines:
            await engine.dispose()


async def test_a_bucket_refills_from_its_stored_time_and_full_ones_are_pruned(
    session: AsyncSession,
) -> None:
    fast = RateLimit(per_minute=600.0, burst=2)  # a token every 0.1 s
    assert await take_token(session, "test:a", fast) is None
    assert await take_token(session, "test:a", fast) is None
    wait_s = await take_token(session, "test:a", fast)
    assert wait_s is not None
    assert 0 < wait_s <= 0.1
    await asyncio.sleep(wait_s + 0.02)
    assert await take_token(session, "test:a", fast) is None  # one came back
    slow = RateLimit(per_minute=1.0, burst=5)
    assert await take_token(session, "test:b", slow) is None
    await asyncio.sleep(0.25)  # test:a is full again (2 tokens by 0.2 s); test:b is not
    assert await prune_full_buckets(session) == 1
    assert (await session.scalars(select(RateBucket.key))).all() == ["test:b"]


# -- what a request must be ----------------------------------------------------------------------


async def test_text_over_the_pages_2000_characters_is_a_413(
    make_runtime: Callable[..., Runtime],
    serve_webchat: Any,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    client, _ = await serve_webchat(make_runtime())
    body = chat_body("á" * (MAX_CHAT_TEXT + 1))
    response = await client.post("/api/chat", json=body)
    assert response.status == 413
    assert "2000 characters" in (await response.json())["error"]
    assert body["message_id"] not in await stored_ids(sessionmaker)
    # The page's textarea stops at the same length.
    page = await (await client.get("/")).text()
    assert re.findall(r'maxlength="([^"]*)"', page) == [str(MAX_CHAT_TEXT)]


async def test_a_text_of_2000_escaped_astral_characters_fits_the_body_limit(
    make_runtime: Callable[..., Runtime], serve_webchat: Any
) -> None:
    client, _ = await serve_webchat(make_runtime())
    body = json.dumps(chat_body("😀" * MAX_CHAT_TEXT), ensure_ascii=True).encode()
    response = await client.post("/api/chat", data=body, headers=JSON)
    assert response.status == 200  # answered: the longest text the page sends is accepted
    assert parse_sse(await response.text())[-1].name == "done"


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Content-Type": "text/plain", "Origin": "http://evil.example"}, 415),
        ({"Content-Type": "text/plain"}, 415),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
        ({**JSON, "Origin": "http://evil.example"}, 403),
    ],
)
async def test_a_cross_site_post_is_neither_answered_nor_stored(
    make_runtime: Callable[..., Runtime],
    serve_webchat: Any,
    sessionmaker: async_sessionmaker[AsyncSession],
    headers: dict[str, str],
    status: int,
) -> None:
    client, _ = await serve_webchat(make_runtime())
    body = chat_body(FAQ_QUESTION)
    response = await client.post("/api/chat", data=json.dumps(body), headers=headers)
    assert response.status == status
    assert (await response.json())["error"]
    assert body["message_id"] not in await stored_ids(sessionmaker)


# -- questions waiting in one conversation ---------------------------------------------------------


async def test_a_question_past_the_pending_cap_is_stored_held_and_refused_with_429(
    make_runtime: Callable[..., Runtime],
    serve_webchat: Any,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    client, _ = await serve_webchat(make_runtime(pending_per_conversation=2))
    async with sessionmaker.begin() as session:  # two questions of this visitor still waiting
        for _ in range(2):
            message = InboundMessage(
                channel="web",
                event_id=str(uuid.uuid4()),
                external_user_id="busy",
                kind="text",
                text="học phí?",
            )
            assert not (await record_inbound(session, message, max_pending=2)).held
    body = chat_body(FAQ_QUESTION, visitor="busy")
    response = await client.post("/api/chat", json=body)
    assert response.status == 429
    assert wait_of(response) >= 1
    async with sessionmaker() as session:
        held = await session.scalar(select(Message).where(Message.event_id == body["message_id"]))
    assert held is not None  # stored: nothing is lost
    assert held.status == MessageStatus.skipped
    assert held.error == HELD_ERROR
    again = await client.post("/api/chat", json=body)  # the same message sent again
    assert again.status == 429
    other = await client.post("/api/chat", json=chat_body(FAQ_QUESTION, visitor="calm"))
    assert other.status == 200


# -- the page's resend after a 429: the same message id, answered once -----------------------------


async def answers_to(
    sessionmaker: async_sessionmaker[AsyncSession], message_id: str
) -> tuple[Message, list[int]]:
    """The question stored for a message id, and the ids of the bot's replies to it."""
    async with sessionmaker() as session:
        question = await session.scalar(select(Message).where(Message.event_id == message_id))
        assert question is not None
        replies = await session.scalars(
            select(Message.id).where(Message.reply_to_id == question.id, Message.author == "bot")
        )
        return question, list(replies.all())


async def done_of(response: Any) -> Any:
    assert response.status == 200, await response.text()
    events = parse_sse(await response.text())
    assert [e.name for e in events].count("done") == 1
    return events[-1].data


async def test_a_question_refused_by_the_visitors_bucket_is_answered_once_when_sent_again(
    make_runtime: Callable[..., Runtime],
    serve_webchat: Any,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    limit = RateLimit(per_minute=20.0, burst=1)  # a question every 3 s
    client, _ = await serve_webchat(
        make_runtime(chat_visitor_per_minute=limit.per_minute, chat_visitor_burst=limit.burst)
    )
    async with sessionmaker.begin() as session:  # the visitor's other tab just asked
        assert await take_token(session, "chat-visitor:quick", limit) is None
    body = chat_body(FAQ_QUESTION, visitor="quick")
    refused = await client.post("/api/chat", json=body)
    assert refused.status == 429
    assert body["message_id"] not in await stored_ids(sessionmaker)
    await asyncio.sleep(wait_of(refused))
    first = await done_of(await client.post("/api/chat", json=body))  # the page's resend
    await asyncio.sleep(limit.interval_s)  # a page that missed the answer sends it once more
    again = await done_of(await client.post("/api/chat", json=body))
    assert again["reply_id"] == first["reply_id"] is not None
    question, replies = await answers_to(sessionmaker, body["message_id"])
    assert question.status == MessageStatus.answered
    assert replies == [first["reply_id"]]


async def test_a_held_question_sent_again_once_the_earlier_ones_are_answered_is_answered_once(
    make_runtime: Callable[..., Runtime],
    serve_webchat: Any,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    client, _ = await serve_webchat(make_runtime(pending_per_conversation=2))
    earlier = []
    async with sessionmaker.begin() as session:  # two questions of this visitor still waiting
        for _ in range(2):
            message = InboundMessage(
                channel="web",
                event_id=str(uuid.uuid4()),
                external_user_id="patient",
                kind="text",
                text="học phí?",
            )
            earlier.append((await record_inbound(session, message, max_pending=2)).message_id)
    body = chat_body(FAQ_QUESTION, visitor="patient")
    held = await client.post("/api/chat", json=body)
    assert held.status == 429
    async with sessionmaker.begin() as session:  # the earlier two are answered meanwhile
        await session.execute(
            update(Message)
            .where(Message.id.in_(earlier))
            .values(status=MessageStatus.answered, done_at=utcnow())
        )
    first = await done_of(await client.post("/api/chat", json=body))  # the page's resend
    assert first["tier"] == "faq"
    again = await done_of(await client.post("/api/chat", json=body))
    assert again["reply_id"] == first["reply_id"] is not None
    question, replies = await answers_to(sessionmaker, body["message_id"])
    assert question.status == MessageStatus.answered
    assert question.error is None
    assert replies == [first["reply_id"]]
