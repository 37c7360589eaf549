"""Calling Telegram's Bot API: a ``telegram.Bot`` pointed at ``settings.api_base``, and
python-telegram-bot's errors as ``SendError``.

Calls go through PTB's HTTPX client, not the process's aiohttp session: one client per adapter,
closed with ``aclose``. The token is part of every URL, so no URL and no unredacted error text
reaches an exception or a log line (httpx logs each request's URL: its records are redacted too).

Flood control (HTTP 429 with ``parameters.retry_after``) is read here, from the body, and raised
as ``FloodControl``: PTB's own ``RetryAfter`` reads its duration in its constructor, which warns
(``PTBDeprecationWarning``) unless the environment variable ``PTB_TIMEDELTA`` is set, and PTB
offers no other switch (``telegram._utils.datetime.get_timedelta_value`` reads ``os.getenv`` at
each use). So tuvan never needs ``RetryAfter`` and never writes the environment.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

from telegram import Bot
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Conflict,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
from telegram.request import HTTPXRequest

from adapters.payloads import is_json_int
from bot.core.errors import ConfigError, SendError
from bot.core.settings import TelegramSettings

T = TypeVar("T")

# A bot token in a URL: ".../bot123456:AA-b_c/sendMessage".
_TOKEN_IN_URL = re.compile(r"/bot\d+:[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class _Failure:
    """What Telegram answered to a failed call: PTB's exceptions keep neither the HTTP status
    nor the description as sent ("Bad Request: chat not found" becomes "Chat not found")."""

    status: int
    description: str | None
    retry_after: float | None


# Set by ``_Request`` in the calling task's context (PTB awaits the request in that task).
_last_failure: contextvars.ContextVar[_Failure | None] = contextvars.ContextVar(
    "telegram_last_failure", default=None
)


class FloodControl(TelegramError):
    """Telegram asked us to wait (``parameters.retry_after``): raised in place of PTB's
    ``RetryAfter`` (see the module's docstring)."""


class _Request(HTTPXRequest):
    async def do_request(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        status, payload = await super().do_request(*args, **kwargs)
        if not 200 <= status <= 299:
            failure = _failure(status, payload)
            _last_failure.set(failure)
            if failure.retry_after is not None:
                # PTB passes a TelegramError raised here on as it is.
                raise FloodControl(failure.description or "Flood control exceeded")
        return status, payload


def _failure(status: int, payload: bytes) -> _Failure:
    try:
        body = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return _Failure(status, None, None)
    if not isinstance(body, dict):
        return _Failure(status, None, None)
    code = body.get("error_code")
    description = body.get("description")
    parameters = body.get("parameters")
    retry_after = parameters.get("retry_after") if isinstance(parameters, dict) else None
    return _Failure(
        code if is_json_int(code) else status,
        description if isinstance(description, str) and description else None,
        float(retry_after) if isinstance(retry_after, int | float) else None,
    )


class _Bot(Bot):
    async def get_update_dicts(
        self,
        offset: int | None,
        timeout: int,  # noqa: ASYNC109 (getUpdates' own parameter)
        read_timeout: float,
    ) -> Any:
        """getUpdates' result as Telegram sent it. ``Bot.get_updates`` turns the batch into
        Update objects, which loses the JSON as received and fails the whole batch on one update
        it cannot read (``do_api_request("getUpdates")`` warns to use ``get_updates``)."""
        return await self._post(
            "getUpdates", {"offset": offset, "timeout": timeout}, read_timeout=read_timeout
        )


class BotApiClient:
    """A ``telegram.Bot`` pointed at ``settings.api_base``, and PTB's errors as ``SendError``."""

    def __init__(self, settings: TelegramSettings) -> None:
        if settings.token is None:
            raise ConfigError("no Telegram bot token: set TUVAN_TELEGRAM__TOKEN")
        self.token = settings.token.get_secret_value()
        base = settings.api_base.rstrip("/")
        # Sends wait up to 30 s for an answer (PTB's default is 5 s); getUpdates adds its own.
        self._request = _Request(read_timeout=30.0)
        self.bot = _Bot(
            self.token,
            base_url=f"{base}/bot",
            base_file_url=f"{base}/file/bot",
            request=self._request,
            get_updates_request=self._request,
        )
        _guard_httpx_log()

    async def aclose(self) -> None:
        # Bot.shutdown only closes what Bot.initialize opened, and initialize is not called (it
        # would call getMe first, and names the token in its error): close the client as well.
        await self.bot.shutdown()
        await self._request.shutdown()

    async def call(self, method: str, work: Awaitable[T]) -> T:
        """The result of ``work`` (a call of ``self.bot``), or ``SendError``."""
        _last_failure.set(None)
        try:
            return await work
        except TelegramError as exc:
            raise _send_error(method, exc, _last_failure.get(), self.token) from None
        finally:
            _last_failure.set(None)


@asynccontextmanager
async def open_client(settings: TelegramSettings) -> AsyncIterator[BotApiClient]:
    """A client for the block, closed after it."""
    client = BotApiClient(settings)
    try:
        yield client
    finally:
        await client.aclose()


def _send_error(method: str, exc: TelegramError, failure: _Failure | None, token: str) -> SendError:
    """PTB's exception as a ``SendError``: retryable for 429 (``FloodControl``), 5xx and the
    network (``NetworkError``, ``TimedOut``); not for 400, 401/404, 403 and 409. Not chained:
    httpx's text for some errors is the URL, and the URL holds the token."""
    what = f"telegram {method}"
    status = failure.status if failure is not None else None
    description = _redact(
        failure.description if failure is not None and failure.description else exc.message,
        token,
    )
    retryable: bool
    retry_after: float | None = None
    if isinstance(exc, FloodControl | RetryAfter):
        status, retryable = status or 429, True
        retry_after = failure.retry_after if failure is not None else None
    elif isinstance(exc, Forbidden):
        status, retryable = status or 403, False
    elif isinstance(exc, InvalidToken):
        status, retryable = status or 401, False
    elif isinstance(exc, BadRequest | ChatMigrated):
        status, retryable = status or 400, False
    elif isinstance(exc, Conflict):
        status, retryable = status or 409, False
    elif isinstance(exc, TimedOut):
        retryable = True
    elif isinstance(exc, NetworkError):  # PTB's error for 5xx and for a failed connection
        retryable = status is None or status == 429 or status >= 500
    else:  # e.g. a body that is not JSON
        retryable = status is not None and (status == 429 or status >= 500)
    if status is None:
        message = f"{what}: {type(exc).__name__}: {description}"
    else:
        message = f"{what}: HTTP {status}: {description}"
    return SendError(
        message[:500],
        retryable=retryable,
        retry_after=retry_after,
        status=status,
        code=str(status) if status is not None else None,
    )


def _redact(text: str, token: str) -> str:
    return text.replace(token, "<token>").replace(quote(token), "<token>")


class _RedactTokens(logging.Filter):
    """httpx logs every request's URL at INFO: keep the bot token out of those records."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "/bot" in message:
            record.msg, record.args = _TOKEN_IN_URL.sub("/bot<token>", message), ()
        return True


def _guard_httpx_log() -> None:
    logger = logging.getLogger("httpx")
    if not any(isinstance(f, _RedactTokens) for f in logger.filters):
        logger.addFilter(_RedactTokens())
