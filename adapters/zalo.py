"""Zalo Official Account, API v3: the webhook signature, its events, customer-service messages,
and the token refresh.

Zalo's access token lives about 25 hours and its refresh token is single-use, so the adapter
never owns a token: it asks a ``TokenProvider`` (bot.channels.zalo_tokens keeps them
in the database, refreshed under a row lock) and, when Zalo rejects the token, asks it to
refresh once. Tokens never appear in exception texts or logs.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final, Protocol

import aiohttp

from adapters.base import (
    http_failure,
    json_body,
    read_json_response,
    secrets_equal,
    send_parts,
    split_text,
)
from bot.core.errors import SendError, WebhookAuthError, WebhookPayloadError
from bot.core.messages import (
    Capabilities,
    InboundKind,
    InboundMessage,
    OutboundReply,
    RawRequest,
    SendResult,
)
from bot.core.settings import ZaloSettings
from bot.core.types import Channel

log = logging.getLogger(__name__)

MAX_TEXT: Final = 2000
SIGNATURE_HEADER: Final = "X-ZEvent-Signature"
# The refresh runs while a database row lock is held (bot.channels.zalo_tokens): bound it.
REFRESH_TIMEOUT_S: Final = 30.0
# Zalo's usual lifetime of an access token, for a refresh answer without ``expires_in``.
DEFAULT_EXPIRES_IN_S: Final = 90_000

# Error codes of HTTP-200 bodies ``{"error": <code>, "message": ...}``. Zalo's own table
# (developers.zalo.me, "Mã lỗi") could not be read from here. Attested by third parties:
# -216 (Chatwoot's Zalo channel refreshes on it), -230 (Subiz's help pages and others: the 7-day
# rule), -213 (user not following / not interacting). The others are as remembered from Zalo's
# table and one integration's constants: unverified, hence few. Unknown negative codes are
# permanent: retrying an unknown refusal only spends attempts.
TOKEN_REJECTED: Final = frozenset({-216, -220, -124})  # invalid / expired access token
UNDELIVERABLE: Final[Mapping[int, str]] = {
    -213: "the user does not follow the OA or has not interacted with it recently",
    -217: "the user has not accepted to receive messages from the OA",
    -227: "the user is banned or has been inactive too long",
    -230: "the user has not interacted with the OA in the past 7 days",
    -232: "the user has not interacted with the OA recently",
    -244: "the user has restricted messages from the OA",
}
QUOTA_EXHAUSTED: Final[Mapping[int, str]] = {
    -211: "the OA is out of quota",
    -218: "the OA reached its limit of messages to this user",
}
RATE_LIMITED: Final[Mapping[int, float]] = {-32: 60.0}  # per-minute request limit: wait
# What the worker may read off ``SendError.code`` to mark a reply undeliverable, not failed.
UNDELIVERABLE_CODES: Final = frozenset(str(c) for c in (*UNDELIVERABLE, *QUOTA_EXHAUSTED))

# Events whose ``sender`` is the OA and whose ``recipient`` is the user.
_TO_USER_EVENTS: Final = frozenset({"user_received_message", "user_seen_message"})
_UNSUPPORTED_EVENTS: Final = frozenset(
    f"user_send_{what}"
    for what in ("image", "sticker", "file", "audio", "video", "gif", "location", "link")
)


class TokenProvider(Protocol):
    """Where the adapter gets the OA access token."""

    async def access_token(self) -> str:
        """The current access token."""

    async def refresh(self, stale: str) -> str:
        """A fresh access token. Refreshes only if the stored token is still ``stale`` (so
        that workers that saw the same rejection refresh once); else returns the stored one."""


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


class ZaloAdapter:
    channel: Channel = "zalo"

    def __init__(self, settings: ZaloSettings, tokens: TokenProvider) -> None:
        self.settings = settings
        self.tokens = tokens

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(window_hours=self.settings.window_hours)

    # -- inbound --------------------------------------------------------------------------

    def verify(self, raw: RawRequest) -> None:
        app_id = self.settings.app_id
        key = self.settings.oa_secret_key
        secret = key.get_secret_value() if key is not None else ""
        if not app_id or not secret:
            raise WebhookAuthError("zalo: app_id and oa_secret_key are not configured")
        header = (raw.headers.get(SIGNATURE_HEADER) or "").strip()
        if not header.startswith("mac="):
            raise WebhookAuthError(f"zalo: missing or malformed {SIGNATURE_HEADER}")
        body = _event_body(raw)  # the signature covers the body's own timestamp
        timestamp = _required_id(body, "timestamp")
        if _id(body.get("app_id")) != app_id:
            raise WebhookAuthError("zalo: the event is for another app")
        expected = zalo_signature(app_id, raw.body, timestamp, secret)
        if not secrets_equal(header.removeprefix("mac=").lower(), expected):
            raise WebhookAuthError("zalo: signature does not match")

    def parse(self, raw: RawRequest) -> list[InboundMessage]:
        """The one event of a request. Events that name no user (OA-level notices) are
        acknowledged but not returned: there is no conversation to store them in."""
        body = _event_body(raw)
        event = body.get("event_name")
        if not isinstance(event, str) or not event:
            raise WebhookPayloadError("zalo: no event_name")
        timestamp = _required_id(body, "timestamp")
        sent_at = _sent_at(timestamp)
        message = body.get("message")
        if message is not None and not isinstance(message, dict):
            raise WebhookPayloadError("zalo: 'message' is not an object")
        message = message or {}
        msg_id = _id(message.get("msg_id"))
        given_text = message.get("text")
        text = given_text if isinstance(given_text, str) else ""

        kind: InboundKind
        if event == "user_send_text":
            user = _required_id(_object(body, "sender"), "id")
            if msg_id is None:
                raise WebhookPayloadError("zalo: user_send_text without message.msg_id")
            if not isinstance(given_text, str):
                raise WebhookPayloadError("zalo: user_send_text without message.text")
            kind, event_id = "text", msg_id
        elif event == "follow":
            user = _required_id(_object(body, "follower"), "id")
            kind, event_id, text = "follow", f"follow:{user}:{timestamp}", ""
        else:
            found = _user_of(event, body)
            if found is None:
                log.debug("zalo: %s names no user; not stored", event)
                return []
            user = found
            if event in _UNSUPPORTED_EVENTS:
                kind, event_id = "unsupported", msg_id or f"{event}:{user}:{timestamp}"
            else:
                # The OA's message ids recur across events (oa_send_text, then
                # user_received_message, then user_seen_message): keep the event name in the
                # key so that the dedup does not drop the later ones.
                kind = "event"
                event_id = f"{event}:{msg_id}" if msg_id else f"{event}:{user}:{timestamp}"
        return [
            InboundMessage(
                channel=self.channel,
                event_id=event_id,
                external_user_id=user,
                kind=kind,
                text=text,
                sent_at=sent_at,
                raw=body,
            )
        ]

    # -- outbound -------------------------------------------------------------------------

    async def send(self, http: aiohttp.ClientSession, reply: OutboundReply) -> SendResult:
        """Send ``reply`` as customer-service messages, one per part of at most 2000 chars.

        A rejected access token is refreshed once and that part sent again."""
        parts = split_text(reply.text, MAX_TEXT)
        if not parts:
            return SendResult(external_ids=(), parts=0)
        token = await self.tokens.access_token()

        async def send_one(index: int, part: str) -> str | None:
            nonlocal token
            data = await self._post_text(http, token, reply.external_user_id, part)
            code = _error_code(data)
            if code in TOKEN_REJECTED:
                log.info("zalo: access token rejected (error %s); refreshing", code)
                token = await self.tokens.refresh(token)
                data = await self._post_text(http, token, reply.external_user_id, part)
                code = _error_code(data)
                if code in TOKEN_REJECTED:
                    # Retryable: the next attempt reads the stored token again, and a token
                    # revoked for good ends in a refused refresh, which is not retryable.
                    raise SendError(
                        f"zalo send: access token rejected right after a refresh (error {code})",
                        retryable=True,
                        code=str(code),
                    )
            if code != 0:
                raise _send_failure(code, data, token)
            sent = data.get("data")
            return _id(sent.get("message_id")) if isinstance(sent, dict) else None

        return await send_parts(parts, reply.first_part, send_one)

    async def typing(self, http: aiohttp.ClientSession, external_user_id: str) -> None:
        """Zalo's OA API has no typing indicator."""

    async def _post_text(
        self, http: aiohttp.ClientSession, token: str, user_id: str, text: str
    ) -> dict[str, Any]:
        url = f"{self.settings.api_base.rstrip('/')}/v3.0/oa/message/cs"
        payload = {"recipient": {"user_id": user_id}, "message": {"text": text}}
        try:
            async with http.post(url, json=payload, headers={"access_token": token}) as response:
                if response.status >= 400:
                    detail = _scrub(await response.text(), token)[:200]
                    raise http_failure(
                        response.status, "zalo send", detail, _retry_after(response.headers)
                    )
                data = await read_json_response(response, "zalo send")
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise SendError(
                f"zalo send: network error: {type(exc).__name__}", retryable=True
            ) from exc
        if not isinstance(data, dict):
            raise SendError("zalo send: the answer is not a JSON object", retryable=True)
        return data


