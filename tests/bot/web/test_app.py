"""The web process (bot.web.app) over real HTTP on 127.0.0.1: the page, health, and the one-shot
`/api/ask`, answering from the demo knowledge base in the test's transaction."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.settings import Settings
from bot.keys import ADAPTERS, HTTP
from bot.knowledge.demo import demo_kb_dir
from bot.runtime import Runtime
from bot.web.app import create_app
from bot.web.ask import ASK_MAX_BODY as MAX_BODY

Client = TestClient[web.Request, web.Application]
FAQ01 = json.loads((demo_kb_dir() / "faq.jsonl").read_text(encoding="utf-8").splitlines()[0])


@pytest.fixture
async def client(
    settings: Settings,
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
) -> AsyncIterator[Client]:
    runtime = Runtime(settings, engine, sessionmaker, parts, answerer)
    async with aiohttp.ClientSession() as platforms:
        server = TestServer(create_app(runtime, {}, platforms), host="127.0.0.1")
        async with TestClient(server) as http:
            yield http


async def error_of(response: ClientResponse) -> str:
    assert response.content_type == "application/json"
    body = await response.json()
    assert isinstance(body["error"], str)
    return str(body["error"])


async def test_page_is_utf8_html_with_the_chat_form(client: Client) -> None:
    response = await client.get("/")
    assert response.status == 200
    assert response.content_type == "text/html"
    assert response.charset == "utf-8"
    page = await response.text()
    assert '<form id="f">' in page
    assert "Tư vấn tuyển sinh" in page


async def test_health_check_says_ok(client: Client) -> None:
    response = await client.get("/healthz")
    assert response.status == 200
    assert await response.json() == {"status": "ok"}


async def test_question_is_answered_as_json(client: Client) -> None:
    response = await client.post("/api/ask", json={"question": FAQ01["question"]})
    assert response.status == 200
    assert response.content_type == "application/json"
    raw = await response.text()
    assert FAQ01["answer"][:40] in raw  # not \u-escaped
    answer = json.loads(raw)
    assert answer["tier"] == "faq"
    assert answer["answer"] == FAQ01["answer"]
    assert answer["faq_external_id"] == FAQ01["id"]
    assert "trace" not in answer


async def test_documents_question_is_answered_with_citations(
    client: Client,
) -> None:
    response = await client.post(
        "/api/ask", json={"question": "Chỉ tiêu ngành Kỹ thuật Máy tính năm 2026 là bao nhiêu?"}
    )
    answer = await response.json()
    assert answer["tier"] == "documents"
    assert answer["citations"]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"question": "hoc phi', "Unterminated string"),
        (b"", "Expecting value"),
        (b'{"question": "h\xe1c"}', "can't decode"),  # Latin-1, not UTF-8
        (b'{"q": "hoc phi"}', "'question'"),
        (b'{"question": 42}', "question must be a string"),
        (b'{"question": null}', "question must be a string"),
        (b'["question"]', "list indices"),
        (b'"question"', "string indices"),
        (b"[" * 2000, "recursion"),  # nested too deep to parse
        (b'{"question": ' + b"1" * 5000 + b"}", "integer string conversion"),  # too long
    ],
)
async def test_malformed_request_is_a_json_400(client: Client, body: bytes, why: str) -> None:
    response = await client.post(
        "/api/ask", data=body, headers={"Content-Type": "application/json"}
    )
    assert response.status == 400
    assert why in await error_of(response)


async def test_body_over_64_kb_is_a_json_413(client: Client) -> None:
    question = "học phí " * (MAX_BODY // 8)
    response = await client.post("/api/ask", json={"question": question})
    assert response.status == 413
    assert str(MAX_BODY) in await error_of(response)
    # the server goes on serving
    assert (await client.get("/healthz")).status == 200


@pytest.mark.parametrize("path", ["/webhooks/telegram", "/webhooks/messenger", "/webhooks/zalo"])
async def test_a_channel_that_is_not_set_up_answers_404(client: Client, path: str) -> None:
    response = await client.post(path, data=b"{}")
    assert response.status == 404
    assert "not set up" in await response.text()


async def test_the_app_opens_its_platform_client_and_adapters_and_closes_them(
    settings: Settings,
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
) -> None:
    app = create_app(Runtime(settings, engine, sessionmaker, parts, answerer))
    async with TestClient(TestServer(app, host="127.0.0.1")) as http:
        assert (await http.get("/healthz")).status == 200
        platforms = app[HTTP]
        assert not platforms.closed
        assert app[ADAPTERS] == {}  # no channel has its keys in the test settings
    assert platforms.closed
