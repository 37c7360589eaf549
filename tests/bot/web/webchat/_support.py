"""What the web chat's tests share: the demo knowledge base's questions, requests as the page
sends them, the web chat's app for a runtime, and the rows an answer stored."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.core.settings import Settings
from bot.db.models import Message
from bot.keys import RUNTIME
from bot.knowledge.demo import demo_kb_dir
from bot.runtime import Runtime
from bot.web.webchat.handlers import setup_webchat
from tests.bot.web._webchat import Event, parse_sse

Client = TestClient[web.Request, web.Application]
FAQ = {
    json.loads(line)["id"]: json.loads(line)
    for line in (demo_kb_dir() / "faq.jsonl").read_text(encoding="utf-8").splitlines()
}
DOCS_QUESTION = "Chỉ tiêu ngành Kỹ thuật Máy tính năm 2026 là bao nhiêu?"  # tier 2
DORM_QUESTION = "Đăng ký ở ký túc xá cần làm những bước nào?"  # tier 2, for the LLM
SITE = "https://tuyensinh.shut.example.vn"
JSON = {"Content-Type": "application/json"}


async def post_chat(
    client: Client, body: Any, headers: dict[str, str] | None = None
) -> tuple[ClientResponse, list[Event]]:
    response = await client.post("/api/chat", json=body, headers=headers)
    assert response.status == 200, await response.text()
    assert response.content_type == "text/event-stream"
    events = parse_sse(await response.text())
    assert events[-1].name == "done"
    assert [e.name for e in events].count("done") == 1
    return response, events


async def get_history(
    client: Client, visitor: str, headers: dict[str, str] | None = None
) -> ClientResponse:
    """``GET /api/chat/history`` as the page asks it: the visitor id in a header, not the URL."""
    return await client.get(
        "/api/chat/history", headers={"X-Visitor-Id": visitor, **(headers or {})}
    )


async def error_of(response: ClientResponse) -> str:
    assert response.content_type == "application/json"
    body = await response.json()
    assert isinstance(body["error"], str)
    return str(body["error"])


def make_app(runtime: Runtime, **options: Any) -> web.Application:
    app = web.Application()
    app[RUNTIME] = runtime
    setup_webchat(app, **options)
    return app


def with_web(settings: Settings, **changes: Any) -> Settings:
    return settings.model_copy(update={"web": settings.web.model_copy(update=changes)})


async def stored(
    sessionmaker: async_sessionmaker[AsyncSession], message_id: str
) -> tuple[Message, list[Message]]:
    """The inbound row of a client message id, and the rows replying to it."""
    async with sessionmaker() as session:
        inbound = await session.scalar(
            select(Message).where(Message.channel == "web", Message.event_id == message_id)
        )
        assert inbound is not None
        answers = (
            await session.scalars(
                select(Message).where(Message.reply_to_id == inbound.id).order_by(Message.id)
            )
        ).all()
    return inbound, list(answers)
