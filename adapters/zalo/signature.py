"""The Zalo OA webhook's signature: ``X-ZEvent-Signature: mac=<hex>`` over the body's bytes."""

from __future__ import annotations

import hashlib
import re
from typing import Final

from adapters.webhook_auth import secrets_equal
from adapters.zalo.events import event_body, required_id, zalo_id
from bot.core.errors import WebhookAuthError
from bot.core.messages import RawRequest
from bot.core.settings import ZaloSettings

SIGNATURE_HEADER: Final = "X-ZEvent-Signature"
# A "timestamp" member as it appears in the bytes: a string or a number of digits. A text that
# mentions "timestamp" is escaped (\"timestamp\") and does not match. Nested objects may
# have one too, so every match is a candidate; the parsed body says which one is the event's.
_TIMESTAMP: Final = re.compile(rb'"timestamp"\s*:\s*"?(\d{1,20})"?')
# Zalo's events are small objects with a few timestamps at most: a body with more candidates
# than this is not Zalo's, and is not worth more hashing.
_MAX_CANDIDATES: Final = 16


def zalo_signature(app_id: str, body: bytes, timestamp: str, oa_secret_key: str) -> str:
    """The hex ``mac`` Zalo puts in ``X-ZEvent-Signature: mac=<hex>``.

    ``sha256(app_id + raw_body + timestamp + oa_secret_key)``: a plain SHA-256 of the
    concatenation, not an HMAC, with the OA secret key (not the app secret) and the
    ``timestamp`` of the JSON body. The sources are third-party (Chatwoot's Zalo channel and
    two write-ups agree); Zalo's own page could not be checked.
    """
    digest = hashlib.sha256()
    digest.update(app_id.encode())
    digest.update(body)
    digest.update(timestamp.encode())
    digest.update(oa_secret_key.encode())
    return digest.hexdigest()


def verify_signature(settings: ZaloSettings, raw: RawRequest) -> None:
    """``WebhookAuthError`` unless the request is signed for our app with the OA secret key.

    The mac is checked on the raw bytes before any JSON is parsed: an unsigned body never
    reaches the parser (a forged ``"[" * 2000`` is a 403, not a parse). The signature covers
    the body's own ``timestamp``, so the candidates are read from the bytes (``_TIMESTAMP``),
    each tried; only a match proves the body authentic, and only then is it parsed, to check
    that the matching timestamp is the event's own and the event is for our app.
    """
    app_id = settings.app_id
    key = settings.oa_secret_key
    secret = key.get_secret_value() if key is not None else ""
    if not app_id or not secret:
        raise WebhookAuthError("zalo: app_id and oa_secret_key are not configured")
    header = (raw.headers.get(SIGNATURE_HEADER) or "").strip()
    if not header.startswith("mac="):
        raise WebhookAuthError(f"zalo: missing or malformed {SIGNATURE_HEADER}")
    given = header.removeprefix("mac=").lower()
    signed_prefix = hashlib.sha256()
    signed_prefix.update(app_id.encode())
    signed_prefix.update(raw.body)
    matched: str | None = None
    for n, found in enumerate(_TIMESTAMP.finditer(raw.body)):
        if n == _MAX_CANDIDATES:
            break
        timestamp = found[1].decode()
        digest = signed_prefix.copy()  # app_id + body hashed once, whatever the candidates
        digest.update(timestamp.encode())
        digest.update(secret.encode())
        if secrets_equal(given, digest.hexdigest()):
            matched = timestamp
            break
    if matched is None:
        raise WebhookAuthError("zalo: signature does not match")
    body = event_body(raw)  # authentic from here on: a parse error is a 400, not a 403
    if required_id(body, "timestamp") != matched:
        raise WebhookAuthError("zalo: the signed timestamp is not the event's")
    if zalo_id(body.get("app_id")) != app_id:
        raise WebhookAuthError("zalo: the event is for another app")
