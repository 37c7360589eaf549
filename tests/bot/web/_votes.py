"""What the tests of 👍/👎 on the platforms share (a test module imports no other): a question
asked and its answer as the fake platform got it, with its vote buttons; a tap sent back in
each platform's shape; the votes and messages stored."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from sqlalchemy import text

from bot.channels.telegram_polling import poll_into_store
from bot.core.votes import read_vote_payload
from tests.adapters.telegram._support import wait_for
from tests.bot.web._support import (
    FAQ_QUESTION,
    SECRET,
    Stack,
    messenger_batch,
    post_telegram,
    post_zalo,
    signed,
    telegram_update,
    text_event,
    zalo_text,
)

ENGLISH_FAQ_QUESTION = "What English level do international students need?"  # shut-faq29


async def feedback(stack: Stack, external_id: str) -> list[tuple[int, str, int]]:
    """(answer id, channel, value) of the votes in this user's conversation."""
    async with stack.sm() as session:
        rows = await session.execute(
            text(
                "SELECT f.message_id, f.channel, f.value FROM answer_feedback f "
                "JOIN conversations c ON c.id = f.conversation_id "
                "JOIN contacts k ON k.id = c.contact_id WHERE k.external_id = :u ORDER BY f.id"
            ),
            {"u": external_id},
        )
        return [(m, c, v) for m, c, v in rows]


async def inbound(stack: Stack, external_id: str) -> list[tuple[str, str, str]]:
    """(kind, status, text) of the user's inbound messages, in order."""
    async with stack.sm() as session:
        rows = await session.execute(
            text(
                "SELECT m.kind, m.status::text, m.text FROM messages m "
                "JOIN conversations c ON c.id = m.conversation_id "
                "JOIN contacts k ON k.id = c.contact_id "
                "WHERE k.external_id = :u AND m.direction = 'in' ORDER BY m.id"
            ),
            {"u": external_id},
        )
        return [(k, s, t) for k, s, t in rows]


def votes_of(payloads: list[str]) -> list[tuple[int, int]]:
    return [found for p in payloads if (found := read_vote_payload(p)) is not None]


# -- Telegram -----------------------------------------------------------------------------------


def callback_update(update_id: int, chat: int, sent: dict[str, Any], data: str) -> dict[str, Any]:
    """A tap on a button of the message ``sent`` (the fake's sendMessage result), as Telegram
    sends it: the message comes back with its keyboard."""
    return {
        "update_id": update_id,
        "callback_query": {
            "id": f"cbq-{update_id}",
            "from": {"id": chat, "is_bot": False, "first_name": "Lan"},
            "chat_instance": "-4242",
            "data": data,
            "message": {
                "message_id": sent["message_id"],
                "date": 1_764_400_100,
                "chat": {"id": chat, "type": "private"},
                "from": {"id": 123456, "is_bot": True, "first_name": "Fake"},
                "text": "…",
                "reply_markup": sent["reply_markup"],
            },
        },
    }


async def telegram_answer(
    stack: Stack, chat: int, question: str = FAQ_QUESTION
) -> tuple[dict[str, Any], list[str]]:
    """Ask ``question`` in ``chat``; the answer as sent, and its buttons' callback data."""
    assert await post_telegram(stack, telegram_update(chat, chat, question)) == 200
    await stack.worker.drain()
    calls = stack.telegram.calls_to("sendMessage")
    keyboard = calls[-1].body["reply_markup"]["inline_keyboard"]
    data = [b["callback_data"] for row in keyboard for b in row if "callback_data" in b]
    # the fake numbers its messages from 101
    sent = {"message_id": 100 + len(calls), "reply_markup": calls[-1].body["reply_markup"]}
    return sent, data


async def post_callback(stack: Stack, update: dict[str, Any]) -> Any:
    response = await stack.client.post(
        "/webhooks/telegram",
        data=json.dumps(update).encode(),
        headers={"X-Telegram-Bot-Api-Secret-Token": SECRET, "Content-Type": "application/json"},
    )
    assert response.status == 200
    return await response.json()


# -- Messenger ----------------------------------------------------------------------------------


def quick_reply_event(psid: str, mid: str, title: str, payload: str) -> dict[str, Any]:
    return {
        "sender": {"id": psid},
        "recipient": {"id": "PAGE"},
        "timestamp": int(time.time() * 1000),
        "message": {"mid": mid, "text": title, "quick_reply": {"payload": payload}},
    }


def messenger_sent(stack: Stack, psid: str) -> list[dict[str, Any]]:
    """The messages sent to ``psid``, in order."""
    return [m["message"] for m in stack.messenger.messages if m["recipient"]["id"] == psid]


async def messenger_answer(
    stack: Stack, psid: str, question: str = FAQ_QUESTION
) -> list[dict[str, str]]:
    """Ask ``question``; the quick replies of the answer (on its last message)."""
    body = messenger_batch(text_event(psid, f"q-{psid}", question))
    assert (
        await stack.client.post("/webhooks/messenger", data=body, headers=signed(body))
    ).status == 200
    await stack.worker.drain()
    quick: list[dict[str, str]] = messenger_sent(stack, psid)[-1]["quick_replies"]
    return quick


async def post_messenger(stack: Stack, *events: dict[str, Any]) -> None:
    body = messenger_batch(*events)
    response = await stack.client.post("/webhooks/messenger", data=body, headers=signed(body))
    assert response.status == 200


# -- Zalo ---------------------------------------------------------------------------------------


def zalo_sent(stack: Stack, user: str) -> list[dict[str, Any]]:
    """The messages sent to ``user``, in order."""
    return [s.body["message"] for s in stack.zalo.sends if s.body["recipient"]["user_id"] == user]


async def zalo_answer(
    stack: Stack, user: str, question: str = FAQ_QUESTION
) -> list[dict[str, Any]]:
    """Ask ``question``; the vote buttons under the answer's last part."""
    assert await post_zalo(stack, zalo_text(user, f"q-{user}", question)) == 200
    await stack.worker.drain()
    buttons: list[dict[str, Any]] = zalo_sent(stack, user)[-1]["attachment"]["payload"]["buttons"]
    return buttons


async def poll_until(stack: Stack, method: str) -> None:
    """Telegram long polling into the store, stopped once the fake API got a ``method`` call."""
    stop = asyncio.Event()
    task = asyncio.create_task(
        poll_into_store(stack.settings.telegram, stack.sm, stack.http, stop=stop, timeout=1)
    )
    try:
        await wait_for(lambda: bool(stack.telegram.calls_to(method)))
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)
