"""The web process (bot.web.app) over real HTTP on 127.0.0.1: the page, health, metrics, and the
one-shot `/api/ask` (behind its token), answering from the demo knowledge base in the test's
transaction."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.settings import Settings
from bot.db.engine import make_engine, make_sessionmaker
from bot.keys import ADAPTERS, HTTP
from bot.knowledge.demo import demo_kb_dir
from bot.runtime import Runtime
from bot.web.access import is_loopback, metrics_refusal
from bot.web.app import create_app
from bot.web.ask import ASK_MAX_BODY as MAX_BODY
from tests.fakes.raw_http import raw_post

Client = TestClient[web.Request, web.Application]
FAQ01 = json.loads((demo_kb_dir() / "faq.jsonl").read_text(encoding="utf-8").splitlines()[0])
ASK_TOKEN = "ask-token-for-the-tests-3f9a"
ASKING = {"Authorization": f"Bearer {ASK_TOKEN}"}
METRICS_TOKEN = "metrics-token-for-the-tests-77c1"


def with_tokens(
    settings: Settings, *, ask: str | None = ASK_TOKEN, metrics: str | None = None
) -> Settings:
    web_section = settings.web.model_copy(
        update={"ask_token": SecretStr(ask) if ask is not None else None}
    )
    return settings.model_copy(
        update={
            "web": web_section,
            "metrics_token": SecretStr(metrics) if metrics is not None else None,
        }
    )


@pytest.fixture
async def serve(
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
) -> AsyncIterator[Any]:
    """``await serve(settings, host=...)``: the whole app on a real port; closed after the test."""
    clients: list[Client] = []
    platforms = aiohttp.ClientSession()

    async def start(settings: Settings, host: str = "127.0.0.1") -> Client:
        runtime = Runtime(settings, engine, sessionmaker, parts, answerer)
        http: Client = TestClient(TestServer(create_app(runtime, {}, platforms), host=host))
        await http.start_server()
        clients.append(http)
        return http

    try:
        yield start
    finally:
        for http in clients:
            await http.close()
        await platforms.close()


@pytest.fixture
async def client(settings: Settings, serve: Any) -> Client:
    """The app with ``/api/ask`` turned on (its token set); no metrics token."""
    started: Client = await serve(with_tokens(settings))
    return started


def strings_in(value: object) -> Iterator[str]:
    """Every string in a JSON value, keys and values."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


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


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_health_check_with_the_database_down_says_unavailable_and_nothing_more(
    settings: Settings,
    parts: AnswererParts,
    answerer: Answerer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = closed_port()
    down = make_engine(f"postgresql+psycopg://tuvan:s3cret-pw@127.0.0.1:{port}/tuvan")
    runtime = Runtime(settings, down, make_sessionmaker(down), parts, answerer)
    try:
        async with aiohttp.ClientSession() as platforms:
            app = create_app(runtime, {}, platforms)
            async with TestClient(TestServer(app, host="127.0.0.1")) as http:
                with caplog.at_level(logging.ERROR, logger="bot.web.ops"):
                    response = await http.get("/healthz")
                assert response.status == 503
                raw = await response.text()
    finally:
        await down.dispose()
    assert json.loads(raw) == {"status": "unavailable"}
    for detail in (str(port), "s3cret", "127.0.0.1", "refused", "connection"):
        assert detail not in raw.lower()
    assert "the database does not answer" in caplog.text  # the reason goes to the log
    assert str(port) in caplog.text


# -- /api/ask: off unless its token is set ------------------------------------------------------


async def test_ask_is_not_there_without_its_token_setting(settings: Settings, serve: Any) -> None:
    assert settings.web.ask_token is None  # the default
    http = await serve(settings)
    for headers in ({}, ASKING):
        response = await http.post("/api/ask", json={"question": "học phí"}, headers=headers)
        assert response.status == 404


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", "Bearer wrong-token", f"Basic {ASK_TOKEN}", f"Bearer {ASK_TOKEN}x"],
)
async def test_ask_with_a_missing_or_wrong_token_is_a_401(
    client: Client, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    response = await client.post("/api/ask", json={"question": "học phí"}, headers=headers)
    assert response.status == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert "token" in await error_of(response)


async def test_ask_with_a_token_of_bad_bytes_is_a_401(client: Client) -> None:
    server = client.server
    assert server.port is not None  # started
    not_utf8 = b"Authorization: Bearer \xff\r\n"  # one byte 0xff on the wire
    assert await raw_post(server.host, server.port, "/api/ask", not_utf8, b"{}") == 401


async def test_question_is_answered_as_json(client: Client) -> None:
    response = await client.post("/api/ask", json={"question": FAQ01["question"]}, headers=ASKING)
    assert response.status == 200
    assert response.content_type == "application/json"
    raw = await response.text()
    assert FAQ01["answer"][:40] in raw  # not \u-escaped
    answer = json.loads(raw)
    assert answer["tier"] == "faq"
    assert answer["answer"].startswith(FAQ01["answer"] + "\n\nNguồn:\n[1] ")
    assert answer["faq_external_id"] == FAQ01["id"]
    # its entry names "tong-quan.md": cited as that document, never by the file's name
    assert answer["citations"] == [
        {
            "n": 1,
            "title": "Tổng quan về Trường Đại học Công nghệ Sông Hồng",
            "url": "https://tuyensinh.shut.example.vn/tong-quan",
            "page": None,
        }
    ]
    assert FAQ01["source"] not in raw
    assert "trace" not in answer


async def test_documents_question_is_answered_with_citations_by_title_and_url(
    client: Client,
) -> None:
    response = await client.post(
        "/api/ask",
        json={"question": "Chỉ tiêu ngành Kỹ thuật Máy tính năm 2026 là bao nhiêu?"},
        headers=ASKING,
    )
    assert response.status == 200
    raw = await response.text()
    answer = json.loads(raw)
    assert answer["tier"] == "documents"
    assert answer["citations"]
    for citation in answer["citations"]:
        assert set(citation) == {"n", "title", "url", "page"}
        assert citation["title"]
        assert citation["url"].startswith("https://tuyensinh.shut.example.vn/")
    # No server path anywhere: the demo documents are files in the package's folder.
    assert str(demo_kb_dir()) not in raw
    assert not [s for s in strings_in(answer) if s.startswith("/") or ".md" in s]


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
        "/api/ask", data=body, headers={"Content-Type": "application/json", **ASKING}
    )
    assert response.status == 400
    assert why in await error_of(response)


