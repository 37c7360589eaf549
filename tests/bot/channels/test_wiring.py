"""Which channels a process runs and what each allows, asked without naming a platform."""

from __future__ import annotations

import aiohttp
from pydantic import SecretStr
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from adapters.interface import Adapter
from adapters.messenger import MessengerAdapter
from bot.channels.wiring import build_adapters, capabilities_of
from bot.core.settings import MessengerSettings, Settings


def test_the_web_chat_reads_its_replies_from_the_store() -> None:
    capabilities = capabilities_of({}, "web")
    assert capabilities is not None
    assert not capabilities.delivers
    assert capabilities.window_hours is None


def test_a_channel_without_an_adapter_has_no_capabilities() -> None:
    assert capabilities_of({}, "telegram") is None


def test_capabilities_are_asked_of_the_adapter() -> None:
    settings = MessengerSettings(page_token=SecretStr("t"), app_secret=SecretStr("s"))
    adapters: dict[str, Adapter] = {"messenger": MessengerAdapter(settings)}
    capabilities = capabilities_of(adapters, "messenger")
    assert capabilities is not None
    assert capabilities.delivers
    assert capabilities.window_hours == settings.window_hours
    assert capabilities.staff_window_hours == settings.human_agent_hours
    assert capabilities.quick_replies == settings.quick_replies


async def test_no_channel_is_set_up_without_its_keys(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with aiohttp.ClientSession() as http:
        assert build_adapters(settings, sessionmaker, http) == {}
