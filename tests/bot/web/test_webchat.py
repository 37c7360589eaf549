"""The web chat (bot.web.webchat) over real HTTP on 127.0.0.1: answers as server-sent events from
the demo knowledge base, stored in the conversation store of the test's transaction; the LLM
is the fake OpenAI-compatible server on loopback."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr
from sqlalchemy import delete, select, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer import replies
from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.answer.stream import StreamDone, StreamEvent, StreamToken
from bot.conversations.store import record_inbound, set_mode, upsert_conversation
from bot.core.clock import utcnow
from bot.core.messages import InboundMessage
from bot.core.settings import Settings
from bot.db.engine import make_sessionmaker
from bot.db.models import (
    Author,
    Contact,
    Conversation,
    ConversationMode,
    Direction,
    Message,
    MessageStatus,
    RateBucket,
)
from bot.keys import RUNTIME
from bot.knowledge.demo import demo_kb_dir
from bot.knowledge.ingest import ingest_paths
from bot.llm.client import LlmClient
from bot.runtime import Runtime
from bot.web.webchat.handlers import setup_webchat
from bot.web.webchat.protocol import MAX_CHAT_BODY
from retrieval.index.indexer import Indexer
from tests.bot.web._webchat import (
    FAQ_QUESTION,
    ROOMY,
    Event,
    chat_body,
    parse_sse,
    with_limits,
)
from tests.fakes.openai_stub import OpenAIStub

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


@pytest.fixture
def runtime(
    settings: Settings,
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
) -> Runtime:
    return Runtime(
        with_limits(with_web(settings, allowed_origins=(SITE,)), **ROOMY),
        engine,
        sessionmaker,
        parts,
        answerer,
    )


@pytest.fixture
async def committing(
    engine: AsyncEngine, demo_kb: object
) -> AsyncIterator[Callable[[Runtime], Runtime]]:
    """The runtime on real transactions, for tests where requests overlap: sessions joined into
    the test's one connection cannot run side by side. The web contacts made are deleted after."""
    sessionmaker = make_sessionmaker(engine)
    async with sessionmaker() as session:
        before = set((await session.scalars(select(Contact.id))).all())

    def on_real_transactions(runtime: Runtime) -> Runtime:
        answerer = Answerer(runtime.parts, sessionmaker)
        return replace(runtime, sessionmaker=sessionmaker, answerer=answerer)

    yield on_real_transactions
    async with sessionmaker.begin() as session:
        await session.execute(
            delete(Contact).where(Contact.channel == "web", Contact.id.not_in(before))
        )
        await session.execute(delete(RateBucket))


@pytest.fixture
async def serve() -> AsyncIterator[Callable[..., Any]]:
    """Start a test server for an app; all are closed after the test."""
    clients: list[Client] = []

    async def start(app: web.Application) -> Client:
        client: Client = TestClient(TestServer(app, host="127.0.0.1"))
        await client.start_server()
        clients.append(client)
        return client

    yield start
    for client in clients:
        await client.close()


@pytest.fixture
async def client(runtime: Runtime, serve: Callable[..., Any]) -> Client:
    started: Client = await serve(make_app(runtime))
    return started


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


# -- the page and the widget -------------------------------------------------------------------