async def refresh_tokens(
    http: aiohttp.ClientSession, settings: ZaloSettings, refresh_token: str
) -> tuple[str, str, int]:
    """Spend ``refresh_token`` for a new pair: ``(access_token, refresh_token, expires_in_s)``.

    The refresh token is single-use: the caller must store both new tokens before anything
    else can fail, and must never send the same refresh token twice (``DbTokenProvider``
    holds a row lock around this call). A network error after Zalo accepted the request
    leaves the old refresh token spent; nothing here can tell.
    """
    if not settings.app_id or settings.app_secret is None:
        raise SendError(
            "zalo token refresh: app_id and app_secret are not configured", retryable=False
        )
    secret = settings.app_secret.get_secret_value()
    url = f"{settings.oauth_base.rstrip('/')}/v4/oa/access_token"
    form = {
        "refresh_token": refresh_token,
        "app_id": settings.app_id,
        "grant_type": "refresh_token",
    }
    try:
        async with http.post(
            url,
            data=form,
            headers={"secret_key": secret},
            timeout=aiohttp.ClientTimeout(total=REFRESH_TIMEOUT_S),
        ) as response:
            if response.status >= 400:
                detail = _scrub(await response.text(), refresh_token, secret)[:200]
                raise http_failure(
                    response.status,
                    "zalo token refresh",
                    detail,
                    _retry_after(response.headers),
                )
            data = await read_json_response(response, "zalo token refresh")
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise SendError(
            f"zalo token refresh: network error: {type(exc).__name__}", retryable=True
        ) from exc
    if not isinstance(data, dict):
        raise SendError("zalo token refresh: the answer is not a JSON object", retryable=False)
    access, refreshed = data.get("access_token"), data.get("refresh_token")
    error = data.get("error")
    if error or data.get("error_name") or not isinstance(access, str) or not access:
        reason = " ".join(
            str(data[k])
            for k in ("error", "error_name", "error_reason", "error_description")
            if data.get(k)
        )
        raise SendError(
            _scrub(
                f"zalo token refresh refused ({reason or 'no access token in the answer'}): "
                "the refresh token may be spent or expired; a person must authorise the OA "
                "again and set new tokens",
                refresh_token,
                secret,
            )[:500],
            retryable=False,
            code=str(error) if error else None,
        )
    if not isinstance(refreshed, str) or not refreshed:
        # The old refresh token is spent now: without a new one the channel dies at expiry.
        raise SendError(
            "zalo token refresh: no refresh token in the answer; a person must authorise the "
            "OA again before the new access token expires",
            retryable=False,
        )
    return access, refreshed, _expires_in(data.get("expires_in"))


