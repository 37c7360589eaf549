"""Telegram's webhook: checking the secret it echoes, and setting or deleting the webhook.

``X-Telegram-Bot-Api-Secret-Token`` carries the secret given to ``setWebhook``; the Bot API signs
nothing else, so a webhook without a secret would take forged updates.
"""

from __future__ import annotations

import re

import aiohttp

from adapters.telegram.client import open_client
from adapters.webhook_auth import secrets_equal
from bot.core.errors import ConfigError, WebhookAuthError
from bot.core.messages import RawRequest
from bot.core.settings import TelegramSettings

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 (a header name)
# setWebhook: secret_token is "1-256 characters. Only characters A-Z, a-z, 0-9, _ and - are allowed"
_SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")
_FORGEABLE = (
    "the Telegram webhook has no secret configured, so anyone could forge updates: set "
    "TUVAN_TELEGRAM__SECRET_TOKEN and run `tuvan telegram set-webhook URL`"
)


def verify_secret(settings: TelegramSettings, raw: RawRequest) -> None:
    """``WebhookAuthError`` unless the request carries our secret (none configured: never)."""
    if settings.secret_token is None:
        raise WebhookAuthError(_FORGEABLE)
    given = raw.headers.get(SECRET_HEADER)
    if given is None:
        raise WebhookAuthError(f"missing {SECRET_HEADER} header")
    if not secrets_equal(given, settings.secret_token.get_secret_value()):
        raise WebhookAuthError(f"wrong {SECRET_HEADER}")


def check_secret_token(secret: str) -> None:
    if not _SECRET_TOKEN.fullmatch(secret):
        raise ConfigError(
            "TUVAN_TELEGRAM__SECRET_TOKEN must be 1-256 characters of A-Z, a-z, 0-9, _ and - "
            "(Telegram's rule for setWebhook's secret_token)"
        )


async def set_webhook(
    http: aiohttp.ClientSession, settings: TelegramSettings, url: str, *, drop_pending: bool = False
) -> None:
    """Have Telegram post updates to ``url``, with our secret in every request's header.
    (``http`` is not used: the call goes through a ``telegram.Bot`` of its own.)"""
    if settings.secret_token is None:
        raise ConfigError(
            "no webhook secret: set TUVAN_TELEGRAM__SECRET_TOKEN (1-256 characters of A-Z, a-z, "
            "0-9, _ and -) so that tuvan can tell Telegram's requests from forged ones"
        )
    secret = settings.secret_token.get_secret_value()
    check_secret_token(secret)
    async with open_client(settings) as client:
        await client.call(
            "setWebhook",
            client.bot.set_webhook(url, secret_token=secret, drop_pending_updates=drop_pending),
        )


async def delete_webhook(
    http: aiohttp.ClientSession, settings: TelegramSettings, *, drop_pending: bool = False
) -> None:
    """Stop Telegram's posts (``http`` is not used, as in ``set_webhook``)."""
    async with open_client(settings) as client:
        await client.call(
            "deleteWebhook", client.bot.delete_webhook(drop_pending_updates=drop_pending)
        )
