"""Webhooks end to end: real HTTP on 127.0.0.1 into tuvan, the real worker, fake platform APIs.

The database is the session's PostgreSQL with real commits (the queues are about transactions);
each test deletes its own contacts.
"""

from __future__ import annotations

import asyncio
import io
import json
import time
import uuid

import pytest
from sqlalchemy import text

from adapters.zalo.signature import zalo_signature
from bot.conversations.inbound import WAITING_NOTICE
from bot.conversations.store import queue_staff_reply
from bot.core.metrics import METRICS
from tests.bot.web._support import (
    FAQ_QUESTION,
    SECRET,
    ZALO_APP,
    ZALO_KEY,
    Stack,
    chat_id,
    messenger_batch,
    post_telegram,
    post_zalo,
    signed,
    statuses,
    telegram_update,
    text_event,
    zalo_text,
)
from tests.fakes.raw_http import raw_post

pytestmark = pytest.mark.usefixtures("demo_kb")


# -- Telegram ---------------------------------------------------------------------------------


async def test_a_telegram_question_is_acknowledged_stored_answered_and_sent(stack: Stack) -> None:
    chat = chat_id()
    assert await post_telegram(stack, telegram_update(chat, chat, FAQ_QUESTION)) == 200
    assert await statuses(stack, str(chat)) == [("in", "received")]  # acknowledged, not answered
    await stack.worker.drain()
    assert await statuses(stack, str(chat)) == [("in", "answered"), ("out", "sent")]
    [sent] = stack.telegram.calls_to("sendMessage")
    assert sent.body["chat_id"] == chat
    assert sent.body["parse_mode"] == "HTML"
    assert "SHUT" in sent.body["text"]
    assert stack.telegram.calls_to("sendChatAction")  # typing while answering


async def test_the_same_update_delivered_five_times_concurrently_is_answered_once(
    stack: Stack,
) -> None:
    chat = chat_id()
    update = telegram_update(chat + 1, chat, FAQ_QUESTION)
    results = await asyncio.gather(*(post_telegram(stack, update) for _ in range(5)))
    assert results == [200] * 5
    await stack.worker.drain()
    assert await statuses(stack, str(chat)) == [("in", "answered"), ("out", "sent")]
    assert len(stack.telegram.calls_to("sendMessage")) == 1


async def test_a_telegram_burst_past_the_pending_cap_gets_one_notice_and_every_answer(
    stack: Stack,
) -> None:
    chat = chat_id()
    cap = stack.settings.limits.pending_per_conversation
    assert stack.settings.limits.flood_per_conversation > cap + 2
    for n in range(cap + 2):
        update = telegram_update(chat + n, chat, f"{FAQ_QUESTION} ({n})")
        assert await post_telegram(stack, update) == 200  # acknowledged: nothing is lost
    stored = await statuses(stack, str(chat))
    assert sorted(stored) == sorted([("in", "received")] * (cap + 2) + [("out", "queued")])
    await stack.worker.drain()
    stored = await statuses(stack, str(chat))
    assert [s for d, s in stored if d == "in"] == ["answered"] * (cap + 2)  # none held
    sent = [c.body["text"] for c in stack.telegram.calls_to("sendMessage")]
    assert len(sent) == cap + 3  # every answer and one notice
    assert [t for t in sent if WAITING_NOTICE["vi"] in t] == [WAITING_NOTICE["vi"]]


@pytest.mark.parametrize("secret", ["wrong-secret", ""])
async def test_a_forged_telegram_webhook_is_rejected_and_stores_nothing(
    stack: Stack, secret: str
) -> None:
    chat = chat_id()
    assert await post_telegram(stack, telegram_update(chat, chat, "hi"), secret=secret) == 403
    assert await statuses(stack, str(chat)) == []


async def test_malformed_oversized_and_unconfigured_webhooks_get_clear_statuses(
    stack: Stack,
) -> None:
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    bad = await stack.client.post("/webhooks/telegram", data=b"{not json", headers=headers)
    assert bad.status == 400
    big = await stack.client.post(
        "/webhooks/telegram",
        data=io.BytesIO(b"x" * (stack.settings.max_body_bytes + 1)),
        headers=headers,
    )
    assert big.status == 413
    unsigned = await stack.client.post("/webhooks/zalo", data=b"{}")
    assert unsigned.status == 403


