"""Reading platform JSON, in webhook bodies and API answers alike: platforms send numbers where
strings are documented and the reverse, and JSON's ``true`` is a Python ``int``."""

from __future__ import annotations

import json
from typing import Any, TypeGuard

from bot.core.errors import WebhookPayloadError
from bot.core.messages import RawRequest


def json_body(raw: RawRequest) -> Any:
    """The request's body as JSON, or ``WebhookPayloadError``: also for a body nested too deep
    to parse ("[[[[…": RecursionError) or an integer too long to read (ValueError)."""
    try:
        return json.loads(raw.body)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError too
        raise WebhookPayloadError(f"body is not JSON: {exc}") from exc


def is_json_int(value: object) -> TypeGuard[int]:
    """A JSON integer: ``int`` but not ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def json_str(value: Any) -> str:
    """A JSON string as it is, an integer as its digits (ids sent as numbers), else ""."""
    if isinstance(value, str):
        return value
    if is_json_int(value):
        return str(value)
    return ""
