"""Fixtures of the Telegram adapter's tests: the fake Bot API (tests/conftest.py starts it)."""

from __future__ import annotations

import pytest

from tests.fakes.telegram_api import FakeTelegramApi


@pytest.fixture
def api(telegram_api: FakeTelegramApi) -> FakeTelegramApi:
    return telegram_api
