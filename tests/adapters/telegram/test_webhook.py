"""Telegram's webhook: the secret it echoes, and setting or deleting the webhook."""

from __future__ import annotations

import aiohttp
import pytest
from pydantic import SecretStr

from adapters.telegram import TelegramAdapter
from adapters.telegram.webhook import SECRET_HEADER, delete_webhook, set_webhook
from bot.core.errors import ConfigError, WebhookAuthError
from bot.core.settings import TelegramSettings
from tests.adapters.telegram._support import (
    SECRET,
    raw_request,
)
from tests.fakes.telegram_api import FakeTelegramApi


def test_right_secret_is_accepted_whatever_the_header_case() -> None:
    adapter = TelegramAdapter(TelegramSettings(secret_token=SecretStr(SECRET)))
    adapter.verify(raw_request({}, {SECRET_HEADER: SECRET}))
    adapter.verify(raw_request({}, {SECRET_HEADER.lower(): SECRET}))


@pytest.mark.parametrize(
    "headers",
    [{SECRET_HEADER: "wrong"}, {SECRET_HEADER: ""}, {SECRET_HEADER: SECRET + "x"}, {}],
)
def test_wrong_or_missing_secret_is_rejected(headers: dict[str, str]) -> None:
    adapter = TelegramAdapter(TelegramSettings(secret_token=SecretStr(SECRET)))
    with pytest.raises(WebhookAuthError):
        adapter.verify(raw_request({}, headers))


def test_without_a_configured_secret_every_request_is_rejected() -> None:
    adapter = TelegramAdapter(TelegramSettings(token=SecretStr("1:x")))
    with pytest.raises(WebhookAuthError, match="TUVAN_TELEGRAM__SECRET_TOKEN"):
        adapter.verify(raw_request({}, {SECRET_HEADER: ""}))


async def test_set_webhook_sends_url_and_secret(
    api: FakeTelegramApi, http: aiohttp.ClientSession
) -> None:
    url = "https://tuyensinh.example.vn/webhooks/telegram"
    await set_webhook(http, api.settings(secret_token=SECRET), url, drop_pending=True)
    (call,) = api.calls_to("setWebhook")
    assert call.body == {"url": url, "secret_token": SECRET, "drop_pending_updates": True}
    await delete_webhook(http, api.settings())
    assert api.calls_to("deleteWebhook")[0].body == {"drop_pending_updates": False}
    assert api.webhook is None


@pytest.mark.parametrize("secret", [None, "has space", "x" * 257, "dấu"])
async def test_set_webhook_refuses_a_missing_or_invalid_secret(
    api: FakeTelegramApi, http: aiohttp.ClientSession, secret: str | None
) -> None:
    with pytest.raises(ConfigError, match="TUVAN_TELEGRAM__SECRET_TOKEN"):
        await set_webhook(http, api.settings(secret_token=secret), "https://x.example/t")
    assert api.calls == []
