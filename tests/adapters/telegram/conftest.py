"""Fixtures of the Telegram adapter's tests: the fake Bot API."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.telegram_api import FakeTelegramApi, start_telegram_api


@pytest.fixture
async def api() -> AsyncIterator[FakeTelegramApi]:
    api = await start_telegram_api()
    try:
        yield api
    finally:
        await api.close()
