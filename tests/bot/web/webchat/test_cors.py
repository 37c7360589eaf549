"""The web chat over real HTTP on 127.0.0.1: which origins may call the API."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.models import Message
from tests.bot.web._webchat import FAQ_QUESTION, chat_body
from tests.bot.web.webchat._support import JSON, SITE, Client, error_of, get_history, post_chat


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
