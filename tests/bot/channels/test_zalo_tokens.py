"""The Zalo token pair in ``channel_tokens``: seeding, atomic refresh, one refresh at a time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import pytest
from pydantic import SecretStr
from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from adapters.zalo import ZaloAdapter
from bot.channels.zalo_tokens import DbTokenProvider
from bot.core.errors import SendError
from bot.core.messages import OutboundReply
from bot.core.settings import ZaloSettings
from bot.db.models import ChannelToken
from tests.fakes.zalo_api import ZaloApiFake, start_zalo_api


@pytest.fixture
async def fake() -> AsyncIterator[ZaloApiFake]:
    server = await start_zalo_api(access_token="at-0", refresh_token="rt-0")
    try:
        yield server
    finally:
        await server.close()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def settings_for(fake: ZaloApiFake, **overrides: Any) -> ZaloSettings:
    values: dict[str, Any] = {
        "app_id": "3482178216594085616",
        "app_secret": SecretStr("app-secret"),
        "oa_secret_key": SecretStr("oa-secret-key"),
        "access_token": SecretStr("at-0"),
        "refresh_token": SecretStr("rt-0"),
        "api_base": fake.base_url,
        "oauth_base": fake.base_url,
        **overrides,
    }
    return ZaloSettings(**values)


@pytest.fixture
def provider(
    sessionmaker: async_sessionmaker[AsyncSession],
    http: aiohttp.ClientSession,
    fake: ZaloApiFake,
) -> DbTokenProvider:
    return DbTokenProvider(sessionmaker, http, settings_for(fake))


async def stored(sessionmaker: async_sessionmaker[AsyncSession]) -> ChannelToken | None:
    async with sessionmaker() as session:
        row: ChannelToken | None = await session.scalar(
            select(ChannelToken).where(ChannelToken.channel == "zalo")
        )
        return row


async def test_first_use_seeds_the_row_from_settings_due_at_once(
    provider: DbTokenProvider, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    before = datetime.now(UTC)
    assert await provider.access_token() == "at-0"
    row = await stored(sessionmaker)
    assert row is not None
    assert (row.access_token, row.refresh_token) == ("at-0", "rt-0")
    assert before - timedelta(seconds=5) <= row.expires_at <= datetime.now(UTC)


async def test_stored_tokens_win_over_configured_ones(
    provider: DbTokenProvider, session: AsyncSession, fake: ZaloApiFake
) -> None:
    session.add(
        ChannelToken(
            channel="zalo",
            access_token="at-db",
            refresh_token="rt-db",
            expires_at=datetime.now(UTC) + timedelta(hours=20),
        )
    )
    await session.commit()
    assert await provider.access_token() == "at-db"
    assert fake.oauth_calls == 0


async def test_without_stored_or_configured_tokens_sending_fails_for_good(
    sessionmaker: async_sessionmaker[AsyncSession],
    http: aiohttp.ClientSession,
    fake: ZaloApiFake,
) -> None:
    bare = DbTokenProvider(
        sessionmaker, http, settings_for(fake, access_token=None, refresh_token=None)
    )
    with pytest.raises(SendError) as caught:
        await bare.access_token()
    assert caught.value.retryable is False


async def test_refresh_stores_both_new_tokens_and_the_expiry(
    provider: DbTokenProvider, sessionmaker: async_sessionmaker[AsyncSession], fake: ZaloApiFake
) -> None:
    assert await provider.refresh("at-0") == "at-1"
    row = await stored(sessionmaker)
    assert row is not None
    assert (row.access_token, row.refresh_token) == ("at-1", "rt-1")
    expected = datetime.now(UTC) + timedelta(seconds=90000)
    assert abs((row.expires_at - expected).total_seconds()) < 60
    assert [r.form["refresh_token"] for r in fake.refreshes] == ["rt-0"]
    assert await provider.access_token() == "at-1"


async def test_refresh_of_a_token_already_replaced_returns_the_stored_one(
    provider: DbTokenProvider, fake: ZaloApiFake
) -> None:
    assert await provider.refresh("at-0") == "at-1"
    assert await provider.refresh("at-0") == "at-1"
    assert fake.oauth_calls == 1


async def test_refused_refresh_keeps_the_old_pair(
    provider: DbTokenProvider, sessionmaker: async_sessionmaker[AsyncSession], fake: ZaloApiFake
) -> None:
    await provider.access_token()
    fake.script_oauth({"error": -14014, "error_name": "Invalid refresh token"})
    with pytest.raises(SendError) as caught:
        await provider.refresh("at-0")
    assert caught.value.retryable is False
    row = await stored(sessionmaker)
    assert row is not None
    assert (row.access_token, row.refresh_token) == ("at-0", "rt-0")


async def test_refresh_if_due_refreshes_a_token_near_expiry_only(
    provider: DbTokenProvider, session: AsyncSession, fake: ZaloApiFake
) -> None:
    assert await provider.refresh_if_due() is True  # seeded: due at once
    assert fake.oauth_calls == 1
    assert await provider.refresh_if_due() is False  # 25 h left
    assert fake.oauth_calls == 1

    await session.execute(
        update(ChannelToken).values(
            expires_at=datetime.now(UTC) + timedelta(seconds=3000)  # < refresh_before_s
        )
    )
    await session.commit()
    assert await provider.refresh_if_due() is True
    assert await provider.access_token() == "at-2"


async def test_adapter_recovers_from_an_expired_token_through_the_database(
    provider: DbTokenProvider, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    await provider.access_token()  # seed
    fake.access_token = "at-elsewhere"  # "at-0" expired at Zalo
    adapter = ZaloAdapter(settings_for(fake), provider)
    result = await adapter.send(http, OutboundReply(external_user_id="42", text="Xin chào"))
    assert [s.headers["access_token"] for s in fake.sends] == ["at-0", "at-1"]
    assert result.external_ids == ("zmsg2",)
    assert await provider.access_token() == "at-1"


async def test_concurrent_refreshes_spend_the_refresh_token_once(
    engine: AsyncEngine, http: aiohttp.ClientSession, fake: ZaloApiFake
) -> None:
    # Two providers on real, separately committing connections: two workers.
    committing = async_sessionmaker(engine, expire_on_commit=False)
    settings = settings_for(fake)
    one = DbTokenProvider(committing, http, settings)
    two = DbTokenProvider(committing, http, settings)
    fake.oauth_delay_s = 0.3  # long enough for the second to reach the lock
    try:
        await one.access_token()  # seed once, so that both race on the refresh itself
        tokens = await asyncio.gather(one.refresh("at-0"), two.refresh("at-0"))
        assert list(tokens) == ["at-1", "at-1"]
        assert fake.oauth_calls == 1

        due = await asyncio.gather(*(p.refresh_if_due() for p in (one, two, one)))
        assert due == [False, False, False]  # at-1 has 25 h left

        async with committing() as session:
            await session.execute(update(ChannelToken).values(expires_at=datetime.now(UTC)))
            await session.commit()
        due = await asyncio.gather(*(p.refresh_if_due() for p in (one, two, one)))
        assert sorted(due) == [False, False, True]
        assert fake.oauth_calls == 2
        assert [r.form["refresh_token"] for r in fake.refreshes] == ["rt-0", "rt-1"]
        assert await two.access_token() == "at-2"
    finally:
        async with committing() as session:
            await session.execute(delete(ChannelToken).where(ChannelToken.channel == "zalo"))
            await session.commit()
