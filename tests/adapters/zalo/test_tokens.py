"""Spending a refresh token for a new pair against the fake OAuth endpoint."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from adapters.zalo.tokens import refresh_tokens
from bot.core.errors import SendError
from bot.core.settings import ZaloSettings
from tests.adapters.zalo._support import (
    APP_ID,
    APP_SECRET,
    settings_for,
)
from tests.fakes.zalo_api import ZaloApiFake


async def test_refresh_posts_the_form_with_the_app_secret_header(
    zalo_settings: ZaloSettings, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    access, refresh, expires_in = await refresh_tokens(http, zalo_settings, "rt-0")
    assert (access, refresh, expires_in) == ("at-1", "rt-1", 90000)
    [call] = fake.refreshes
    assert call.form == {"refresh_token": "rt-0", "app_id": APP_ID, "grant_type": "refresh_token"}
    assert call.headers["secret_key"] == APP_SECRET
    assert call.headers["Content-Type"].startswith("application/x-www-form-urlencoded")


async def test_spent_refresh_token_needs_a_human(
    zalo_settings: ZaloSettings, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    with pytest.raises(SendError) as caught:
        await refresh_tokens(http, zalo_settings, "rt-spent")
    assert caught.value.retryable is False
    assert caught.value.code == "-14014"
    assert "authorise the OA again" in str(caught.value)
    assert "rt-spent" not in str(caught.value)


@pytest.mark.parametrize(
    "answer",
    [
        {"error_name": "Invalid app", "error_description": "app_id is invalid"},
        {"refresh_token": "rt-x", "expires_in": "90000"},
        {"access_token": "at-x", "expires_in": "90000"},
    ],
)
async def test_refresh_answer_without_a_token_pair_is_permanent(
    answer: dict[str, Any],
    zalo_settings: ZaloSettings,
    fake: ZaloApiFake,
    http: aiohttp.ClientSession,
) -> None:
    fake.script_oauth(answer)
    with pytest.raises(SendError) as caught:
        await refresh_tokens(http, zalo_settings, "rt-0")
    assert caught.value.retryable is False


async def test_refresh_server_error_is_retryable(
    zalo_settings: ZaloSettings, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    fake.script_oauth({"error": -1}, status=502)
    with pytest.raises(SendError) as caught:
        await refresh_tokens(http, zalo_settings, "rt-0")
    assert caught.value.retryable is True
    assert caught.value.status == 502


async def test_refresh_without_app_secret_is_a_configuration_error(
    fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    with pytest.raises(SendError) as caught:
        await refresh_tokens(http, settings_for(fake.base_url, app_secret=None), "rt-0")
    assert caught.value.retryable is False
    assert fake.oauth_calls == 0
