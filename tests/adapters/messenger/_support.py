"""Helpers shared by the Messenger adapter's tests: settings, signed requests, documented
event shapes."""

from __future__ import annotations

import json
from typing import Any

from multidict import CIMultiDict
from pydantic import SecretStr

from bot.core.messages import RawRequest
from bot.core.settings import MessengerSettings

APP_SECRET = "app-secret-0123456789"


PAGE_TOKEN = "EAAG-page-token-do-not-leak"


VERIFY_TOKEN = "verify-me"


APP_ID = "1517776481860111"


PAGE_ID = "104857600000001"


PSID = "6543210987654321"


TS = 1_727_000_000_123  # ms


def make_settings(**overrides: Any) -> MessengerSettings:
    values: dict[str, Any] = {
        "page_token": SecretStr(PAGE_TOKEN),
        "app_secret": SecretStr(APP_SECRET),
        "verify_token": SecretStr(VERIFY_TOKEN),
        "app_id": APP_ID,
    }
    values.update(overrides)
    return MessengerSettings(**values)


def post(body: bytes, signature: str | None = None) -> RawRequest:
    headers: CIMultiDict[str] = CIMultiDict({"Content-Type": "application/json"})
    if signature is not None:
        headers["X-Hub-Signature-256"] = signature
    return RawRequest("POST", headers, {}, body)


def webhook(*entries: list[dict[str, Any]]) -> bytes:
    return json.dumps(
        {
            "object": "page",
            "entry": [{"id": PAGE_ID, "time": TS + 500, "messaging": events} for events in entries],
        }
    ).encode()


def from_user(psid: str = PSID, ts: int = TS, **event: Any) -> dict[str, Any]:
    return {"sender": {"id": psid}, "recipient": {"id": PAGE_ID}, "timestamp": ts, **event}
