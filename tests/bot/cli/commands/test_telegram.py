"""``tuvan telegram``: the commands against a fake Bot API."""

from __future__ import annotations

import asyncio

import pytest
from click.testing import CliRunner

from bot.cli.commands.telegram import telegram_group
from bot.core.settings import Settings, TelegramSettings
from tests.adapters.telegram._support import (
    SECRET,
)
from tests.fakes.telegram_api import FakeTelegramApi


async def test_cli_set_webhook_uses_the_settings_from_the_environment(
    telegram_api: FakeTelegramApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUVAN_TELEGRAM__TOKEN", telegram_api.token)
    monkeypatch.setenv("TUVAN_TELEGRAM__SECRET_TOKEN", SECRET)
    monkeypatch.setenv("TUVAN_TELEGRAM__API_BASE", telegram_api.api_base)
    settings = Settings(_env_file=None)
    url = "https://tuyensinh.example.vn/webhooks/telegram"
    # The command runs its own event loop: in a thread, while this loop serves the fake API.
    result = await asyncio.to_thread(
        CliRunner().invoke, telegram_group, ["set-webhook", url, "--drop-pending"], obj=settings
    )
    assert result.exit_code == 0, result.output
    assert url in result.output
    assert telegram_api.webhook == {
        "url": url,
        "secret_token": SECRET,
        "drop_pending_updates": True,
    }

    result = await asyncio.to_thread(
        CliRunner().invoke, telegram_group, ["delete-webhook"], obj=settings
    )
    assert result.exit_code == 0, result.output
    assert telegram_api.webhook is None


async def test_cli_without_a_token_says_what_to_set(telegram_api: FakeTelegramApi) -> None:
    settings = Settings(_env_file=None, telegram=TelegramSettings())
    for args in (["set-webhook", "https://x.example/t"], ["delete-webhook"], ["poll"]):
        result = await asyncio.to_thread(CliRunner().invoke, telegram_group, args, obj=settings)
        assert result.exit_code == 1
        assert "TUVAN_TELEGRAM__TOKEN" in result.output
    assert telegram_api.calls == []


async def test_cli_set_webhook_without_a_secret_fails_cleanly(
    telegram_api: FakeTelegramApi,
) -> None:
    settings = Settings(_env_file=None, telegram=telegram_api.settings())
    args = ["set-webhook", "https://x.example/t"]
    result = await asyncio.to_thread(CliRunner().invoke, telegram_group, args, obj=settings)
    assert result.exit_code == 1
    assert "TUVAN_TELEGRAM__SECRET_TOKEN" in result.output
    assert telegram_api.token not in result.output
