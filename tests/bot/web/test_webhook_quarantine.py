"""Webhook events that cannot be stored as they came, end to end: a batch stored event by event
(an event without a sender skipped, the student's message answered), a NUL removed, what the
database refuses quarantined and acknowledged once, a database out of reach still a 503."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace

import pytest
from aiohttp.test_utils import TestClient, TestServer
from sqlalchemy import text
from sqlalchemy.ext.asyncio import async_sessionmaker

from bot.core.metrics import METRICS
from bot.db.engine import make_engine
from bot.web.app import create_app
from tests.bot.web._support import (
    FAQ_QUESTION,
    SECRET,
    Stack,
    chat_id,
    messenger_batch,
    post_telegram,
    post_zalo,
    quarantined,
    signed,
    statuses,
    telegram_update,
    text_event,
    zalo_text,
)

pytestmark = pytest.mark.usefixtures("demo_kb")


async def test_an_event_without_a_sender_is_skipped_and_the_students_message_answered(
    stack: Stack,
) -> None:
    METRICS.reset()
    psid = f"9{uuid.uuid4().int % 10**12}"
    roles = {"recipient": {"id": "PAGE"}, "timestamp": 1, "app_roles": {"111": ["primary"]}}
    body = messenger_batch(roles, text_event(psid, f"r-{psid}", FAQ_QUESTION))
    for _ in range(2):  # Meta's retry of the same batch: nothing twice
        response = await stack.client.post("/webhooks/messenger", data=body, headers=signed(body))
        assert response.status == 200
    await stack.worker.drain()
    assert await statuses(stack, psid) == [("in", "answered"), ("out", "sent")]
    assert "SHUT" in stack.messenger.messages[0]["message"]["text"]
    [(where, reason, raw_body)] = await quarantined(stack, "messenger")
    assert where == "entry[0].messaging[0]"
    assert "app_roles event without a sender" in reason
    assert json.loads(raw_body) == json.loads(body)
    metrics = METRICS.render()
    assert 'tuvan_inbound_skipped_total{channel="messenger"} 2' in metrics
    assert 'tuvan_inbound_quarantined_total{channel="messenger"} 1' in metrics


async def test_an_unreadable_telegram_update_is_acknowledged_and_kept(stack: Stack) -> None:
    update = {"update_id": chat_id(), "message": {"chat": {"id": "x"}, "text": "hi"}}
    assert await post_telegram(stack, update) == 200
    [(where, reason, raw_body)] = await quarantined(stack, "telegram")
    assert where == f"update {update['update_id']}"
    assert "not a Telegram update" in reason
    assert json.loads(raw_body) == update


async def test_a_nul_in_a_question_is_removed_and_the_question_stored_and_answered(
    stack: Stack,
) -> None:
    chat = chat_id()
    with_nul = FAQ_QUESTION.replace("trường", "trư\x00ờng", 1)
    body = json.dumps(telegram_update(chat, chat, with_nul)).encode()
    assert b"\\u0000" in body
    response = await stack.client.post(
        "/webhooks/telegram", data=body, headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}
    )
    assert response.status == 200
    async with stack.sm() as session:
        stored = await session.scalar(
            text(
                "SELECT m.text FROM messages m JOIN conversations c ON c.id = m.conversation_id "
                "JOIN contacts k ON k.id = c.contact_id WHERE k.external_id = :u"
            ),
            {"u": str(chat)},
        )
    assert stored == FAQ_QUESTION
    await stack.worker.drain()
    assert await statuses(stack, str(chat)) == [("in", "answered"), ("out", "sent")]
    assert await quarantined(stack, "telegram") == []


async def test_events_the_database_refuses_are_quarantined_once_and_acknowledged(
    stack: Stack,
) -> None:
    METRICS.reset()
    chat = chat_id()
    nan = json.dumps(telegram_update(chat, chat, "hi")).replace('"hi"', '"hi", "score": NaN')
    psid = f"9{uuid.uuid4().int % 10**12}"
    long_mid = messenger_batch(text_event(psid, "m" * 300, FAQ_QUESTION))
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    for _ in range(2):  # the platform's retry: acknowledged again, no second row
        response = await stack.client.post("/webhooks/telegram", data=nan, headers=headers)
        assert response.status == 200
        response = await stack.client.post(
            "/webhooks/messenger", data=long_mid, headers=signed(long_mid)
        )
        assert response.status == 200
    [(where, reason, raw_body)] = await quarantined(stack, "telegram")
    assert (where, raw_body) == (f"event {chat}", nan)
    assert "invalid input syntax for type json" in reason
    [(where, reason, raw_body)] = await quarantined(stack, "messenger")
    assert where == "event " + "m" * 194  # cut to the column
    assert "too long" in reason
    assert raw_body == long_mid.decode()
    assert await statuses(stack, str(chat)) == []
    assert await statuses(stack, psid) == []
    metrics = METRICS.render()
    assert 'tuvan_inbound_quarantined_total{channel="telegram"} 1' in metrics
    assert 'tuvan_webhook_requests_total{channel="messenger",status="200"} 2' in metrics


async def test_a_database_that_cannot_be_reached_is_a_503_to_retry(
    stack: Stack, unused_tcp_port: int
) -> None:
    dead = make_engine(f"postgresql+psycopg://tuvan@127.0.0.1:{unused_tcp_port}/tuvan")
    runtime = replace(stack.runtime, engine=dead, sessionmaker=async_sessionmaker(dead))
    client = TestClient(TestServer(create_app(runtime, stack.adapters, stack.http)))
    await client.start_server()
    chat = chat_id()
    update = json.dumps(telegram_update(chat, chat, FAQ_QUESTION)).encode()
    body = messenger_batch(
        text_event("9001", "m-down-1", FAQ_QUESTION), text_event("9001", "m-down-2", "hi")
    )
    try:
        response = await client.post(
            "/webhooks/telegram", data=update, headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}
        )
        assert response.status == 503
        response = await client.post("/webhooks/messenger", data=body, headers=signed(body))
        assert response.status == 503
    finally:
        await client.close()
        await dead.dispose()
    assert await post_telegram(stack, telegram_update(chat, chat, FAQ_QUESTION)) == 200
    assert await statuses(stack, str(chat)) == [("in", "received")]
    assert await quarantined(stack, "telegram") == []


async def test_a_zalo_event_without_a_msg_id_is_acknowledged_and_kept(stack: Stack) -> None:
    user = f"9{uuid.uuid4().int % 10**12}"
    assert await post_zalo(stack, zalo_text(user, "", "Cho em hỏi")) == 200
    [(where, reason, _)] = await quarantined(stack, "zalo")
    assert (where, reason) == (
        "event user_send_text",
        "zalo: user_send_text without message.msg_id",
    )
    assert await statuses(stack, user) == []
