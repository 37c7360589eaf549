"""The one clock: timezone-aware UTC, as every timestamp column stores it."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)