async def test_page_is_vietnamese_first_html_with_a_strict_policy(client: Client) -> None:
    response = await client.get("/")
    assert response.status == 200
    assert response.content_type == "text/html"
    assert response.charset == "utf-8"
    page = await response.text()
    assert '<html lang="vi">' in page
    assert "Tư vấn tuyển sinh" in page
    assert "Admissions assistant" in page  # the English labels, switched in the browser
    policy = response.headers["Content-Security-Policy"]
    [script] = re.findall(r"<script>(.*?)</script>", page, flags=re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy
    assert f"frame-ancestors 'self' {SITE}" in policy
    assert "unsafe-inline" not in policy
    embedded = await client.get("/?embed=1")
    assert embedded.status == 200


async def test_page_puts_text_in_with_text_content_only(client: Client) -> None:
    page = await (await client.get("/")).text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in page
    assert "textContent" in page


async def test_widget_is_javascript_that_frames_the_embedded_page(client: Client) -> None:
    response = await client.get("/widget.js")
    assert response.status == 200
    assert response.content_type == "text/javascript"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    source = await response.text()
    assert '"/?embed=1"' in source
    assert "innerHTML" not in source
    assert "attachShadow" in source


# -- answering and storing ---------------------------------------------------------------------


async def test_faq_answer_arrives_as_one_done_event_and_is_stored(
    client: Client, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    body = chat_body(FAQ_QUESTION)
    response, events = await post_chat(client, body)
    assert "Access-Control-Allow-Origin" not in response.headers  # same-origin request
    [done] = events
    assert done.data["tier"] == "faq"
    assert done.data["answer"].startswith(FAQ["shut-faq02"]["answer"] + "\n\nNguồn:\n[1] ")
    assert done.data["message_id"] == body["message_id"]
    assert done.data["handover"] is False
    # The entry names "nganh-dao-tao-2026.md": the student gets that document's title and
    # address, as a documents answer cites it, and never the file's name.
    assert done.data["citations"] == [
        {
            "n": 1,
            "title": "Danh sách ngành đào tạo và chỉ tiêu tuyển sinh năm 2026",
            "url": f"{SITE}/nganh-dao-tao-2026",
            "page": None,
        }
    ]
    assert FAQ["shut-faq02"]["source"] not in json.dumps(done.data, ensure_ascii=False)

    inbound, [reply] = await stored(sessionmaker, body["message_id"])
    assert inbound.direction == Direction.inbound
    assert inbound.author == Author.user
    assert inbound.text == FAQ_QUESTION
    assert inbound.status == MessageStatus.answered
    assert inbound.done_at is not None
    assert inbound.attempts == 1
    assert reply.id == done.data["reply_id"]
    assert reply.direction == Direction.outbound
    assert reply.author == Author.bot
    assert reply.status == MessageStatus.sent
    assert reply.conversation_id == inbound.conversation_id
    assert reply.text == done.data["answer"]
    assert reply.tier == "faq"
    assert reply.citations[0]["source"].endswith("/" + FAQ["shut-faq02"]["source"])
    assert reply.details["faq_external_id"] == "shut-faq02"
    assert reply.details["timings_ms"]["total"] > 0


async def test_documents_answer_carries_tier_and_citations(
    client: Client, runtime: Runtime, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    body = chat_body(DOCS_QUESTION)
    _, [done] = await post_chat(client, body)
    assert done.data["tier"] == "documents"
    assert "150" in done.data["answer"]
    assert runtime.settings.answer.disclaimer_docs_vi in done.data["answer"]
    citations = done.data["citations"]
    assert citations
    assert set(citations[0]) == {"n", "title", "url", "page"}
    _, [reply] = await stored(sessionmaker, body["message_id"])
    assert reply.tier == "documents"
    assert [c["n"] for c in reply.citations] == [c["n"] for c in citations]


async def test_same_message_id_twice_is_answered_once(
    client: Client, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    body = chat_body(FAQ_QUESTION)
    _, [first] = await post_chat(client, body)
    _, [again] = await post_chat(client, body)
    assert again.data == first.data
    _, answers = await stored(sessionmaker, body["message_id"])
    assert len(answers) == 1


async def test_concurrent_posts_of_one_message_store_one_answer(
    committing: Callable[[Runtime], Runtime],
    llm_runtime: Runtime,
    stub: OpenAIStub,
    serve: Callable[..., Any],
) -> None:
    real = committing(llm_runtime)
    client = await serve(make_app(real))
    # A slow model: the second request arrives while the first is still answering.
    stub.script_chat("Bạn đăng ký ở ký túc xá trực tuyến theo tài liệu [1].", delay_s=0.5)
    body = chat_body(DORM_QUESTION, visitor=f"race-{uuid.uuid4().hex}")
    (_, first), (_, second) = await asyncio.gather(post_chat(client, body), post_chat(client, body))
    assert first[-1].data == second[-1].data
    assert first[-1].data["reply_id"] is not None
    assert first[-1].data["tier"] == "documents"
    assert len(stub.requests_to("/v1/chat/completions")) == 1
    # One of them streamed the answer; the other waited and sent the stored reply alone.
    assert sorted([len(first), len(second)])[0] == 1
    inbound, answers = await stored(real.sessionmaker, body["message_id"])
    assert inbound.status == MessageStatus.answered
    assert [a.id for a in answers] == [first[-1].data["reply_id"]]


async def test_a_slow_answer_keeps_its_short_lease_and_is_paid_for_once(
    committing: Callable[[Runtime], Runtime],
    llm_runtime: Runtime,
    stub: OpenAIStub,
    serve: Callable[..., Any],
) -> None:
    # A one-second lease, renewed while the answer runs; the model takes 2.5 s.
    real = committing(llm_runtime)
    real = replace(real, settings=with_web(real.settings, answer_lease_s=1.0))
    client = await serve(make_app(real, duplicate_wait_s=10))
    stub.script_chat("Bạn đăng ký ở ký túc xá trực tuyến theo tài liệu [1].", delay_s=2.5)
    body = chat_body(DORM_QUESTION, visitor=f"lease-{uuid.uuid4().hex}")
    first = asyncio.create_task(post_chat(client, body))
    await asyncio.sleep(0.5)
    async with real.sessionmaker() as session:
        inbound = await session.scalar(
            select(Message).where(Message.event_id == body["message_id"])
        )
    assert inbound is not None
    assert inbound.lease_until is not None
    assert inbound.lease_until - utcnow() < timedelta(seconds=2)  # not the worker's 120 s
    await asyncio.sleep(1.5)  # past the first lease: a repeat must still not take it over
    (_, again), (_, answered) = await asyncio.gather(post_chat(client, body), first)
    assert again[-1].data == answered[-1].data
    assert len(stub.requests_to("/v1/chat/completions")) == 1


async def test_repeat_while_the_first_is_answering_waits_then_conflicts(
    runtime: Runtime, serve: Callable[..., Any], sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    client = await serve(make_app(runtime, duplicate_wait_s=0.3))
    body = chat_body(FAQ_QUESTION)
    await answering_elsewhere(sessionmaker, body, lease_until=utcnow() + timedelta(minutes=2))
    response = await client.post("/api/chat", json=body)
    assert response.status == 409
    assert response.headers["Retry-After"] == "2"
    assert "still being answered" in await error_of(response)


async def test_repeat_after_the_first_request_died_answers_it(
    client: Client, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    body = chat_body(FAQ_QUESTION)
    await answering_elsewhere(sessionmaker, body, lease_until=utcnow() - timedelta(seconds=1))
    _, [done] = await post_chat(client, body)
    assert done.data["tier"] == "faq"
    inbound, [reply] = await stored(sessionmaker, body["message_id"])
    assert inbound.status == MessageStatus.answered
    assert inbound.attempts == 2
    assert reply.id == done.data["reply_id"]


async def answering_elsewhere(
    sessionmaker: async_sessionmaker[AsyncSession], body: Any, *, lease_until: datetime
) -> None:
    """The state a request leaves while it answers (or after it died answering)."""
    async with sessionmaker.begin() as session:
        recorded = await record_inbound(
            session,
            InboundMessage(
                channel="web",
                event_id=body["message_id"],
                external_user_id=body["visitor_id"],
                kind="text",
                text=body["text"],
            ),
        )
        await session.execute(
            update(Message)
            .where(Message.id == recorded.message_id)
            .values(status=MessageStatus.answering, lease_until=lease_until, attempts=1)
        )


@pytest.mark.parametrize(
    "change", [{"visitor_id": "someone-else"}, {"text": "Học phí bao nhiêu?"}], ids=str
)
async def test_message_id_reused_for_another_message_is_a_409(
    client: Client, change: dict[str, str]
) -> None:
    body = chat_body(FAQ_QUESTION)
    await post_chat(client, body)
    response = await client.post("/api/chat", json={**body, **change})
    assert response.status == 409
    assert "already used" in await error_of(response)


async def test_conversation_taken_over_by_staff_gets_no_bot_reply(
    client: Client, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    body = chat_body(FAQ_QUESTION, visitor="handed-over")
    async with sessionmaker.begin() as session:
        conversation_id = await upsert_conversation(session, "web", "handed-over")
        await set_mode(session, conversation_id, ConversationMode.human)
    _, [done] = await post_chat(client, body)
    assert done.data["handover"] is True
    assert done.data["answer"] is None
    inbound, answers = await stored(sessionmaker, body["message_id"])
    assert inbound.status == MessageStatus.skipped
    assert answers == []
    _, [again] = await post_chat(client, body)
    assert again.data == done.data


# -- history -------------------------------------------------------------------------------------


async def test_history_after_a_reload_returns_the_conversation_in_order(client: Client) -> None:
    first = chat_body(FAQ_QUESTION, visitor="reloader")
    second = chat_body(DOCS_QUESTION, visitor="reloader")
    _, [a1] = await post_chat(client, first)
    _, [a2] = await post_chat(client, second)
    await post_chat(client, chat_body("Học phí?", visitor="someone-else"))

    response = await get_history(client, "reloader")
    assert response.status == 200
    assert response.headers["Cache-Control"] == "no-store"
    history = await response.json()
    messages = history["messages"]
    assert [(m["author"], m["text"]) for m in messages] == [
        ("user", FAQ_QUESTION),
        ("bot", a1.data["answer"]),
        ("user", DOCS_QUESTION),
        ("bot", a2.data["answer"]),
    ]
    assert messages[0]["message_id"] == first["message_id"]
    assert [m["tier"] for m in messages] == [None, "faq", None, "documents"]
    assert messages[3]["citations"] == a2.data["citations"]
    times = [datetime.fromisoformat(m["created_at"]) for m in messages]
    assert all(t.tzinfo is not None for t in times)
    assert times == sorted(times)


async def test_history_keeps_the_last_messages_only(
    runtime: Runtime, serve: Callable[..., Any]
) -> None:
    short = replace(runtime, settings=with_web(runtime.settings, history_messages=3))
    client = await serve(make_app(short))
    await post_chat(client, chat_body(FAQ_QUESTION, visitor="v3"))
    await post_chat(client, chat_body(DOCS_QUESTION, visitor="v3"))
    response = await get_history(client, "v3")
    messages = (await response.json())["messages"]
    assert [m["author"] for m in messages] == ["bot", "user", "bot"]
    assert messages[1]["text"] == DOCS_QUESTION


async def test_a_follow_up_in_the_web_chat_is_read_with_the_earlier_question(
    client: Client, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    visitor = f"follow-{uuid.uuid4().hex[:8]}"
    await post_chat(client, chat_body("ngành kỹ thuật phần mềm xét tổ hợp nào", visitor=visitor))
    body = chat_body("ngành đó học phí bao nhiêu", visitor=visitor)
    _, events = await post_chat(client, body)
    inbound, [reply] = await stored(sessionmaker, body["message_id"])
    assert inbound.question == "ngành kỹ thuật phần mềm học phí bao nhiêu"
    assert reply.tier in {"faq", "documents"}
    assert "32.500.000" in events[-1].data["answer"]


async def test_asking_for_a_person_in_the_web_chat_marks_the_conversation_waiting(
    client: Client, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    body = chat_body("cho em gặp tư vấn viên với ạ", visitor=f"person-{uuid.uuid4().hex[:8]}")
    _, events = await post_chat(client, body)
    assert "giờ hành chính" in events[-1].data["answer"]
    inbound, _ = await stored(sessionmaker, body["message_id"])
    async with sessionmaker() as session:
        conversation = await session.get(Conversation, inbound.conversation_id)
    assert conversation is not None
    assert conversation.waiting_since is not None


async def test_history_of_a_new_visitor_is_empty(client: Client) -> None:
    response = await get_history(client, "never-seen")
    assert response.status == 200
    assert await response.json() == {
        "expired": False,
        "visitor_days": 30,
        "human": False,
        "messages": [],
    }


@pytest.mark.parametrize("visitor", ["", "a b", "x" * 101, "é", "retired:12"])
async def test_history_with_a_bad_visitor_id_is_a_400(client: Client, visitor: str) -> None:
    headers = {"X-Visitor-Id": visitor} if visitor else {}
    response = await client.get("/api/chat/history", headers=headers)
    assert response.status == 400
    assert "X-Visitor-Id" in await error_of(response)
    assert "visitor_id must be" in await error_of(response)


async def test_history_no_longer_takes_the_visitor_id_from_the_url(client: Client) -> None:
    await post_chat(client, chat_body(FAQ_QUESTION, visitor="in-the-url"))
    response = await client.get("/api/chat/history", params={"visitor_id": "in-the-url"})
    assert response.status == 400
    assert "X-Visitor-Id header" in await error_of(response)
    # ... not even beside the header: a URL holding the id is refused, whatever else it has
    response = await client.get(
        "/api/chat/history",
        params={"visitor_id": "in-the-url"},
        headers={"X-Visitor-Id": "in-the-url"},
    )
    assert response.status == 400
    by_header = await (await get_history(client, "in-the-url")).json()
    assert next(m["text"] for m in by_header["messages"]) == FAQ_QUESTION


async def test_markup_in_a_question_comes_back_as_plain_text(client: Client) -> None:
    text = '<script>alert("x")</script><img src=x onerror=alert(1)> học phí?'
    _, [done] = await post_chat(client, chat_body(text, visitor="markup"))
    assert done.data["tier"] in ("faq", "documents", "fallback")
    history = await get_history(client, "markup")
    raw = await history.text()
    assert '<script>alert(\\"x\\")</script><img src=x onerror=alert(1)>' in raw  # JSON, as is
    assert (await history.json())["messages"][0]["text"] == text
    assert history.content_type == "application/json"


async def test_not_a_question_is_answered_politely(client: Client) -> None:
    _, [done] = await post_chat(client, chat_body("👍👍"))
    assert done.data["tier"] == "fallback"
    assert done.data["answer"] == replies.not_a_question_reply("vi")


# -- malformed requests -------------------------------------------------------------------------

GOOD = {"visitor_id": "v", "message_id": "7f1c7b8e-3d5c-4c1e-9d0e-2b8f3a1c5e6d", "text": "hi"}


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"visitor_id": "v", "text": "hoc phi', "not JSON"),
        (b"", "not JSON"),
        (b'{"visitor_id": "v", "text": "h\xe1c"}', "not JSON"),  # Latin-1, not UTF-8
        (b'["visitor_id"]', "expected a JSON object"),
        (b"[" * 20_000, "not JSON"),  # nested past the recursion limit
        (json.dumps({**GOOD, "visitor_id": None}).encode(), "visitor_id"),
        (json.dumps({**GOOD, "visitor_id": "a b"}).encode(), "visitor_id"),
        (json.dumps({**GOOD, "visitor_id": "x" * 101}).encode(), "visitor_id"),
        (json.dumps({**GOOD, "visitor_id": "v\n"}).encode(), "visitor_id"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "message_id"}).encode(), "UUID"),
        (json.dumps({**GOOD, "message_id": "42"}).encode(), "UUID"),
        (json.dumps({**GOOD, "message_id": 42}).encode(), "UUID"),
        (json.dumps({**GOOD, "text": 42}).encode(), "text must be a string"),
        (json.dumps({**GOOD, "text": "   "}).encode(), "text is empty"),
        (json.dumps({**GOOD, "text": "\x00"}).encode(), "text is empty"),
        (json.dumps({**GOOD, "text": "\ud800"}).encode(), "not valid Unicode"),
    ],
)
async def test_malformed_request_is_a_json_400(client: Client, body: bytes, why: str) -> None:
    response = await client.post(
        "/api/chat", data=body, headers={"Content-Type": "application/json"}
    )
    assert response.status == 400
    assert why in await error_of(response)


async def test_nul_characters_are_dropped_before_storing(
    client: Client, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    body = chat_body("học\x00 phí?")
    await post_chat(client, body)
    inbound, _ = await stored(sessionmaker, body["message_id"])
    assert inbound.text == "học phí?"


async def test_body_over_64_kb_is_a_json_413(client: Client) -> None:
    body = chat_body("a" * 70_000)
    response = await client.post("/api/chat", json=body)
    assert response.status == 413
    assert str(MAX_CHAT_BODY) in await error_of(response)
    assert (await get_history(client, "v")).status == 200  # still serving


async def test_chunked_body_over_64_kb_is_a_413_too(client: Client) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b"x" * 8192

    response = await client.post("/api/chat", data=chunks(), headers=JSON)
    assert response.status == 413


# -- CORS ---------------------------------------------------------------------------------------


async def test_allowed_origin_may_call_the_api(client: Client) -> None:
    response, _ = await post_chat(client, chat_body(FAQ_QUESTION), headers={"Origin": SITE})
    assert response.headers["Access-Control-Allow-Origin"] == SITE
    assert response.headers["Vary"] == "Origin"
    history = await get_history(client, "v", headers={"Origin": SITE})
    assert history.headers["Access-Control-Allow-Origin"] == SITE
    bad = await client.post("/api/chat", data=b"{}", headers={**JSON, "Origin": SITE})
    assert bad.status == 400
    assert bad.headers["Access-Control-Allow-Origin"] == SITE  # the page may read the error

    for path in ("/api/chat", "/api/chat/history"):
        preflight = await client.options(
            path,
            headers={
                "Origin": SITE,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type, x-visitor-id",
            },
        )
        assert preflight.status == 204
        assert preflight.headers["Access-Control-Allow-Origin"] == SITE
        assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
        allowed = preflight.headers["Access-Control-Allow-Headers"].lower().split(", ")
        assert allowed == ["content-type", "x-visitor-id"]  # the history's visitor id header


@pytest.mark.parametrize(
    "origin", ["https://evil.example", SITE + ".evil.example", SITE + "/", "null"]
)
async def test_other_origins_are_refused_and_nothing_is_stored(
    client: Client, origin: str, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    body = chat_body(FAQ_QUESTION)
    response = await client.post("/api/chat", json=body, headers={"Origin": origin})
    assert response.status == 403
    assert "origin" in await error_of(response)
    assert "Access-Control-Allow-Origin" not in response.headers
    async with sessionmaker() as session:
        found = await session.scalar(
            select(Message.id).where(Message.event_id == body["message_id"])
        )
    assert found is None
    preflight = await client.options(
        "/api/chat", headers={"Origin": origin, "Access-Control-Request-Method": "POST"}
    )
    assert preflight.status == 403
    assert not any(h.startswith("Access-Control-") for h in preflight.headers)


async def test_the_pages_own_origin_may_post_without_being_listed(client: Client) -> None:
    own = f"http://{client.host}:{client.port}"
    await post_chat(client, chat_body(FAQ_QUESTION), headers={"Origin": own})


# -- failures at the edge -----------------------------------------------------------------------


async def test_an_answerer_failure_becomes_a_polite_reply(
    client: Client,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    sessionmaker: async_sessionmaker[AsyncSession],
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(question: str) -> AsyncIterator[StreamEvent]:
        yield StreamToken("Học phí là ")
        raise RuntimeError("the database went away")

    monkeypatch.setattr(runtime.answerer, "answer_stream", broken)
    body = chat_body(DOCS_QUESTION)
    _, events = await post_chat(client, body)
    assert [e.name for e in events] == ["token", "replace", "done"]
    done = events[-1].data
    assert done["tier"] == "fallback"
    assert done["answer"] == replies.no_information_reply(runtime.settings.contact, "vi")
    assert "answering message" in caplog.text
    inbound, [reply] = await stored(sessionmaker, body["message_id"])
    assert inbound.status == MessageStatus.answered
    assert reply.text == done["answer"]
    assert reply.details["reason"] == "error while answering: RuntimeError"
    assert reply.details["why"] == {"error": "RuntimeError"}


async def test_database_down_is_a_503_to_retry(
    client: Client,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def down(*args: object, **kwargs: object) -> None:
        raise OperationalError("INSERT", {}, ConnectionRefusedError("connection refused"))

    monkeypatch.setattr("bot.web.webchat.answering.record_inbound", down)
    monkeypatch.setattr("bot.web.webchat.handlers.history", down)
    response = await client.post("/api/chat", json=chat_body(FAQ_QUESTION))
    assert response.status == 503
    assert response.headers["Retry-After"] == "5"
    assert "unavailable" in await error_of(response)
    response = await get_history(client, "visitor-1")
    assert response.status == 200  # a new visitor: no conversation, no history query
    async with runtime.sessionmaker.begin() as session:
        await upsert_conversation(session, "web", "visitor-1")
    response = await get_history(client, "visitor-1")
    assert response.status == 503
    assert "cannot record message" in caplog.text


# -- the visitor id expires, and citations name no server path ---------------------------------


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


INTERNAL_DOC = """# Quy định nhận thẻ dự thi năng khiếu

Thí sinh dự thi năng khiếu nhận thẻ dự thi màu tím tại phòng B105, nhà C3, từ ngày 3 tháng 7.
Khi nhận thẻ dự thi màu tím, thí sinh mang theo căn cước công dân và biên lai lệ phí.
"""


async def test_a_citation_of_an_uploaded_file_shows_its_title_not_its_server_path(
    client: Client,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    tmp_path: Path,
) -> None:
    folder = tmp_path / "srv" / "tuvan" / "uploads"
    folder.mkdir(parents=True)
    path = folder / "the-du-thi-nang-khieu.md"  # no web address in it: an uploaded file
    path.write_text(INTERNAL_DOC, encoding="utf-8")
    assert (await ingest_paths(sessionmaker, indexer, [path])).indexed == [str(path)]

    visitor = uuid.uuid4().hex
    body = chat_body("Nhận thẻ dự thi màu tím ở phòng nào?", visitor=visitor)
    response = await client.post("/api/chat", json=body)
    raw = await response.text()
    done = parse_sse(raw)[-1].data
    assert done["tier"] == "documents", done
    assert "B105" in done["answer"]
    title = "Quy định nhận thẻ dự thi năng khiếu"
    assert {"n": 1, "title": title, "url": None, "page": None} in done["citations"]
    assert f"[1] {title}" in done["answer"]
    history = await (await get_history(client, visitor)).text()
    for shown in (raw, history):
        assert str(tmp_path) not in shown
        assert "/srv/tuvan" not in shown
        assert "uploads" not in shown
    _, [reply] = await stored(sessionmaker, body["message_id"])  # sent as is on every channel
    assert reply.text == done["answer"]
    assert reply.citations[0]["source"] == str(path)  # staff still see where it came from


# -- the answer stream, and LLM streaming -------------------------------------------------------


async def test_answer_stream_without_llm_is_one_done_equal_to_answer(answerer: Answerer) -> None:
    for question in (FAQ_QUESTION, DOCS_QUESTION, "Thời tiết ở Đà Lạt thế nào?"):
        events = [e async for e in answerer.answer_stream(question)]
        [done] = events
        assert isinstance(done, StreamDone)
        expected = await answerer.answer(question)
        assert (done.answer.tier, done.answer.answer) == (expected.tier, expected.answer)
        assert done.answer.citations == expected.citations
        assert done.answer.timings_ms["total"] > 0


@pytest.fixture
async def llm_runtime(
    stub: OpenAIStub,
    runtime: Runtime,
    parts: AnswererParts,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> AsyncIterator[Runtime]:
    llm_settings = parts.settings.llm.model_copy(
        update={"base_url": stub.base_url, "api_key": SecretStr("sk-test"), "model": "m"}
    )
    settings = runtime.settings.model_copy(update={"llm": llm_settings})
    client = LlmClient(llm_settings, max_retries=0)
    llm_parts = replace(parts, settings=settings, llm=client)
    try:
        yield replace(
            runtime, settings=settings, parts=llm_parts, answerer=Answerer(llm_parts, sessionmaker)
        )
    finally:
        await client.aclose()


@pytest.fixture
async def llm_client(llm_runtime: Runtime, serve: Callable[..., Any]) -> Client:
    started: Client = await serve(make_app(llm_runtime))
    return started


async def test_llm_reply_streams_as_tokens_then_done_as_answer_formats_it(
    llm_client: Client,
    llm_runtime: Runtime,
    stub: OpenAIStub,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    reply = "Bạn đăng ký ở ký túc xá trực tuyến theo các bước trong tài liệu [1]."
    stub.script_chat(reply)
    body = chat_body(DORM_QUESTION)
    _, events = await post_chat(llm_client, body)
    assert events[0] == Event("meta", {"tier": "documents"})
    tokens = [e.data["text"] for e in events if e.name == "token"]
    assert len(tokens) > 5
    assert "".join(tokens) == reply
    assert [e.name for e in events[1:]] == ["token"] * len(tokens) + ["done"]
    assert stub.requests_to("/v1/chat/completions")[0].body["stream"] is True

    stub.script_chat(reply)
    expected = await llm_runtime.answerer.answer(DORM_QUESTION)
    done = events[-1].data
    assert done["tier"] == "documents"
    assert done["answer"] == expected.answer
    assert done["answer"].startswith(reply)
    assert llm_runtime.settings.answer.disclaimer_docs_vi in done["answer"]
    assert [c["n"] for c in done["citations"]] == [1]
    _, [stored_reply] = await stored(sessionmaker, body["message_id"])
    assert stored_reply.text == done["answer"]
    assert stored_reply.details["streamed"] is True


async def test_llm_reply_citing_an_unknown_source_is_replaced_by_the_fallback(
    llm_client: Client,
    llm_runtime: Runtime,
    stub: OpenAIStub,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    bogus = "Phí ký túc xá là 999.000 đồng [9]."
    fallback = "Mình không chắc, bạn hãy hỏi phòng tuyển sinh."
    stub.script_chat(bogus)
    stub.script_chat(fallback)
    body = chat_body(DORM_QUESTION)
    _, events = await post_chat(llm_client, body)
    names = [e.name for e in events]
    assert names[0] == "meta"
    assert names[-2:] == ["replace", "done"]
    assert "".join(e.data["text"] for e in events if e.name == "token") == bogus

    stub.script_chat(bogus)
    stub.script_chat(fallback)
    expected = await llm_runtime.answerer.answer(DORM_QUESTION)
    done = events[-1].data
    assert expected.tier == "fallback"
    assert (done["tier"], done["answer"]) == (expected.tier, expected.answer)
    assert "999.000" not in done["answer"]
    _, [stored_reply] = await stored(sessionmaker, body["message_id"])
    assert stored_reply.text == done["answer"]
    assert "999.000" not in stored_reply.text


async def test_llm_stream_breaking_off_is_replaced_by_the_extractive_answer(
    llm_client: Client, stub: OpenAIStub
) -> None:
    stub.script_chat("Bạn đăng ký ở ký túc xá trực tuyến theo tài liệu [1].", stream_error_after=2)
    _, events = await post_chat(llm_client, chat_body(DORM_QUESTION))
    assert [e.name for e in events] == ["meta", "token", "token", "replace", "done"]
    done = events[-1].data
    assert done["tier"] == "documents"
    assert done["answer"].startswith(replies.extractive_intro("vi"))


async def test_llm_down_before_any_token_answers_extractively_without_replace(
    llm_client: Client, stub: OpenAIStub
) -> None:
    stub.fail(500)
    _, events = await post_chat(llm_client, chat_body(DORM_QUESTION))
    assert [e.name for e in events] == ["meta", "done"]
    assert events[-1].data["answer"].startswith(replies.extractive_intro("vi"))


async def test_visitor_leaving_mid_stream_still_gets_the_stored_answer_on_retry(
    committing: Callable[[Runtime], Runtime],
    llm_runtime: Runtime,
    stub: OpenAIStub,
    serve: Callable[..., Any],
) -> None:
    real = committing(llm_runtime)
    client = await serve(make_app(real))
    reply = "Bạn đăng ký ở ký túc xá trực tuyến theo các bước trong tài liệu [1]. " * 20
    stub.script_chat(reply)
    body = chat_body(DORM_QUESTION)
    response = await client.post("/api/chat", json=body)
    assert b"event: token" in await response.content.readuntil(b"event: token")
    response.close()  # the tab was closed mid-answer

    for _ in range(100):
        _, answers = await stored(real.sessionmaker, body["message_id"])
        if answers:
            break
        await asyncio.sleep(0.1)
    [answer] = answers
    assert answer.text.startswith(reply.strip())
    _, [done] = await post_chat(client, body)
    assert done.data["answer"] == answer.text
    assert len(stub.requests_to("/v1/chat/completions")) == 1
