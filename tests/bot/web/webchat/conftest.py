"""The web chat's runtime on the test's transaction (or on real ones, for overlapping requests),
with or without the fake LLM, and test servers for its app on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.settings import Settings
from bot.db.engine import make_sessionmaker
from bot.db.models import Contact, RateBucket
from bot.llm.client import LlmClient
from bot.runtime import Runtime
from tests.bot.web._webchat import ROOMY, with_limits
from tests.bot.web.webchat._support import SITE, Client, make_app, with_web
from tests.fakes.openai_stub import OpenAIStub


@pytest.fixture
def runtime(
    settings: Settings,
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
) -> Runtime:
    return Runtime(
        with_limits(with_web(settings, allowed_origins=(SITE,)), **ROOMY),
        engine,
        sessionmaker,
        parts,
        answerer,
    )


@pytest.fixture
async def committing(
    engine: AsyncEngine, demo_kb: object
) -> AsyncIterator[Callable[[Runtime], Runtime]]:
    """The runtime on real transactions, for tests where requests overlap: sessions joined into
    the test's one connection cannot run side by side. The web contacts made are deleted after."""
    sessionmaker = make_sessionmaker(engine)
    async with sessionmaker() as session:
        before = set((await session.scalars(select(Contact.id))).all())

    def on_real_transactions(runtime: Runtime) -> Runtime:
        answerer = Answerer(runtime.parts, sessionmaker)
        return replace(runtime, sessionmaker=sessionmaker, answerer=answerer)

    yield on_real_transactions
    async with sessionmaker.begin() as session:
        await session.execute(
            delete(Contact).where(Contact.channel == "web", Contact.id.not_in(before))
        )
        await session.execute(delete(RateBucket))


@pytest.fixture
async def serve() -> AsyncIterator[Callable[..., Any]]:
    """Start a test server for an app; all are closed after the test."""
    clients: list[Client] = []

    async def start(app: web.Application) -> Client:
        client: Client = TestClient(TestServer(app, host="127.0.0.1"))
        await client.start_server()
        clients.append(client)
        return client

    yield start
    for client in clients:
        await client.close()


@pytest.fixture
async def client(runtime: Runtime, serve: Callable[..., Any]) -> Client:
    started: Client = await serve(make_app(runtime))
    return started


@pytest.fixture
async def llm_runtime(
    stub: OpenAIStub,
    runtime: Runtime,
    parts: AnswererParts,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> AsyncIterator[Runtime]:
    llm_settings = parts.settings.llm.model_copy(
        update={"base_url": stub.base_url, "api_key": SecretStr("sk-test"), "model": "m"}
    )
    settings = runtime.settings.model_copy(update={"llm": llm_settings})
    client = LlmClient(llm_settings, max_retries=0)
    llm_parts = replace(parts, settings=settings, llm=client)
    try:
        yield replace(
            runtime, settings=settings, parts=llm_parts, answerer=Answerer(llm_parts, sessionmaker)
        )
    finally:
        await client.aclose()