async def test_body_over_64_kb_is_a_json_413(client: Client) -> None:
    question = "học phí " * (MAX_BODY // 8)
    response = await client.post("/api/ask", json={"question": question}, headers=ASKING)
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


# -- /metrics: a token, or this host only --------------------------------------------------------


async def test_metrics_without_a_token_setting_answer_a_client_on_this_host(client: Client) -> None:
    response = await client.get("/metrics")
    assert response.status == 200
    assert "# TYPE tuvan_queue_depth gauge" in await response.text()
    # ... but not one a reverse proxy on this host passed on (it connects from loopback too)
    for header in ("X-Forwarded-For", "Forwarded"):
        proxied = await client.get("/metrics", headers={header: "for=203.0.113.7"})
        assert proxied.status == 403


async def test_metrics_with_a_token_setting_need_that_token(settings: Settings, serve: Any) -> None:
    http = await serve(with_tokens(settings, metrics=METRICS_TOKEN))
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": METRICS_TOKEN}):
        response = await http.get("/metrics", headers=headers)  # from loopback, even
        assert response.status == 401
        assert response.headers["WWW-Authenticate"] == "Bearer"
        assert "tuvan_" not in await response.text()
    response = await http.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert response.status == 200
    assert "# TYPE tuvan_queue_depth gauge" in await response.text()


def this_hosts_outside_address() -> str | None:
    """This machine's address on its network interface, if it has one (a UDP socket's
    ``connect`` only picks the route: nothing is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: any routable address will do
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if is_loopback(address) or address == "0.0.0.0" else address


async def test_metrics_refuse_a_client_that_is_not_on_loopback(
    settings: Settings, serve: Any
) -> None:
    address = this_hosts_outside_address()
    if address is None:
        pytest.skip("this machine has no address but loopback")
    http = await serve(with_tokens(settings), host=address)  # the peer is then that address
    response = await http.get("/metrics", headers={"X-Forwarded-For": "127.0.0.1"})
    assert response.status == 403
    assert "tuvan_" not in await response.text()
    assert (await http.get("/healthz")).status == 200  # health stays public


@pytest.mark.parametrize(
    ("token", "authorization", "peer", "proxied", "refusal"),
    [
        (None, None, "127.0.0.1", False, None),
        (None, None, "127.8.9.10", False, None),
        (None, None, "::1", False, None),
        (None, None, "::ffff:127.0.0.1", False, None),
        (None, None, "127.0.0.1", True, 403),  # a proxy on this host passed it on
        (None, None, "203.0.113.7", False, 403),
        (None, None, "::ffff:203.0.113.7", False, 403),
        (None, None, "10.0.0.2", False, 403),
        (None, None, None, False, 403),
        (None, None, "not an address", False, 403),
        (None, f"Bearer {METRICS_TOKEN}", "203.0.113.7", False, 403),  # no token set: none works
        ("", None, "127.0.0.1", False, None),  # TUVAN_METRICS_TOKEN= is no token
        (METRICS_TOKEN, None, "127.0.0.1", False, 401),  # a token set: loopback is not enough
        (METRICS_TOKEN, "Bearer wrong", "203.0.113.7", False, 401),
        (METRICS_TOKEN, f"bearer {METRICS_TOKEN}", "203.0.113.7", True, None),
        (METRICS_TOKEN, f"Bearer {METRICS_TOKEN}", None, False, None),
    ],
)
def test_who_may_read_the_metrics(
    token: str | None,
    authorization: str | None,
    peer: str | None,
    proxied: bool,
    refusal: int | None,
) -> None:
    secret = SecretStr(token) if token is not None else None
    assert metrics_refusal(secret, authorization, peer, proxied=proxied) == refusal
