"""Delivery on fake platforms over real HTTP (127.0.0.1), with real commits: a split reply
resumes after the parts already sent, and a hanging platform holds only its own channel."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest
from pydantic import SecretStr
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from adapters.interface import Adapter
from adapters.messenger import MessengerAdapter
from adapters.messenger.send_api import TEXT_LIMIT
from adapters.sending import split_text
from adapters.telegram import TelegramAdapter
from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.conversations.store import queue_staff_reply, record_inbound
from bot.core.messages import InboundMessage
from bot.core.settings import MessengerSettings, Settings
from bot.worker.loop import Worker
from tests.fakes.messenger_api import MessengerApiFake, start_messenger_api
from tests.fakes.telegram_api import FakeTelegramApi

pytestmark = pytest.mark.usefixtures("demo_kb")

# Three paragraphs of ~1,500 characters: Messenger's 2,000-character limit makes three parts.
PARAGRAPHS = [f"Phần {n}. " + "Thông tin tuyển sinh chi tiết. " * 48 for n in (1, 2, 3)]


@dataclass
class Platforms:
    worker: Worker
    messenger: MessengerApiFake
    telegram: FakeTelegramApi
    sm: async_sessionmaker[AsyncSession]


@pytest.fixture
async def platforms(
    engine: AsyncEngine, parts: AnswererParts, settings: Settings, telegram_api: FakeTelegramApi
) -> AsyncIterator[Platforms]:
    messenger = await start_messenger_api(page_token="page-token")
    settings = settings.model_copy(
        update={
            "telegram": telegram_api.settings(),
            "messenger": MessengerSettings(
                page_token=SecretStr("page-token"),
                app_secret=SecretStr("app-secret"),
                verify_token=SecretStr("verify-me"),
                api_base=messenger.base_url,
            ),
            "worker": settings.worker.model_copy(
                update={"backoff_base_s": 0.01, "backoff_max_s": 0.01, "send_concurrency": 1}
            ),
        }
    )
    sm = async_sessionmaker(engine, expire_on_commit=False)
    telegram = TelegramAdapter(settings.telegram)
    adapters: dict[str, Adapter] = {
        "telegram": telegram,
        "messenger": MessengerAdapter(settings.messenger),
    }
    async with aiohttp.ClientSession() as http:
        worker = Worker(settings, sm, Answerer(parts, sm), adapters, http)
        try:
            yield Platforms(worker, messenger, telegram_api, sm)
        finally:
            await telegram.aclose()
            await messenger.close()
            async with sm.begin() as session:
                await session.execute(
                    text(
                        "DELETE FROM contacts WHERE external_id LIKE 'test-dlv-%' "
                        "OR name = 'test-dlv'"
                    )
                )


async def queued_reply(sm: async_sessionmaker[AsyncSession], channel: str, text_: str) -> int:
    """A staff reply queued in a fresh conversation whose student wrote just now (the
    platform's window is open); the question itself is closed, so only the reply is to do."""
    user = f"test-dlv-{uuid.uuid4().hex[:8]}"
    if channel == "telegram":
        user = str(int(uuid.uuid4().int % 10**9))
    async with sm.begin() as session:
        recorded = await record_inbound(
            session,
            InboundMessage(
                channel=channel,  # type: ignore[arg-type]
                event_id=uuid.uuid4().hex,
                external_user_id=user,
                kind="text",
                text="Xin chào",
            ),
        )
        await session.execute(
            text("UPDATE messages SET status = 'skipped' WHERE id = :id"),
            {"id": recorded.message_id},
        )
        reply_id = await queue_staff_reply(session, recorded.conversation_id, text_, "staff")
        if channel == "telegram":  # a numeric chat id is not 'test-…': clean it up by hand
            await session.execute(
                text("UPDATE contacts SET name = 'test-dlv' WHERE external_id = :u"), {"u": user}
            )
    return reply_id


async def reply_row(
    sm: async_sessionmaker[AsyncSession], reply_id: int
) -> tuple[str, int, dict[str, Any]]:
    async with sm() as session:
        row = (
            await session.execute(
                text("SELECT status::text, attempts, details FROM messages WHERE id = :id"),
                {"id": reply_id},
            )
        ).one()
    return str(row[0]), int(row[1]), dict(row[2])


async def test_a_split_reply_whose_second_part_fails_resumes_at_the_second_part(
    platforms: Platforms,
) -> None:
    reply_id = await queued_reply(platforms.sm, "messenger", "\n\n".join(PARAGRAPHS))
    platforms.messenger.fail_request(2, 500)  # part 2 of the first attempt
    for _ in range(100):  # drain() stops when nothing is due: the retry is due ~10 ms later
        await platforms.worker.drain()
        if (await reply_row(platforms.sm, reply_id))[0] != "queued":
            break
        await asyncio.sleep(0.02)
    status, attempts, details = await reply_row(platforms.sm, reply_id)
    assert (status, attempts, details["parts_sent"]) == ("sent", 2, 3)
    first, second, third = split_text("\n\n".join(PARAGRAPHS), TEXT_LIMIT)
    # part 1 once; part 2 refused, then sent again; part 3 once
    texts = [m["message"]["text"] for m in platforms.messenger.messages]
    assert texts == [first, second, second, third]


async def test_each_part_is_recorded_as_soon_as_the_platform_accepts_it(
    platforms: Platforms,
) -> None:
    """What a worker killed during part 2 leaves behind: part 1 recorded, so the next claim
    resumes at part 2."""
    reply_id = await queued_reply(platforms.sm, "messenger", "\n\n".join(PARAGRAPHS))
    platforms.messenger.delay_request(2, 1.5)  # part 2 hangs a while
    tasks: set[asyncio.Task[None]] = set()
    await platforms.worker.step(tasks)
    for _ in range(200):  # until part 2 is on its way
        if len(platforms.messenger.requests) >= 2:
            break
        await asyncio.sleep(0.02)
    status, attempts, details = await reply_row(platforms.sm, reply_id)
    assert (status, attempts, details["parts_sent"]) == ("sending", 1, 1)
    await platforms.worker.drain()
    status, attempts, details = await reply_row(platforms.sm, reply_id)
    assert (status, attempts, details["parts_sent"]) == ("sent", 1, 3)
    assert len(platforms.messenger.messages) == 3


async def test_a_hanging_platform_delays_neither_another_channel_nor_answering(
    platforms: Platforms,
) -> None:
    platforms.messenger.delay_s = 4.0  # every Graph API call hangs 4 s
    slow = await queued_reply(platforms.sm, "messenger", "Trả lời chậm")
    slow_2 = await queued_reply(platforms.sm, "messenger", "Trả lời chậm 2")
    fast = await queued_reply(platforms.sm, "telegram", "Trả lời nhanh")
    question = await web_question(platforms.sm)
    tasks: set[asyncio.Task[None]] = set()
    started = time.monotonic()
    await platforms.worker.step(tasks)  # claims what it can, waits for no platform
    await asyncio.gather(*tasks)  # the web question answered meanwhile
    for _ in range(100):
        if (await reply_row(platforms.sm, fast))[0] == "sent":
            break
        await asyncio.sleep(0.05)
    elapsed = time.monotonic() - started
    assert (await reply_row(platforms.sm, fast))[0] == "sent"
    assert (await reply_row(platforms.sm, question))[0] == "answered"
    # Messenger's one sender (send_concurrency=1) hangs on the first reply; the second waits
    # in the queue, unclaimed.
    assert (await reply_row(platforms.sm, slow))[0] == "sending"
    assert (await reply_row(platforms.sm, slow_2))[:2] == ("queued", 0)
    assert elapsed < 4.0
    assert [c.body["text"] for c in platforms.telegram.calls_to("sendMessage")] == ["Trả lời nhanh"]
    await platforms.worker.drain()
    assert (await reply_row(platforms.sm, slow))[0] == "sent"
    assert (await reply_row(platforms.sm, slow_2))[0] == "sent"
    assert len(platforms.messenger.messages) == 2


async def web_question(sm: async_sessionmaker[AsyncSession]) -> int:
    async with sm.begin() as session:
        recorded = await record_inbound(
            session,
            InboundMessage(
                channel="web",
                event_id=uuid.uuid4().hex,
                external_user_id=f"test-dlv-{uuid.uuid4().hex[:8]}",
                kind="text",
                text="Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?",
            ),
        )
    assert recorded.message_id is not None
    return recorded.message_id
