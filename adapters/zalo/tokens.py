"""The OA's access token: where the adapter asks for it (``TokenProvider``), and how a refresh
token is spent for a new pair (Zalo's OAuth v4).

Zalo's access token lives about 25 hours and its refresh token is single-use, so the adapter
never owns a token: bot.channels.zalo_tokens keeps them in the database, refreshed under a row
lock. Tokens never appear in exception texts or logs.
"""

from __future__ import annotations

from typing import Final, Protocol

import aiohttp

from adapters.zalo.calls import post_zalo, scrubbed
from bot.core.errors import SendError
from bot.core.settings import ZaloSettings

# The refresh runs while a database row lock is held (bot.channels.zalo_tokens): bound it.
REFRESH_TIMEOUT_S: Final = 30.0
# Zalo's usual lifetime of an access token, for a refresh answer without ``expires_in``.
DEFAULT_EXPIRES_IN_S: Final = 90_000


class TokenProvider(Protocol):
    """Where the adapter gets the OA access token."""

    async def access_token(self) -> str:
        """The current access token."""

    async def refresh(self, stale: str) -> str:
        """A fresh access token. Refreshes only if the stored token is still ``stale`` (so
        that workers that saw the same rejection refresh once); else returns the stored one."""


async def refresh_tokens(
    http: aiohttp.ClientSession, settings: ZaloSettings, refresh_token: str
) -> tuple[str, str, int]:
    """Spend ``refresh_token`` for a new pair: ``(access_token, refresh_token, expires_in_s)``.

    The refresh token is single-use: the caller must store both new tokens before anything
    else can fail, and must never send the same refresh token twice (``DbTokenProvider``
    holds a row lock around this call). A network error after Zalo accepted the request
    leaves the old refresh token spent; nothing here can tell.
    """
    if not settings.app_id or settings.app_secret is None:
        raise SendError(
            "zalo token refresh: app_id and app_secret are not configured", retryable=False
        )
    secret = settings.app_secret.get_secret_value()
    url = f"{settings.oauth_base.rstrip('/')}/v4/oa/access_token"
    form = {
        "refresh_token": refresh_token,
        "app_id": settings.app_id,
        "grant_type": "refresh_token",
    }
    data = await post_zalo(
        http,
        url,
        "zalo token refresh",
        form=form,
        headers={"secret_key": secret},
        secrets=[refresh_token, secret],
        within_s=REFRESH_TIMEOUT_S,
        retry_unreadable=False,
    )
    access, refreshed = data.get("access_token"), data.get("refresh_token")
    error = data.get("error")
    if error or data.get("error_name") or not isinstance(access, str) or not access:
        reason = " ".join(
            str(data[k])
            for k in ("error", "error_name", "error_reason", "error_description")
            if data.get(k)
        )
        raise SendError(
            scrubbed(
                f"zalo token refresh refused ({reason or 'no access token in the answer'}): "
                "the refresh token may be spent or expired; a person must authorise the OA "
                "again and set new tokens",
                [refresh_token, secret],
            )[:500],
            retryable=False,
            code=str(error) if error else None,
        )
    if not isinstance(refreshed, str) or not refreshed:
        # The old refresh token is spent now: without a new one the channel dies at expiry.
        raise SendError(
            "zalo token refresh: no refresh token in the answer; a person must authorise the "
            "OA again before the new access token expires",
            retryable=False,
        )
    return access, refreshed, _expires_in(data.get("expires_in"))


def _expires_in(value: object) -> int:
    """Zalo sends ``expires_in`` as a string of seconds."""
    try:
        seconds = int(str(value))
    except ValueError:
        return DEFAULT_EXPIRES_IN_S
    return seconds if seconds > 0 else DEFAULT_EXPIRES_IN_S