async def test_bad_bytes_in_a_webhook_are_a_403_or_400_never_a_500(stack: Stack) -> None:
    update = json.dumps(telegram_update(chat_id(), 1, "hi")).encode()
    server = stack.client.server
    not_utf8 = b"X-Telegram-Bot-Api-Secret-Token: \xff\r\n"  # one byte 0xff on the wire
    assert await raw_post(server.host, server.port, "/webhooks/telegram", not_utf8, update) == 403
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    for body in (b"[" * 2000, b'{"update_id": ' + b"1" * 5000 + b"}"):
        response = await stack.client.post("/webhooks/telegram", data=body, headers=headers)
        assert response.status == 400
    deep = await stack.client.post(
        "/webhooks/zalo", data=b"[" * 2000, headers={"X-ZEvent-Signature": "mac=00"}
    )
    assert deep.status == 403  # the signature is checked on the bytes, before any parsing
    assert (
        await stack.client.post(
            "/webhooks/messenger", data=b"[" * 2000, **{"headers": signed(b"[" * 2000)}
        )
    ).status == 400
    # A body announced far larger than the limit is refused on its header, not waited for.
    secret = f"X-Telegram-Bot-Api-Secret-Token: {SECRET}\r\n".encode()
    huge = await asyncio.wait_for(
        raw_post(
            server.host, server.port, "/webhooks/telegram", secret, update, content_length=10**12
        ),
        timeout=10,
    )
    assert huge == 413


