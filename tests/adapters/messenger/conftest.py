"""Fixtures of the Messenger adapter's tests."""

from __future__ import annotations

import pytest

from adapters.messenger import MessengerAdapter
from tests.adapters.messenger._support import (
    make_settings,
)


@pytest.fixture
def adapter() -> MessengerAdapter:
    return MessengerAdapter(make_settings())
