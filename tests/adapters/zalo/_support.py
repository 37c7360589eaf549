"""Helpers shared by the Zalo adapter's tests: settings, signed events, tokens without a
database."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
from multidict import CIMultiDict
from pydantic import SecretStr

from adapters.zalo import ZaloAdapter
from adapters.zalo.signature import zalo_signature
from adapters.zalo.tokens import refresh_tokens
from bot.core.messages import RawRequest
from bot.core.settings import ZaloSettings

APP_ID = "3482178216594085616"


OA_KEY = "oa-secret-key"


APP_SECRET = "app-secret"


USER = "2512523625412515"


# The documented shape of user_send_text (docs/platforms.md).
TEXT_EVENT: dict[str, Any] = {
    "event_name": "user_send_text",
    "app_id": APP_ID,
    "sender": {"id": USER},
    "recipient": {"id": "579745863508352884"},
    "message": {"text": "Học phí ngành CNTT bao nhiêu?", "msg_id": "a1b2c3d4e5f6"},
    "timestamp": "1699003881354",
    "user_id_by_app": "552177279717587730",
}


def settings_for(base_url: str = "http://127.0.0.1:9", **overrides: Any) -> ZaloSettings:
    values: dict[str, Any] = {
        "app_id": APP_ID,
        "app_secret": SecretStr(APP_SECRET),
        "oa_secret_key": SecretStr(OA_KEY),
        "api_base": base_url,
        "oauth_base": base_url,
        **overrides,
    }
    return ZaloSettings(**values)


def request(body: bytes | dict[str, Any], signature: str | None = None) -> RawRequest:
    data = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
    headers: CIMultiDict[str] = CIMultiDict()
    if signature is not None:
        headers["X-ZEvent-Signature"] = signature
    return RawRequest(method="POST", headers=headers, query={}, body=data)


def signed(body: dict[str, Any], key: str = OA_KEY, app_id: str = APP_ID) -> RawRequest:
    data = json.dumps(body, ensure_ascii=False).encode()
    mac = zalo_signature(app_id, data, str(body["timestamp"]), key)
    return request(data, f"mac={mac}")


class MemoryTokens:
    """A TokenProvider without a database: refreshes against the fake OAuth endpoint."""

    def __init__(self, http: aiohttp.ClientSession, settings: ZaloSettings) -> None:
        self.http = http
        self.settings = settings
        self.access = "at-0"
        self.refresh_token = "rt-0"
        self.refresh_calls: list[str] = []

    async def access_token(self) -> str:
        return self.access

    async def refresh(self, stale: str) -> str:
        self.refresh_calls.append(stale)
        if stale == self.access:
            self.access, self.refresh_token, _ = await refresh_tokens(
                self.http, self.settings, self.refresh_token
            )
        return self.access


def offline_adapter() -> ZaloAdapter:
    return ZaloAdapter(settings_for(), tokens=None)  # type: ignore[arg-type]
