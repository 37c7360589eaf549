"""The web chat's 👍/👎 (``POST /api/chat/feedback``) over real HTTP on 127.0.0.1: a vote on
an answer the visitor got is stored, flags the conversation on 👎, shows in the history, and is
never answered; a vote on someone else's answer or on a staff reply is refused; bad requests
get a clear 4xx, never a 500."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from admin.recheck_queue import queue_item
from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.conversations.store import contact_conversation, queue_staff_reply
from bot.core.settings import Settings
from bot.db.models import AnswerFeedback, Conversation, Message
from tests.bot.web._support import runtime_with
from tests.bot.web._webchat import ROOMY

Client = TestClient[web.Request, web.Application]
FAQ_QUESTION = "Chỉ tiêu ngành Khoa học Máy tính năm 2026 là bao nhiêu?"
SITE = "https://tuyensinh.shut.example.vn"
ORIGINS = {"allowed_origins": (SITE,)}


@pytest.fixture
async def client(
    serve_webchat: Any,
    settings: Settings,
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
) -> Client:
    started, _ = await serve_webchat(
        runtime_with(settings, engine, sessionmaker, parts, answerer, web_changes=ORIGINS, **ROOMY)
    )
    return started


async def ask(client: Client, visitor: str, text: str = FAQ_QUESTION) -> int:
    """The reply id of the answer to ``text``, asked as the page asks it."""
    body = {"visitor_id": visitor, "message_id": str(uuid.uuid4()), "text": text}
    response = await client.post("/api/chat", json=body)
    assert response.status == 200
    events = (await response.text()).strip().split("\n\n")
    done = json.loads(events[-1].split("data: ", 1)[1])
    assert done["tier"] == "faq"
    return int(done["reply_id"])


async def vote(
    client: Client, visitor: str | None, body: Any, headers: dict[str, str] | None = None
) -> ClientResponse:
    sent = {"Content-Type": "application/json"}
    if visitor is not None:
        sent["X-Visitor-Id"] = visitor
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return await client.post("/api/chat/feedback", data=data, headers={**sent, **(headers or {})})


async def votes(session: AsyncSession, reply_id: int) -> list[tuple[str, int]]:
    rows = await session.execute(
        select(AnswerFeedback.channel, AnswerFeedback.value).where(
            AnswerFeedback.message_id == reply_id
        )
    )
    return [(c, v) for c, v in rows]


async def flagged(session: AsyncSession, visitor: str) -> bool:
    conversation = await contact_conversation(session, "web", visitor)
    assert conversation is not None
    await session.refresh(conversation)
    return conversation.flagged_since is not None


async def test_a_visitor_votes_on_an_answer_and_the_history_shows_the_choice(
    client: Client, session: AsyncSession, parts: AnswererParts
) -> None:
    visitor = f"fb-{uuid.uuid4().hex}"
    reply_id = await ask(client, visitor)
    messages_before = await session.scalar(select(func.count()).select_from(Message))

    response = await vote(client, visitor, {"reply_id": reply_id, "value": -1})
    assert response.status == 200
    assert await response.json() == {"reply_id": reply_id, "value": -1}
    assert await votes(session, reply_id) == [("web", -1)]
    assert await flagged(session, visitor)
    # Staff see it in "Cần xem lại" at their next page load (the queue is read per request).
    listed = await queue_item(session, reply_id, parts.processor)
    assert listed is not None
    assert "disliked" in listed.signals

    history = await client.get("/api/chat/history", headers={"X-Visitor-Id": visitor})
    entries = (await history.json())["messages"]
    assert [(m["author"], m["vote"]) for m in entries] == [("user", None), ("bot", -1)]

    response = await vote(client, visitor, {"reply_id": reply_id, "value": 1})
    assert response.status == 200
    assert await votes(session, reply_id) == [("web", 1)]
    assert not await flagged(session, visitor)
    listed = await queue_item(session, reply_id, parts.processor)
    assert listed is not None
    assert "disliked" not in listed.signals
    # A vote is not a question: no message stored, nothing answered.
    assert await session.scalar(select(func.count()).select_from(Message)) == messages_before


async def test_a_vote_on_another_visitors_answer_or_a_staff_reply_is_refused(
    client: Client, session: AsyncSession
) -> None:
    lan, minh = f"fb-{uuid.uuid4().hex}", f"fb-{uuid.uuid4().hex}"
    reply_id = await ask(client, lan)
    await ask(client, minh)
    response = await vote(client, minh, {"reply_id": reply_id, "value": -1})
    assert response.status == 404
    assert "reply_id" in (await response.json())["error"]
    assert await votes(session, reply_id) == []
    assert not await flagged(session, lan)

    conversation = await contact_conversation(session, "web", lan)
    assert isinstance(conversation, Conversation)
    staff_id = await queue_staff_reply(session, conversation.id, "Chị gọi lại em nhé.", "an")
    await session.commit()
    response = await vote(client, lan, {"reply_id": staff_id, "value": -1})
    assert response.status == 404
    assert await votes(session, staff_id) == []


@pytest.mark.parametrize(
    ("body", "headers", "visitor", "status"),
    [
        ({"reply_id": 1, "value": 1}, {"Content-Type": "text/plain"}, "v-1", 415),
        ({"reply_id": 1, "value": 1}, {"Origin": "https://evil.example"}, "v-1", 403),
        ({"reply_id": 1, "value": 1}, None, None, 400),
        ({"reply_id": 1, "value": 1}, None, "not a visitor id!", 400),
        (b"{not json", None, "v-1", 400),
        ([1, -1], None, "v-1", 400),
        ({"reply_id": "1", "value": 1}, None, "v-1", 400),
        ({"reply_id": 0, "value": 1}, None, "v-1", 400),
        ({"reply_id": 2**63, "value": 1}, None, "v-1", 400),
        ({"reply_id": 1, "value": 2}, None, "v-1", 400),
        ({"reply_id": 1, "value": True}, None, "v-1", 400),
        ({"reply_id": 1}, None, "v-1", 400),
        (b'{"reply_id": 1, "value": 1, "pad": "' + b"x" * 2000 + b'"}', None, "v-1", 413),
        ({"reply_id": 2**62, "value": 1}, None, "v-1", 404),
    ],
)
async def test_a_bad_vote_gets_a_clear_4xx(
    client: Client,
    body: Any,
    headers: dict[str, str] | None,
    visitor: str | None,
    status: int,
) -> None:
    response = await vote(client, visitor, body, headers)
    assert response.status == status
    assert response.content_type == "application/json"
    assert (await response.json())["error"]


async def test_an_allowed_site_may_vote_from_its_page(client: Client) -> None:
    preflight = await client.options(
        "/api/chat/feedback",
        headers={
            "Origin": SITE,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type, x-visitor-id",
        },
    )
    assert preflight.status == 204
    assert preflight.headers["Access-Control-Allow-Origin"] == SITE
    response = await vote(client, "v-1", {"reply_id": 2**62, "value": 1}, {"Origin": SITE})
    assert response.status == 404  # admitted, then refused: no such answer of this visitor
    assert response.headers["Access-Control-Allow-Origin"] == SITE


async def test_votes_past_the_visitors_bucket_get_429_with_retry_after(
    serve_webchat: Any,
    settings: Settings,
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
) -> None:
    client, _ = await serve_webchat(
        runtime_with(
            settings,
            engine,
            sessionmaker,
            parts,
            answerer,
            web_changes=ORIGINS,
            chat_visitor_burst=2,
            chat_visitor_per_minute=1.0,
        )
    )
    visitor = f"fb-{uuid.uuid4().hex}"
    statuses = [
        (await vote(client, visitor, {"reply_id": 2**62, "value": 1})).status for _ in range(3)
    ]
    assert statuses == [404, 404, 429]
    response = await vote(client, visitor, {"reply_id": 2**62, "value": 1})
    assert int(response.headers["Retry-After"]) >= 1