async def test_telegram_429_is_retried_after_its_retry_after(stack: Stack) -> None:
    chat = chat_id()
    stack.telegram.fail("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)
    await post_telegram(stack, telegram_update(chat + 2, chat, FAQ_QUESTION))
    await stack.worker.drain()
    assert await statuses(stack, str(chat)) == [("in", "answered"), ("out", "queued")]
    async with stack.sm() as session:
        wait = await session.scalar(
            text(
                "SELECT extract(epoch FROM next_attempt_at - now()) FROM messages m "
                "JOIN conversations c ON c.id = m.conversation_id JOIN contacts k "
                "ON k.id = c.contact_id WHERE k.external_id = :u AND m.direction = 'out'"
            ),
            {"u": str(chat)},
        )
    assert 0.5 < float(wait) <= 1.0  # not before Telegram's retry_after
    await asyncio.sleep(1.1)
    await stack.worker.drain()
    assert await statuses(stack, str(chat)) == [("in", "answered"), ("out", "sent")]
    assert len(stack.telegram.calls_to("sendMessage")) == 2


async def test_a_blocked_user_is_a_failed_send_not_a_retry_loop(stack: Stack) -> None:
    chat = chat_id()
    stack.telegram.fail("sendMessage", 403, "Forbidden: bot was blocked by the user")
    await post_telegram(stack, telegram_update(chat + 3, chat, FAQ_QUESTION))
    await stack.worker.drain()
    assert await statuses(stack, str(chat)) == [("in", "answered"), ("out", "failed")]


async def test_start_gets_the_greeting(stack: Stack) -> None:
    chat = chat_id()
    await post_telegram(stack, telegram_update(chat + 5, chat, "/start"))
    await stack.worker.drain()
    [sent] = stack.telegram.calls_to("sendMessage")
    assert "chatbot" in sent.body["text"]
    assert stack.settings.contact.phone in sent.body["text"]


async def test_messenger_handshake_and_signature(stack: Stack) -> None:
    ok = await stack.client.get(
        "/webhooks/messenger",
        params={"hub.mode": "subscribe", "hub.verify_token": "verify-me", "hub.challenge": "42"},
    )
    assert (ok.status, await ok.text()) == (200, "42")
    bad = await stack.client.get(
        "/webhooks/messenger",
        params={"hub.mode": "subscribe", "hub.verify_token": "nope", "hub.challenge": "42"},
    )
    assert bad.status == 403
    body = messenger_batch(text_event("9001", "m-1", "hi"))
    forged = await stack.client.post(
        "/webhooks/messenger", data=body, headers={"X-Hub-Signature-256": "sha256=" + "0" * 64}
    )
    assert forged.status == 403


async def test_every_platform_gets_the_same_plain_ok_for_a_stored_question(stack: Stack) -> None:
    chat, psid, zalo_user = chat_id(), str(chat_id()), str(chat_id())
    telegram_body = json.dumps(telegram_update(chat, chat, FAQ_QUESTION)).encode()
    messenger_body = messenger_batch(text_event(psid, f"m-{psid}", FAQ_QUESTION))
    zalo_event = zalo_text(zalo_user, f"z-{zalo_user}", FAQ_QUESTION)
    zalo_body = json.dumps(zalo_event).encode()
    zalo_mac = zalo_signature(ZALO_APP, zalo_body, zalo_event["timestamp"], ZALO_KEY)
    sent = [
        ("telegram", telegram_body, {"X-Telegram-Bot-Api-Secret-Token": SECRET}),
        ("messenger", messenger_body, signed(messenger_body)),
        ("zalo", zalo_body, {"X-ZEvent-Signature": f"mac={zalo_mac}"}),
    ]
    for channel, body, headers in sent:
        response = await stack.client.post(f"/webhooks/{channel}", data=body, headers=headers)
        answered = (response.status, response.headers["Content-Type"], await response.read())
        assert answered == (200, "text/plain; charset=utf-8", b"ok"), channel
    check = await stack.client.get(
        "/webhooks/messenger",
        params={"hub.mode": "subscribe", "hub.verify_token": "verify-me", "hub.challenge": "7"},
    )
    assert (check.headers["Content-Type"], await check.read()) == (
        "text/plain; charset=utf-8",
        b"7",
    )


async def test_a_person_replying_in_the_page_inbox_pauses_the_bot_in_that_thread(
    stack: Stack,
) -> None:
    psid = f"9{uuid.uuid4().int % 10**12}"
    echo = {
        "sender": {"id": "PAGE"},
        "recipient": {"id": psid},
        "timestamp": 1,
        "message": {
            "mid": f"echo-{psid}",
            "is_echo": True,
            "app_id": 263902037430900,
            "text": "Chào em, cô trả lời nhé",
        },
    }
    body = messenger_batch(echo, text_event(psid, f"q-{psid}", FAQ_QUESTION))
    response = await stack.client.post("/webhooks/messenger", data=body, headers=signed(body))
    assert response.status == 200
    await stack.worker.drain()
    assert await statuses(stack, psid) == [("out", "sent"), ("in", "skipped")]
    assert stack.messenger.messages == []  # the bot stayed quiet


async def test_both_events_of_a_messenger_batch_are_answered_in_order(stack: Stack) -> None:
    psid = f"9{uuid.uuid4().int % 10**12}"
    body = messenger_batch(
        text_event(psid, f"a-{psid}", FAQ_QUESTION),
        text_event(psid, f"b-{psid}", "Học phí chương trình chuẩn là bao nhiêu?"),
    )
    response = await stack.client.post("/webhooks/messenger", data=body, headers=signed(body))
    assert response.status == 200
    await stack.worker.drain()
    assert await statuses(stack, psid) == [
        ("in", "answered"),
        ("in", "answered"),
        ("out", "sent"),
        ("out", "sent"),
    ]
    sent = stack.messenger.messages
    assert [m["messaging_type"] for m in sent] == ["RESPONSE"] * len(sent)
    actions = [a["sender_action"] for a in stack.messenger.actions]
    assert actions[:2] == ["mark_seen", "typing_on"]
    assert "SHUT" in sent[0]["message"]["text"]
    # On the answer's last message (its source's link button): 👍/👎 first, then related FAQ
    # questions offered as quick replies, titles within Messenger's 20 characters
    assert sent[1]["message"]["attachment"]["payload"]["template_type"] == "button"
    quick = sent[1]["message"]["quick_replies"]
    votes, offered = quick[:2], quick[2:]
    assert [v["payload"].split(":")[2] for v in votes] == ["up", "down"]
    assert 1 <= len(offered) <= stack.settings.messenger.quick_replies
    assert all(len(q["title"]) <= 20 and q["payload"] for q in offered)


async def test_outside_the_24_hour_window_a_reply_is_stored_as_undeliverable(
    stack: Stack,
) -> None:
    psid = f"9{uuid.uuid4().int % 10**12}"
    old = 1_700_000_000_000  # 2023: long past the window
    body = messenger_batch(text_event(psid, f"old-{psid}", FAQ_QUESTION, timestamp=old))
    await stack.client.post("/webhooks/messenger", data=body, headers=signed(body))
    await stack.worker.drain()
    assert await statuses(stack, psid) == [("in", "answered"), ("out", "undeliverable")]
    assert stack.messenger.messages == []


async def conversation_of(stack: Stack, external_id: str) -> int:
    async with stack.sm() as session:
        found = await session.scalar(
            text(
                "SELECT c.id FROM conversations c JOIN contacts k ON k.id = c.contact_id "
                "WHERE k.external_id = :u"
            ),
            {"u": external_id},
        )
    return int(found)


STAFF_TEXT = "Chào em, cô trả lời nhé."


@pytest.mark.parametrize(
    ("days_ago", "expected"),
    [(0, "RESPONSE"), (3, "MESSAGE_TAG"), (10, None)],
)
async def test_a_staff_reply_uses_the_human_agent_tag_past_the_24_hour_window(
    stack: Stack, days_ago: int, expected: str | None
) -> None:
    psid = f"9{uuid.uuid4().int % 10**12}"
    asked = int((time.time() - days_ago * 86400) * 1000)
    body = messenger_batch(text_event(psid, f"staff-{psid}", FAQ_QUESTION, timestamp=asked))
    await stack.client.post("/webhooks/messenger", data=body, headers=signed(body))
    await stack.worker.drain()
    async with stack.sm.begin() as session:
        await queue_staff_reply(session, await conversation_of(stack, psid), STAFF_TEXT, "a@b.vn")
    await stack.worker.drain()
    final = (await statuses(stack, psid))[-1]
    if expected is None:  # past the 7 days even a person may not write
        assert final == ("out", "undeliverable")
        assert not any(m["message"].get("text") == STAFF_TEXT for m in stack.messenger.messages)
        return
    assert final == ("out", "sent")
    [sent] = [m for m in stack.messenger.messages if m["message"].get("text") == STAFF_TEXT]
    assert sent["messaging_type"] == expected
    assert sent.get("tag") == ("HUMAN_AGENT" if expected == "MESSAGE_TAG" else None)


# -- Zalo -------------------------------------------------------------------------------------


async def test_a_zalo_question_is_answered_and_an_expired_token_refreshed_once(
    stack: Stack,
) -> None:
    user = f"9{uuid.uuid4().int % 10**12}"
    assert await post_zalo(stack, zalo_text(user, f"z-{user}", "x"), key="forged") == 403
    assert await post_zalo(stack, zalo_text(user, f"z-{user}", FAQ_QUESTION)) == 200
    assert await post_zalo(stack, zalo_text(user, f"z-{user}", FAQ_QUESTION)) == 200  # retry
    stack.zalo.script_send(-216, "Access token is invalid")
    await stack.worker.drain()
    assert await statuses(stack, user) == [("in", "answered"), ("out", "sent")]
    sends = stack.zalo.sends
    assert len(sends) == 2  # refused with -216, then again with the refreshed token
    assert sends[0].headers["access_token"] != sends[1].headers["access_token"]
    assert stack.zalo.oauth_calls == 1
    assert sends[1].body["recipient"] == {"user_id": user}


# -- health and metrics -----------------------------------------------------------------------


async def test_health_and_prometheus_metrics(stack: Stack) -> None:
    METRICS.reset()
    chat = chat_id()
    await post_telegram(stack, telegram_update(chat + 4, chat, FAQ_QUESTION))
    health = await stack.client.get("/healthz")
    assert (health.status, await health.json()) == (200, {"status": "ok"})
    metrics = await (await stack.client.get("/metrics")).text()
    assert 'tuvan_webhook_requests_total{channel="telegram",status="200"} 1' in metrics
    assert "# TYPE tuvan_queue_depth gauge" in metrics
    assert 'tuvan_queue_depth{queue="inbox"}' in metrics
