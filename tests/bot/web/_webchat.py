"""The web chat's test helpers: the request body, the server-sent events, settings changed as a
test needs them (shared by the web chat's test modules; a test module imports no other)."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.core.settings import Settings
from bot.db.models import Message

FAQ_QUESTION = "Chỉ tiêu ngành Khoa học Máy tính năm 2026 là bao nhiêu?"  # shut-faq02


@dataclass(frozen=True)
class Event:
    name: str
    data: Any


def parse_sse(text: str) -> list[Event]:
    events = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        events.append(Event(fields["event"], json.loads(fields["data"])))
    return events


def chat_body(text: str, *, visitor: str = "visitor-1", message_id: str | None = None) -> Any:
    return {"visitor_id": visitor, "message_id": message_id or str(uuid.uuid4()), "text": text}


def with_limits(settings: Settings, **changes: Any) -> Settings:
    return settings.model_copy(update={"limits": settings.limits.model_copy(update=changes)})


# Limits no test of answering reaches (the limits have tests of their own).
ROOMY = {
    "chat_ip_per_minute": 6000.0,
    "chat_ip_burst": 1000,
    "chat_visitor_per_minute": 6000.0,
    "chat_visitor_burst": 1000,
    "chat_network_per_minute": 6000.0,
    "chat_network_burst": 1000,
    "reads_ip_per_minute": 6000.0,
    "reads_ip_burst": 1000,
    "reads_network_per_minute": 6000.0,
    "reads_network_burst": 1000,
    "answers_in_flight": 64,
}


def limited(settings: Settings, **changes: Any) -> Settings:
    """``settings`` with roomy limits but ``changes``: a test of one limit meets only that one."""
    return with_limits(settings, **{**ROOMY, **changes})


async def stored_ids(sessionmaker: async_sessionmaker[AsyncSession]) -> set[str | None]:
    """The message ids of the web chat's stored questions."""
    async with sessionmaker() as session:
        rows = await session.scalars(select(Message.event_id).where(Message.channel == "web"))
        return set(rows.all())
