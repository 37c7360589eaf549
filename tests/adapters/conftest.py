"""Fixtures of every adapter's tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    """The process's session, as the adapters are given it."""
    async with aiohttp.ClientSession() as session:
        yield session
