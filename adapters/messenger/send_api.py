"""Messenger's Send API: a reply as messages (text parts, then the sources' button template),
sender actions, and Graph errors read as ``SendError``.

https://developers.facebook.com/docs/messenger-platform/reference/send-api and
https://developers.facebook.com/docs/messenger-platform/error-codes
"""

from __future__ import annotations

from typing import Any, Literal

import aiohttp

from adapters.messenger.templates import (
    TEMPLATE_BUTTONS,
    button_template,
    quick_replies,
    with_votes,
)
from adapters.payloads import json_str
from adapters.sending import retry_after_seconds, send_parts, split_text
from bot.core.citations import SourceBlock, source_links
from bot.core.errors import SendError
from bot.core.messages import OutboundReply, SendResult
from bot.core.redact import without_secret
from bot.core.settings import MessengerSettings

# Text must be under 2000 characters.
TEXT_LIMIT = 1999

_OUTSIDE_WINDOW_SUBCODES = frozenset({2018278, 2018065})
_RATE_LIMIT_CODES = frozenset({4, 17, 32, 613})
_TRANSIENT_CODES = frozenset({2, 1200})  # "unexpected error, retry", "temporary send failure"

SenderAction = Literal["typing_on", "typing_off", "mark_seen"]


def messages_url(settings: MessengerSettings) -> str:
    return f"{settings.api_base.rstrip('/')}/{settings.api_version}/me/messages"


async def send_reply(
    http: aiohttp.ClientSession, settings: MessengerSettings, reply: OutboundReply
) -> SendResult:
    """Send ``reply`` from ``reply.first_part`` on; the quick replies (an answer's 👍/👎, the
    suggested questions) go on the last message."""
    # The sources become a last message of link buttons (a button template), not lines of
    # URLs in the text.
    text, sources = source_links(reply.text)
    if sources is not None and len(sources.links) > TEMPLATE_BUTTONS:
        text, sources = reply.text, None  # more sources than buttons: all of them as text
    parts: list[str | SourceBlock] = list(split_text(text, TEXT_LIMIT))
    if not parts:
        raise SendError("messenger: empty reply", retryable=False)
    if sources is not None:
        parts.append(sources)
    questions = with_votes(
        reply.feedback_id,
        quick_replies(reply.quick_replies, settings.quick_replies),
        reply.language,
    )

    async def send_one(index: int, part: str | SourceBlock) -> str | None:
        message: dict[str, Any] = {"text": part} if isinstance(part, str) else button_template(part)
        if questions and index == len(parts) - 1:
            message["quick_replies"] = questions
        body: dict[str, Any] = {
            "messaging_type": "RESPONSE",
            "recipient": {"id": reply.external_user_id},
            "message": message,
        }
        if reply.human_agent:
            # Past the 24 h window a person (never the bot) may answer for 7 days with the
            # HUMAN_AGENT tag; the Page needs Meta's Human Agent permission for it.
            body["messaging_type"] = "MESSAGE_TAG"
            body["tag"] = "HUMAN_AGENT"
        data = await post(http, settings, body)
        return json_str(data.get("message_id")) or None

    return await send_parts(parts, reply.first_part, send_one, reply.on_part_sent)


async def post_sender_action(
    http: aiohttp.ClientSession,
    settings: MessengerSettings,
    external_user_id: str,
    action: SenderAction,
) -> None:
    """A sender action goes in a request of its own; ``SendError`` if it fails."""
    await post(http, settings, {"recipient": {"id": external_user_id}, "sender_action": action})


async def post(
    http: aiohttp.ClientSession, settings: MessengerSettings, payload: dict[str, Any]
) -> dict[str, Any]:
    """POST ``payload`` to the Send API with the page token; its answer, or ``SendError``."""
    token = settings.page_token.get_secret_value() if settings.page_token else ""
    if not token:
        raise SendError("messenger: no page token configured", retryable=False)
    try:
        async with http.post(
            messages_url(settings), params={"access_token": token}, json=payload
        ) as response:
            status = response.status
            retry_after = retry_after_seconds(response.headers.get("Retry-After"))
            try:
                data: Any = await response.json(content_type=None)
            except ValueError:
                data = None
    except (TimeoutError, aiohttp.ClientError) as exc:
        detail = without_secret(f"{type(exc).__name__}: {exc}", token)
        error = SendError(f"messenger send API unreachable: {detail}"[:500], retryable=True)
        # aiohttp may put the URL, with the token in its query, in its exception's text:
        # then the cause is dropped so that no traceback logs it.
        if token in f"{exc!s}{exc!r}":
            raise error from None
        raise error from exc
    if status == 200 and isinstance(data, dict) and "error" not in data:
        return data
    raise _send_error(status, data, retry_after)


def _send_error(status: int, data: Any, retry_after: float | None) -> SendError:
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return SendError(
            f"messenger send API: HTTP {status} without a Graph error",
            retryable=status == 429 or status >= 500,
            retry_after=retry_after,
            status=status,
        )
    code = error.get("code")
    subcode = error.get("error_subcode")
    text = json_str(error.get("message"))
    detail = (
        f"messenger send API: HTTP {status}: ({code}/{subcode}) {text} "
        f"[fbtrace_id {json_str(error.get('fbtrace_id'))}]"
    )[:500]
    if subcode in _OUTSIDE_WINDOW_SUBCODES or (code == 10 and "window" in text.lower()):
        # Only a tagged message may go out now; trying again will not help.
        return SendError(detail, retryable=False, status=status, code="outside_window")
    retryable = (
        code in _RATE_LIMIT_CODES
        or code in _TRANSIENT_CODES
        or error.get("is_transient") is True
        or status == 429
        or status >= 500
    )
    return SendError(
        detail,
        retryable=retryable,
        retry_after=retry_after,
        status=status,
        code=None if code is None else str(code),
    )
