"""Zalo's OA API (v3): a reply as customer-service messages, and Zalo's error codes read as
``SendError``. A rejected access token is refreshed once through the ``TokenProvider``.

An answer's last part carries 👍/👎 as two ``oa.query.hide`` buttons (a message with ``text``
and an ``attachment`` of type ``template`` whose ``payload.buttons`` holds them): a tap sends
the button's payload to the OA as the user's ``user_send_text``, hidden from the chat, which
``events`` reads as a vote. Zalo's own pages could not be read from here; the shape is the one
third-party OA integrations send, hence ``TUVAN_ZALO__VOTE_BUTTONS`` to turn it off."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final

import aiohttp

from adapters.sending import send_parts, split_text
from adapters.zalo.calls import post_zalo
from adapters.zalo.events import zalo_id
from adapters.zalo.tokens import TokenProvider
from bot.core.errors import SendError
from bot.core.messages import OutboundReply, SendResult
from bot.core.redact import without_secret
from bot.core.settings import ZaloSettings
from bot.core.types import Language
from bot.core.votes import DOWN, LABELS, UP, vote_payload

log = logging.getLogger(__name__)

MAX_TEXT: Final = 2000

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


async def send_reply(
    http: aiohttp.ClientSession, settings: ZaloSettings, tokens: TokenProvider, reply: OutboundReply
) -> SendResult:
    """Send ``reply`` as customer-service messages, one per part of at most 2000 chars.

    A rejected access token is refreshed once and that part sent again."""
    parts = split_text(reply.text, MAX_TEXT)
    if not parts:
        return SendResult(external_ids=(), parts=0)
    token = await tokens.access_token()
    votes = reply.feedback_id if settings.vote_buttons else None

    async def send_one(index: int, part: str) -> str | None:
        nonlocal token
        message = _message(part, votes if index == len(parts) - 1 else None, reply.language)
        data = await _post_text(http, settings, token, reply.external_user_id, message)
        code = _error_code(data)
        if code in TOKEN_REJECTED:
            log.info("zalo: access token rejected (error %s); refreshing", code)
            token = await tokens.refresh(token)
            data = await _post_text(http, settings, token, reply.external_user_id, message)
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
        return zalo_id(sent.get("message_id")) if isinstance(sent, dict) else None

    return await send_parts(parts, reply.first_part, send_one, reply.on_part_sent)


def _message(text: str, feedback_id: int | None, language: Language = "vi") -> dict[str, Any]:
    """One customer-service message: the text, with an answer's 👍/👎 buttons under it,
    labelled in the answer's ``language``."""
    if feedback_id is None:
        return {"text": text}
    buttons = [
        {
            "title": LABELS[language][value],
            "type": "oa.query.hide",
            "payload": vote_payload(feedback_id, value, language),
        }
        for value in (UP, DOWN)
    ]
    return {"text": text, "attachment": {"type": "template", "payload": {"buttons": buttons}}}


async def _post_text(
    http: aiohttp.ClientSession,
    settings: ZaloSettings,
    token: str,
    user_id: str,
    message: dict[str, Any],
) -> dict[str, Any]:
    url = f"{settings.api_base.rstrip('/')}/v3.0/oa/message/cs"
    payload = {"recipient": {"user_id": user_id}, "message": message}
    return await post_zalo(
        http, url, "zalo send", json=payload, headers={"access_token": token}, secrets=[token]
    )


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
    said = without_secret(str(data.get("message") or ""), token)[:200]
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
