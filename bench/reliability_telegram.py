"""The fake Telegram Bot API the reliability benches run serve and the worker against, and the
the webhook updates the benches post to serve; reliability_stack starts the stack itself."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from aiohttp import web
from reliability_stack import TELEGRAM_SECRET, TELEGRAM_TOKEN, client

from tests.fakes.telegram_api import FakeTelegramApi


def telegram_update(update_id: int, chat: int, question: str) -> dict[str, Any]:
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": int(time.time()),
            "chat": {"id": chat, "type": "private", "first_name": "Bench"},
            "from": {"id": chat, "is_bot": False, "first_name": "Bench"},
            "text": question,
        },
    }


SendHook = Callable[[int, str], Awaitable[None]]


class Telegram:
    """The fake Telegram Bot API of tests/fakes, served with a hook after each accepted
    ``sendMessage`` (the message is sent; the hook runs before the response goes back)."""

    def __init__(self) -> None:
        self.api = FakeTelegramApi(token=TELEGRAM_TOKEN)
        self.hook: SendHook | None = None
        self.runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = self.api.app()

        @web.middleware
        async def after_send(request: web.Request, handler: Any) -> web.StreamResponse:
            response: web.StreamResponse = await handler(request)
            if request.path.endswith("/sendMessage") and response.status == 200 and self.hook:
                call = self.api.calls_to("sendMessage")[-1]
                await self.hook(int(call.body.get("chat_id", 0)), str(call.body.get("text")))
            return response

        app.middlewares.append(after_send)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.api.api_base = f"http://127.0.0.1:{self.runner.addresses[0][1]}"

    async def close(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    def sends(self) -> list[tuple[int, str]]:
        """(chat id, text) of every sendMessage the fake accepted."""
        out = []
        for call in self.api.calls_to("sendMessage"):
            try:
                chat = int(call.body.get("chat_id", 0))
            except (TypeError, ValueError):
                continue
            out.append((chat, str(call.body.get("text"))))
        return out

    def per_chat(self) -> Counter[int]:
        return Counter(chat for chat, _ in self.sends())

    def duplicates(self) -> int:
        """Messages the platform got more than once (same chat, same text)."""
        return sum(n - 1 for n in Counter(self.sends()).values() if n > 1)


async def post_updates(
    url: str, updates: list[dict[str, Any]], *, rate: float, source: str = "127.0.0.3"
) -> Counter[str]:
    """POST each update to the Telegram webhook at ``rate`` per second; status counts."""
    statuses: Counter[str] = Counter()
    headers = {"X-Telegram-Bot-Api-Secret-Token": TELEGRAM_SECRET}
    async with client(source, timeout_s=30) as http:

        async def one(update: dict[str, Any]) -> None:
            try:
                async with http.post(f"{url}/webhooks/telegram", json=update, headers=headers) as r:
                    await r.read()
                    statuses[str(r.status)] += 1
            except (aiohttp.ClientError, TimeoutError):
                statuses["error"] += 1

        tasks = []
        started = time.monotonic()
        for i, update in enumerate(updates):
            delay = started + i / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(update)))
        await asyncio.gather(*tasks)
    return statuses
