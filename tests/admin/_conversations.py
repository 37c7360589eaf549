"""What the Conversations tests share: the real worker with a fake Telegram Bot API, the
messages a student sends (``ask``) and what came of them (``thread``, ``sent_texts``,
``audit_actions``).

The worker's queues are about transactions between sessions, so these tests commit for real
(``sessionmaker`` is overridden) and delete what each test added afterwards
(``forget_what_tests_commit``). A test module takes the fixtures by importing them: pytest finds
a fixture by its name in the module.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import replace

import aiohttp
import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from adapters.telegram import TelegramAdapter
from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.conversations.store import record_inbound
from bot.core.messages import InboundMessage
from bot.core.settings import Settings
from bot.db.models import AuditEntry, Message
from bot.worker.loop import Worker
from tests.fakes.telegram_api import FakeTelegramApi, start_telegram_api

FAQ_QUESTION = "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?"
STAFF_TEXT = "Chào em, cô ở phòng tuyển sinh trả lời em nhé: mã trường là SHT."
SCRIPT = "<script>alert('x')</script>"


@pytest.fixture(autouse=True)
async def forget_what_tests_commit(engine: AsyncEngine) -> AsyncIterator[None]:
    """Rows above the marks taken before the test are the test's own: delete them after."""
    queries = {
        "contacts": "SELECT coalesce(max(id), 0) FROM contacts",
        "staff": "SELECT coalesce(max(id), 0) FROM staff_users",
        "audit": "SELECT coalesce(max(id), 0) FROM audit_log",
        "logins": "SELECT coalesce(max(id), 0) FROM login_attempts",
    }
    async with engine.connect() as conn:
        marks = {k: int(await conn.scalar(text(q)) or 0) for k, q in queries.items()}
    yield
    async with engine.begin() as conn:
        await conn.execute(text("DELETE FROM contacts WHERE id > :m"), {"m": marks["contacts"]})
        await conn.execute(text("DELETE FROM staff_users WHERE id > :m"), {"m": marks["staff"]})
        await conn.execute(text("DELETE FROM audit_log WHERE id > :m"), {"m": marks["audit"]})
        await conn.execute(text("DELETE FROM login_attempts WHERE id > :m"), {"m": marks["logins"]})


@pytest.fixture
def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Real transactions: the worker and the admin are separate sessions, as in production."""
    return async_sessionmaker(engine, expire_on_commit=False)


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegramApi]:
    api = await start_telegram_api()
    try:
        yield api
    finally:
        await api.close()


@pytest.fixture
def admin_settings(settings: Settings, telegram: FakeTelegramApi) -> Settings:
    return settings.model_copy(update={"telegram": telegram.settings()})


@pytest.fixture
async def worker(
    admin_settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
) -> AsyncIterator[Worker]:
    test_parts = replace(parts, settings=admin_settings)
    adapter = TelegramAdapter(admin_settings.telegram)
    async with aiohttp.ClientSession() as http:
        try:
            yield Worker(
                admin_settings,
                sessionmaker,
                Answerer(test_parts, sessionmaker),
                {"telegram": adapter},
                http,
            )
        finally:
            await adapter.aclose()


def chat_id() -> str:
    return str(900_000_000 + uuid.uuid4().int % 99_999_999)


async def ask(
    sm: async_sessionmaker[AsyncSession],
    user: str,
    question: str,
    *,
    channel: str = "telegram",
    user_name: str | None = "Lan",
) -> int:
    """A student's message arrives (as the webhook would store it); its conversation id.
    ``user_name`` None: a contact whose platform gives no name (the web chat's visitors)."""
    async with sm.begin() as session:
        recorded = await record_inbound(
            session,
            InboundMessage(
                channel=channel,  # type: ignore[arg-type]
                event_id=f"evt-{uuid.uuid4()}",
                external_user_id=user,
                kind="text",
                text=question,
                user_name=user_name,
            ),
        )
    return recorded.conversation_id


async def thread(sm: async_sessionmaker[AsyncSession], conversation_id: int) -> list[Message]:
    async with sm() as session:
        rows = await session.scalars(
            select(Message).where(Message.conversation_id == conversation_id).order_by(Message.id)
        )
        return list(rows.all())


def sent_texts(api: FakeTelegramApi, chat: str) -> list[str]:
    return [
        str(c.body["text"]) for c in api.calls_to("sendMessage") if str(c.body["chat_id"]) == chat
    ]


async def audit_actions(sm: async_sessionmaker[AsyncSession], conversation_id: int) -> list[str]:
    async with sm() as session:
        rows = await session.scalars(
            select(AuditEntry.action)
            .where(AuditEntry.entity == "conversation", AuditEntry.entity_id == conversation_id)
            .order_by(AuditEntry.id)
        )
        return list(rows.all())
