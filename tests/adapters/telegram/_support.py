"""Helpers shared by the Telegram adapter's tests: documented update shapes and requests."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from multidict import CIMultiDict

from adapters.telegram.webhook import SECRET_HEADER
from bot.core.messages import RawRequest

SECRET = "s3cret_Token-42"


DATE = 1_767_225_600  # 2026-01-01 00:00:00 UTC


USER = {
    "id": 111222333,
    "is_bot": False,
    "first_name": "Lan",
    "last_name": "Nguyễn",
    "username": "lan_ng",
    "language_code": "vi",
}


PRIVATE_CHAT = {"id": 111222333, "first_name": "Lan", "last_name": "Nguyễn", "type": "private"}


def message_update(update_id: int, **fields: Any) -> dict[str, Any]:
    message = {"message_id": 7, "from": USER, "chat": PRIVATE_CHAT, "date": DATE, **fields}
    return {"update_id": update_id, "message": message}


def raw_request(body: Any, headers: dict[str, str] | None = None) -> RawRequest:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {SECRET_HEADER: SECRET} if headers is None else headers
    return RawRequest("POST", CIMultiDict(headers), {}, data)


async def wait_for(condition: Any, seconds: float = 10.0) -> None:
    async with asyncio.timeout(seconds):
        while not condition():  # noqa: ASYNC110 (the fake's state has no event to wait on)
            await asyncio.sleep(0.02)