# -- helpers ------------------------------------------------------------------------------


def _event_body(raw: RawRequest) -> dict[str, Any]:
    body = json_body(raw)
    if not isinstance(body, dict):
        raise WebhookPayloadError("zalo: the body is not a JSON object")
    return body


def _id(value: object) -> str | None:
    """A Zalo id as a string: ids are 64-bit numbers, sent as strings (kept as such)."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _required_id(obj: Mapping[str, Any], key: str) -> str:
    value = _id(obj.get(key))
    if value is None:
        raise WebhookPayloadError(f"zalo: no '{key}'")
    return value


def _object(body: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = body.get(key)
    if not isinstance(value, dict):
        raise WebhookPayloadError(f"zalo: no '{key}' object")
    return value


def _user_of(event: str, body: Mapping[str, Any]) -> str | None:
    if event in ("follow", "unfollow"):
        key = "follower"
    elif event.startswith("oa_send_") or event in _TO_USER_EVENTS:
        key = "recipient"
    else:
        key = "sender"
    party = body.get(key)
    return _id(party.get("id")) if isinstance(party, dict) else None


def _sent_at(timestamp: str) -> datetime | None:
    try:
        return datetime.fromtimestamp(int(timestamp) / 1000, tz=UTC)
    except (ValueError, OverflowError, OSError):
        return None


def _error_code(data: Mapping[str, Any]) -> int:
    code = data.get("error")
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    if isinstance(code, str):
        try:
            return int(code)
        except ValueError:
            pass
    raise SendError("zalo send: the answer has no error code", retryable=True)


def _send_failure(code: int, data: Mapping[str, Any], token: str) -> SendError:
    said = _scrub(str(data.get("message") or ""), token)[:200]
    if code in RATE_LIMITED:
        return SendError(
            f"zalo send: rate limited (error {code}): {said}",
            retryable=True,
            retry_after=RATE_LIMITED[code],
            code=str(code),
        )
    meaning = UNDELIVERABLE.get(code) or QUOTA_EXHAUSTED.get(code)
    if meaning:
        # The worker stores such a reply as undeliverable (the user must write again first),
        # the way it treats Messenger's 24-hour window.
        return SendError(
            f"zalo send: {meaning} (error {code}): {said}", retryable=False, code="outside_window"
        )
    return SendError(f"zalo send: refused (error {code}): {said}", retryable=False, code=str(code))


def _retry_after(headers: Mapping[str, str]) -> float | None:
    try:
        return float(headers.get("Retry-After", ""))
    except ValueError:
        return None


def _expires_in(value: object) -> int:
    """Zalo sends ``expires_in`` as a string of seconds."""
    try:
        seconds = int(str(value))
    except ValueError:
        return DEFAULT_EXPIRES_IN_S
    return seconds if seconds > 0 else DEFAULT_EXPIRES_IN_S


def _scrub(text: str, *secrets: str) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
