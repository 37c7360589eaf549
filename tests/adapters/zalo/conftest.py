"""Fixtures of the Zalo adapter's tests: the fake OA API, the adapter on it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest

from adapters.zalo import ZaloAdapter
from bot.core.settings import ZaloSettings
from tests.adapters.zalo._support import (
    MemoryTokens,
    settings_for,
)
from tests.fakes.zalo_api import ZaloApiFake, start_zalo_api


@pytest.fixture
async def fake() -> AsyncIterator[ZaloApiFake]:
    server = await start_zalo_api()
    try:
        yield server
    finally:
        await server.close()


@pytest.fixture
def zalo_settings(fake: ZaloApiFake) -> ZaloSettings:
    return settings_for(fake.base_url)


@pytest.fixture
def tokens(http: aiohttp.ClientSession, zalo_settings: ZaloSettings) -> MemoryTokens:
    return MemoryTokens(http, zalo_settings)


@pytest.fixture
def adapter(zalo_settings: ZaloSettings, tokens: MemoryTokens) -> ZaloAdapter:
    return ZaloAdapter(zalo_settings, tokens)
