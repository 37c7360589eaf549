"""The webhook tests' stack: tuvan's app over real HTTP on 127.0.0.1, the real worker, fake
platform APIs. The database is the session's PostgreSQL with real commits (the queues are about
transactions); the stack deletes its contacts and quarantined events after each test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from adapters.messenger import MessengerAdapter
from adapters.telegram import TelegramAdapter
from adapters.zalo import ZaloAdapter
from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.channels.zalo_tokens import DbTokenProvider
from bot.core.settings import MessengerSettings, Settings, ZaloSettings
from bot.keys import RUNTIME
from bot.runtime import Runtime
from bot.web.app import create_app
from bot.web.webchat.handlers import WebChat, setup_webchat
from bot.worker.loop import Worker
from tests.bot.web._support import (
    APP_SECRET,
    SECRET,
    ZALO_APP,
    ZALO_KEY,
    Client,
    ServeWebChat,
    Stack,
)
from tests.bot.web._webchat import limited
from tests.fakes.messenger_api import start_messenger_api
from tests.fakes.telegram_api import start_telegram_api
from tests.fakes.zalo_api import start_zalo_api


@pytest.fixture
async def stack(
    engine: AsyncEngine, parts: AnswererParts, settings: Settings
) -> AsyncIterator[Stack]:
    telegram = await start_telegram_api()
    messenger = await start_messenger_api(page_token="page-token")
    zalo = await start_zalo_api()
    settings = settings.model_copy(
        update={
            "telegram": telegram.settings(secret_token=SECRET),
            "messenger": MessengerSettings(
                page_token=SecretStr("page-token"),
                app_secret=SecretStr(APP_SECRET),
                verify_token=SecretStr("verify-me"),
                app_id="111",
                api_base=messenger.base_url,
            ),
            "zalo": ZaloSettings(
                app_id=ZALO_APP,
                app_secret=SecretStr("app-secret"),
                oa_secret_key=SecretStr(ZALO_KEY),
                access_token=SecretStr("at-0"),
                refresh_token=SecretStr("rt-0"),
                api_base=zalo.base_url,
                oauth_base=zalo.base_url,
            ),
            "web": settings.web.model_copy(update={"enabled": False}),
            "worker": settings.worker.model_copy(update={"backoff_base_s": 0.01}),
        }
    )
    sm = async_sessionmaker(engine, expire_on_commit=False)
    test_parts = replace(parts, settings=settings)
    answerer = Answerer(test_parts, sm)
    runtime = Runtime(settings, engine, sm, test_parts, answerer)
    adapters = {
        "telegram": TelegramAdapter(settings.telegram),
        "messenger": MessengerAdapter(settings.messenger),
    }
    async with aiohttp.ClientSession() as http:
        tokens = DbTokenProvider(sm, http, settings.zalo)
        adapters["zalo"] = ZaloAdapter(settings.zalo, tokens)  # type: ignore[assignment]
        app: web.Application = create_app(runtime, adapters, http)
        client = TestClient(TestServer(app, host="127.0.0.1"))
        await client.start_server()
        worker = Worker(settings, sm, answerer, adapters, http)
        try:
            yield Stack(
                client, worker, telegram, messenger, zalo, sm, settings, runtime, adapters, http
            )
        finally:
            await client.close()
            await adapters["telegram"].aclose()  # type: ignore[attr-defined]
            await telegram.close()
            await messenger.close()
            await zalo.close()
            async with sm.begin() as session:
                await session.execute(text("DELETE FROM contacts WHERE external_id LIKE '9%'"))
                await session.execute(text("DELETE FROM channel_tokens WHERE channel = 'zalo'"))
                await session.execute(text("DELETE FROM quarantined_events"))


@pytest.fixture
async def serve_webchat() -> AsyncIterator[ServeWebChat]:
    """``await serve_webchat(runtime)``: the web chat's routes alone for that runtime on a real
    port of 127.0.0.1, and the WebChat behind them; every one started is closed after the test."""
    clients: list[Client] = []

    async def start(runtime: Runtime) -> tuple[Client, WebChat]:
        app = web.Application()
        app[RUNTIME] = runtime
        chat = setup_webchat(app)
        client: Client = TestClient(TestServer(app, host="127.0.0.1"))
        await client.start_server()
        clients.append(client)
        return client, chat

    yield start
    for client in clients:
        await client.close()


@pytest.fixture
def make_runtime(
    settings: Settings,
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
) -> Callable[..., Runtime]:
    """``make_runtime(**limits)``: a runtime whose limits are roomy but those given."""

    def make(**limits: Any) -> Runtime:
        return Runtime(limited(settings, **limits), engine, sessionmaker, parts, answerer)

    return make
