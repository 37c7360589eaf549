"""The web chat over real HTTP on 127.0.0.1: malformed or oversized requests, refused with a
JSON error."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.web.webchat.protocol import MAX_CHAT_BODY
from tests.bot.web._webchat import chat_body
from tests.bot.web.webchat._support import JSON, Client, error_of, get_history, post_chat, stored

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
