"""The Zalo OA token pair, kept in ``channel_tokens`` and refreshed under a row lock.

Zalo's refresh token is single-use: two workers (or processes) refreshing at once would spend
it twice, the second refresh would fail, and the channel would die when the access token
expires. So every refresh takes ``SELECT ... FOR UPDATE`` on the row, re-reads it, refreshes
only if it still holds the token the caller found stale (or is still due), and stores both new
tokens in that same transaction. This is the one transaction that stays open across a platform
call, on purpose: the lock must cover the call. ``refresh_tokens`` bounds it with a timeout.

Tokens are never logged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

import aiohttp
from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from adapters.zalo.tokens import refresh_tokens
from bot.core.clock import utcnow
from bot.core.errors import SendError
from bot.core.settings import ZaloSettings
from bot.db.models import ChannelToken

log = logging.getLogger(__name__)

CHANNEL: Final = "zalo"


@dataclass(frozen=True)
class _Stored:
    access_token: str
    refresh_token: str
    expires_at: datetime


class DbTokenProvider:
    """``adapters.zalo.tokens.TokenProvider`` on the ``channel_tokens`` row of channel ``zalo``.

    The row is seeded from ``settings.access_token``/``refresh_token`` when absent, with
    ``expires_at = now``: the age of a pasted token is unknown, so the first ``refresh_if_due``
    refreshes at once, which gives a known expiry and shows at start-up whether the refresh
    token works. Once the row exists the settings' tokens are ignored (they are spent).
    """

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        http: aiohttp.ClientSession,
        settings: ZaloSettings,
    ) -> None:
        self._sessionmaker = sessionmaker
        self._http = http
        self._settings = settings

    async def access_token(self) -> str:
        return (await self._read()).access_token

    async def expires_at(self) -> datetime:
        return (await self._read()).expires_at

    async def refresh(self, stale: str) -> str:
        """A fresh access token; refreshes only if the stored one is still ``stale``."""
        await self._ensure_seeded()
        token, _ = await self._refresh_locked(lambda row: row.access_token == stale)
        return token

    async def refresh_if_due(self) -> bool:
        """Refresh when the access token expires within ``settings.refresh_before_s``; for a
        scheduled task. True if this call refreshed."""
        await self._ensure_seeded()
        margin = timedelta(seconds=self._settings.refresh_before_s)
        _, refreshed = await self._refresh_locked(lambda row: row.expires_at - utcnow() < margin)
        return refreshed

    # -- internals --------------------------------------------------------------------------

    async def _refresh_locked(self, needed: Callable[[_Stored], bool]) -> tuple[str, bool]:
        """Under the row lock: if ``needed(row)``, refresh and store both tokens atomically."""
        spent = False
        try:
            async with self._sessionmaker() as session, session.begin():
                result = await session.execute(
                    select(
                        ChannelToken.access_token,
                        ChannelToken.refresh_token,
                        ChannelToken.expires_at,
                    )
                    .where(ChannelToken.channel == CHANNEL)
                    .with_for_update()
                )
                found = result.one()
                row = _Stored(found.access_token, found.refresh_token, found.expires_at)
                if not needed(row):
                    return row.access_token, False  # another worker refreshed meanwhile
                access, refreshed, expires_in = await refresh_tokens(
                    self._http, self._settings, row.refresh_token
                )
                spent = True
                await session.execute(
                    update(ChannelToken)
                    .where(ChannelToken.channel == CHANNEL)
                    .values(
                        access_token=access,
                        refresh_token=refreshed,
                        expires_at=utcnow() + timedelta(seconds=expires_in),
                    )
                )
        except SQLAlchemyError:
            if spent:
                log.critical(
                    "zalo: tokens were refreshed but could not be stored; the old refresh "
                    "token is spent: authorise the OA again and set new tokens"
                )
            raise
        log.info("zalo: access token refreshed and stored; it expires in %d s", expires_in)
        return access, True

    async def _read(self) -> _Stored:
        row = await self._select()
        if row is None:
            await self._ensure_seeded()
            row = await self._select()
        if row is None:  # deleted between the two statements
            raise SendError("zalo: the token row vanished", retryable=True)
        return row

    async def _select(self) -> _Stored | None:
        async with self._sessionmaker() as session:
            result = await session.execute(
                select(
                    ChannelToken.access_token, ChannelToken.refresh_token, ChannelToken.expires_at
                ).where(ChannelToken.channel == CHANNEL)
            )
            found = result.one_or_none()
        if found is None:
            return None
        return _Stored(found.access_token, found.refresh_token, found.expires_at)

    async def _ensure_seeded(self) -> None:
        """Insert the configured tokens unless a row exists (concurrent seeders: one wins)."""
        access = self._settings.access_token
        refresh = self._settings.refresh_token
        if not (access and access.get_secret_value() and refresh and refresh.get_secret_value()):
            async with self._sessionmaker() as session:
                exists = await session.scalar(
                    select(ChannelToken.channel).where(ChannelToken.channel == CHANNEL)
                )
            if exists is None:
                raise SendError(
                    "zalo: no tokens stored and none configured "
                    "(TUVAN_ZALO__ACCESS_TOKEN, TUVAN_ZALO__REFRESH_TOKEN)",
                    retryable=False,
                )
            return
        statement = (
            insert(ChannelToken)
            .values(
                channel=CHANNEL,
                access_token=access.get_secret_value(),
                refresh_token=refresh.get_secret_value(),
                expires_at=utcnow(),
            )
            .on_conflict_do_nothing(index_elements=[ChannelToken.channel])
        )
        async with self._sessionmaker() as session, session.begin():
            await session.execute(statement)
