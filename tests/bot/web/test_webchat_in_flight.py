"""The web chat's answers in flight over real HTTP on 127.0.0.1 and the real database: a full
server refuses with 503 and stores nothing, the page's resend pays no second token, and a
visitor who leaves while waiting for a place is not answered."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.keys import RUNTIME
from bot.runtime import Runtime
from bot.web.webchat.handlers import setup_webchat
from tests.bot.web._webchat import FAQ_QUESTION, chat_body, parse_sse, stored_ids
from tests.waiting import until


async def test_a_full_server_says_503_with_retry_after_and_stores_nothing(
    make_runtime: Callable[..., Runtime],
    serve_webchat: Any,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    client, chat = await serve_webchat(make_runtime(answers_in_flight=1, answers_wait_s=0.05))
    place = await chat.gate.enter()  # an answer under way elsewhere
    assert place is not None
    body = chat_body(FAQ_QUESTION)
    response = await client.post("/api/chat", json=body)
    assert response.status == 503
    assert response.headers["Retry-After"] == "0"  # sent again at once, it keeps its turn
    assert body["message_id"] not in await stored_ids(sessionmaker)
    place.release()
    response = await client.post("/api/chat", json=body)  # the page's retry, same message id
    assert response.status == 200
    assert parse_sse(await response.text())[-1].name == "done"
    assert chat.gate.taken == 0  # the answer gave its place back


async def test_a_question_sent_again_after_a_503_pays_no_second_token(
    make_runtime: Callable[..., Runtime],
    serve_webchat: Any,
) -> None:
    """One token for the visitor: the first try takes it and meets a full gate; the page's
    resend of the same message is answered, not refused for an empty bucket."""
    runtime = make_runtime(
        answers_in_flight=1,
        answers_wait_s=0.05,
        chat_visitor_burst=1,
        chat_visitor_per_minute=0.5,
    )
    client, chat = await serve_webchat(runtime)
    place = await chat.gate.enter()  # an answer under way elsewhere
    assert place is not None
    body = chat_body(FAQ_QUESTION, visitor="one-token")
    assert (await client.post("/api/chat", json=body)).status == 503
    place.release()
    again = await client.post("/api/chat", json=body)  # the page's resend
    assert again.status == 200
    assert parse_sse(await again.text())[-1].name == "done"
    other = chat_body(FAQ_QUESTION, visitor="one-token")  # a new question pays again
    assert (await client.post("/api/chat", json=other)).status == 429


async def test_a_visitor_who_left_while_waiting_for_a_place_is_not_answered(
    make_runtime: Callable[..., Runtime], sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    """On a server run as ``tuvan serve`` runs it: a handler is not cancelled when its client
    leaves (aiohttp's test server would cancel it), so the chat must notice by itself."""
    app = web.Application()
    app[RUNTIME] = make_runtime(answers_in_flight=1, answers_wait_s=5.0)
    chat = setup_webchat(app)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        port = runner.addresses[0][1]
        place = await chat.gate.enter()  # an answer under way elsewhere
        assert place is not None
        body = chat_body(FAQ_QUESTION)
        raw = json.dumps(body).encode()
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
            % (port, len(raw), raw)
        )
        await writer.drain()
        await until(lambda: chat.gate.waiting > 0)
        writer.close()  # the tab is closed
        await writer.wait_closed()
        await asyncio.sleep(0.05)  # the server sees the connection go
        place.release()
        await until(lambda: chat.gate.taken == 0 and chat.gate.waiting == 0)
        await asyncio.sleep(0.05)  # the handler, had it gone on, would be storing by now
        assert body["message_id"] not in await stored_ids(sessionmaker)
        assert chat.gate.taken == 0
    finally:
        await runner.cleanup()
