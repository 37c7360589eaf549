"""Telegram long polling into the real database: each update stored once, the offset advanced."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.channels.telegram_polling import poll_into_store
from bot.db.models import Contact, Conversation, Message, MessageStatus
from tests.adapters.telegram._support import (
    message_update,
    wait_for,
)
from tests.fakes.telegram_api import FakeTelegramApi

# A whole Sticker (PTB's types need its required fields).
STICKER = {
    "file_id": "s",
    "file_unique_id": "s",
    "type": "regular",
    "width": 512,
    "height": 512,
    "is_animated": False,
    "is_video": False,
}


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def poll_until(
    telegram_api: FakeTelegramApi,
    http: aiohttp.ClientSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    offset: int,
) -> None:
    """Poll into the store until the fake has been asked for updates from ``offset`` on."""
    stop = asyncio.Event()
    task = asyncio.create_task(
        poll_into_store(telegram_api.settings(), sessionmaker, http, stop=stop, timeout=1)
    )
    try:
        await wait_for(lambda: offset in telegram_api.offsets or task.done())
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)


async def test_poll_stores_updates_once_and_advances_the_offset(
    telegram_api: FakeTelegramApi,
    http: aiohttp.ClientSession,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    telegram_api.push_update(message_update(501, text="Học phí bao nhiêu?"))
    telegram_api.push_update(message_update(502, sticker=STICKER))
    await poll_until(telegram_api, http, sessionmaker, 503)
    # Telegram re-sends what was not confirmed (here: across a restart); new updates come.
    telegram_api.push_update(message_update(502, sticker=STICKER))
    telegram_api.push_update(message_update(503, text="/start"))
    await poll_until(telegram_api, http, sessionmaker, 504)

    assert telegram_api.offsets[0] is None
    assert telegram_api.offsets.index(503) < telegram_api.offsets.index(504)
    async with sessionmaker() as session:
        rows = (
            await session.execute(
                select(Message.event_id, Message.kind, Message.text, Message.status)
                .where(Message.channel == "telegram")
                .order_by(Message.event_id)
            )
        ).all()
        contact = await session.scalar(
            select(Contact)
            .join(Conversation, Conversation.contact_id == Contact.id)
            .where(Contact.channel == "telegram", Contact.external_id == "111222333")
        )
    assert [tuple(r) for r in rows] == [
        ("501", "text", "Học phí bao nhiêu?", MessageStatus.received),
        ("502", "unsupported", "", MessageStatus.received),
        ("503", "command", "/start", MessageStatus.received),
    ]
    assert contact is not None
    assert (contact.name, contact.locale) == ("Lan Nguyễn", "vi")


async def test_an_update_the_database_refuses_is_quarantined_and_polling_goes_on(
    telegram_api: FakeTelegramApi,
    http: aiohttp.ClientSession,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    """A NUL is removed and the question stored; a NaN (JSONB refuses it) is kept in quarantine;
    the offset moves past both, so neither is fetched again forever."""
    telegram_api.push_update(message_update(601, text="Học\x00 phí?"))
    telegram_api.push_update(message_update(602, text="Điểm chuẩn?", weight=float("nan")))
    telegram_api.push_update(message_update(603, text="Mã trường?"))
    await poll_until(telegram_api, http, sessionmaker, 604)
    async with sessionmaker() as session:
        rows = (
            await session.execute(
                select(Message.event_id, Message.text)
                .where(Message.channel == "telegram", Message.event_id.in_(["601", "602", "603"]))
                .order_by(Message.event_id)
            )
        ).all()
        kept = await session.scalar(
            text(
                "SELECT count(*) FROM quarantined_events "
                "WHERE channel = 'telegram' AND raw_body LIKE '%Điểm chuẩn%'"
            )
        )
    assert [tuple(r) for r in rows] == [("601", "Học phí?"), ("603", "Mã trường?")]
    assert kept == 1
    assert telegram_api.offsets.count(604) >= 1
