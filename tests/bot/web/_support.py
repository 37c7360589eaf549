"""What the webhook tests share: the platforms' secrets, the running stack (tuvan over real
HTTP on 127.0.0.1, the real worker, fake platform APIs), and requests in each platform's shape."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from adapters.zalo.signature import zalo_signature
from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.settings import Settings
from bot.runtime import Runtime
from bot.web.webchat.handlers import WebChat
from bot.worker.loop import Worker
from tests.fakes.messenger_api import MessengerApiFake
from tests.fakes.telegram_api import FakeTelegramApi
from tests.fakes.zalo_api import ZaloApiFake

SECRET = "webhook-secret_123"
ZALO_APP = "3482178216594085616"
ZALO_KEY = "oa-secret-key"
APP_SECRET = "meta-app-secret"
FAQ_QUESTION = "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?"


Client = TestClient[web.Request, web.Application]
# ``await serve_webchat(runtime)`` (the fixture in conftest.py): the web chat alone, on a port.
ServeWebChat = Callable[[Runtime], Awaitable[tuple[Client, WebChat]]]


@dataclass
class Stack:
    client: TestClient[Any, Any]
    worker: Worker
    telegram: FakeTelegramApi
    messenger: MessengerApiFake
    zalo: ZaloApiFake
    sm: async_sessionmaker[AsyncSession]
    settings: Settings
    runtime: Runtime
    adapters: dict[str, Any]
    http: aiohttp.ClientSession


def chat_id() -> int:
    return 900_000_000 + uuid.uuid4().int % 99_999_999


def telegram_update(update_id: int, chat: int, text_: str) -> dict[str, Any]:
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id % 1000,
            "date": 1_764_400_000,
            "chat": {"id": chat, "type": "private", "first_name": "Lan"},
            "from": {"id": chat, "is_bot": False, "first_name": "Lan", "language_code": "vi"},
            "text": text_,
        },
    }


async def post_telegram(stack: Stack, update: dict[str, Any], secret: str = SECRET) -> int:
    response = await stack.client.post(
        "/webhooks/telegram",
        data=json.dumps(update).encode(),
        headers={"X-Telegram-Bot-Api-Secret-Token": secret, "Content-Type": "application/json"},
    )
    return response.status


async def statuses(stack: Stack, external_id: str) -> list[tuple[str, str]]:
    async with stack.sm() as session:
        rows = await session.execute(
            text(
                "SELECT m.direction::text, m.status::text FROM messages m "
                "JOIN conversations c ON c.id = m.conversation_id "
                "JOIN contacts k ON k.id = c.contact_id WHERE k.external_id = :u ORDER BY m.id"
            ),
            {"u": external_id},
        )
        return [(d, s) for d, s in rows]


def signed(body: bytes) -> dict[str, str]:
    mac = hmac.new(APP_SECRET.encode(), body, hashlib.sha256).hexdigest()
    return {"X-Hub-Signature-256": f"sha256={mac}", "Content-Type": "application/json"}


def messenger_batch(*events: dict[str, Any]) -> bytes:
    return json.dumps(
        {"object": "page", "entry": [{"id": "PAGE", "time": 1, "messaging": list(events)}]}
    ).encode()


def text_event(psid: str, mid: str, text_: str, *, timestamp: int | None = None) -> dict[str, Any]:
    return {
        "sender": {"id": psid},
        "recipient": {"id": "PAGE"},
        "timestamp": timestamp or int(time.time() * 1000),
        "message": {"mid": mid, "text": text_},
    }


async def quarantined(stack: Stack, channel: str) -> list[tuple[str, str, str]]:
    async with stack.sm() as session:
        rows = await session.execute(
            text(
                "SELECT location, reason, raw_body FROM quarantined_events WHERE channel = :c "
                "ORDER BY id"
            ),
            {"c": channel},
        )
        return [(w, r, b) for w, r, b in rows]


async def post_zalo(stack: Stack, event: dict[str, Any], *, key: str = ZALO_KEY) -> int:
    body = json.dumps(event).encode()
    mac = zalo_signature(ZALO_APP, body, str(event["timestamp"]), key)
    response = await stack.client.post(
        "/webhooks/zalo",
        data=body,
        headers={"X-ZEvent-Signature": f"mac={mac}", "Content-Type": "application/json"},
    )
    return response.status


def zalo_text(user: str, msg_id: str, text_: str) -> dict[str, Any]:
    return {
        "app_id": ZALO_APP,
        "user_id_by_app": "555",
        "event_name": "user_send_text",
        "timestamp": str(int(time.time() * 1000)),
        "sender": {"id": user},
        "recipient": {"id": "OA-1"},
        "message": {"text": text_, "msg_id": msg_id},
    }


def runtime_with(
    settings: Settings,
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
    *,
    web_changes: dict[str, Any] | None = None,
    admin_changes: dict[str, Any] | None = None,
    **limits: Any,
) -> Runtime:
    """A runtime whose settings' web, admin and limits sections are changed as given."""
    settings = settings.model_copy(
        update={
            "web": settings.web.model_copy(update=web_changes or {}),
            "admin": settings.admin.model_copy(update=admin_changes or {}),
            "limits": settings.limits.model_copy(update=limits),
        }
    )
    return Runtime(settings, engine, sessionmaker, parts, answerer)
