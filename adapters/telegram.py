"""Telegram: updates in (webhook or long polling), replies out, over the Bot API.

``verify`` checks the secret Telegram echoes in ``X-Telegram-Bot-Api-Secret-Token`` (the API
signs nothing else). ``parse_update`` reads one Update object, for the webhook and for
``getUpdates`` alike. Calls go straight to ``{api_base}/bot<token>/<method>`` on the process's
aiohttp session: python-telegram-bot's ``Bot`` would bring its own HTTP client and an exception
family to map all the same. Its types are not used for parsing either: a plain, checked reading
of the documented JSON keeps unknown and future fields out of the way and is stored as it came.

The token is part of every URL, so no URL and no unredacted aiohttp message reaches an
exception or a log line.
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from contextlib import suppress
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, TypeGuard, TypeVar
from urllib.parse import quote

import aiohttp

from adapters.base import json_body, read_json_response, secrets_equal, send_parts, split_text
from bot.errors import ConfigError
from bot.messages import (
    Channel,
    InboundKind,
    InboundMessage,
    OutboundReply,
    RawRequest,
    SendError,
    SendResult,
    WebhookAuthError,
    WebhookPayloadError,
)
from bot.settings import TelegramSettings

log = logging.getLogger(__name__)

T = TypeVar("T")

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 (a header name)
# sendMessage: "1-4096 characters after entities parsing" (core.telegram.org/bots/api#sendmessage)
MESSAGE_LIMIT = 4096
# setWebhook: secret_token is "1-256 characters. Only characters A-Z, a-z, 0-9, _ and - are allowed"
_SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")
# "/start", "/start@my_bot", "/start <deep-link payload>"
_COMMAND = re.compile(r"/(start|help)(?:@\w+)?(?=\s|$)", re.ASCII)
# Message fields carrying something other than text (core.telegram.org/bots/api#message).
_MEDIA = (
    "animation",
    "audio",
    "checklist",
    "contact",
    "dice",
    "document",
    "game",
    "invoice",
    "location",
    "paid_media",
    "photo",
    "poll",
    "sticker",
    "story",
    "venue",
    "video",
    "video_note",
    "voice",
)
_FORGEABLE = (
    "the Telegram webhook has no secret configured, so anyone could forge updates: set "
    "TUVAN_TELEGRAM__SECRET_TOKEN and run `tuvan telegram set-webhook URL`"
)

Deliver = Callable[[list[InboundMessage]], Awaitable[None]]


# -- reading updates ----------------------------------------------------------------------------


def parse_update(data: Any) -> list[InboundMessage]:
    """The one message an Update carries; ``WebhookPayloadError`` if it is not an Update."""
    if not isinstance(data, dict):
        raise WebhookPayloadError("a Telegram update must be a JSON object")
    update_id = data.get("update_id")
    if not _is_int(update_id):
        raise WebhookPayloadError("a Telegram update must have an integer update_id")
    event_id = str(update_id)
    if "message" in data:
        return [_message(event_id, _object(data, "message"), data)]
    if "edited_message" in data:
        # Stored, not answered: the answer to the first version has been sent already.
        edited = _message(event_id, _object(data, "edited_message"), data)
        return [replace(edited, kind="event")]
    return [_other(event_id, data)]


def _message(event_id: str, message: dict[str, Any], update: dict[str, Any]) -> InboundMessage:
    chat = _object(message, "chat")
    if not _is_int(chat.get("id")):
        raise WebhookPayloadError("a Telegram message must have an integer chat.id")
    sender = message.get("from")
    sender = sender if isinstance(sender, dict) else {}
    text = message.get("text")
    kind: InboundKind
    if text is not None:
        if not isinstance(text, str):
            raise WebhookPayloadError("a Telegram message's text must be a string")
        command = _COMMAND.match(text)
        kind, text = ("command", f"/{command[1]}") if command else ("text", text)
    elif any(key in message for key in _MEDIA):
        caption = message.get("caption")
        kind, text = "unsupported", caption if isinstance(caption, str) else ""
    else:  # a service message: someone joined, a pin, a chat photo changed...
        kind, text = "event", ""
    locale = sender.get("language_code")
    return InboundMessage(
        channel="telegram",
        event_id=event_id,
        external_user_id=str(chat["id"]),
        kind=kind,
        text=text,
        sent_at=_time(message.get("date")),
        user_name=_name(sender),
        locale=locale if isinstance(locale, str) else None,
        raw=update,
    )


def _other(event_id: str, update: dict[str, Any]) -> InboundMessage:
    """A callback query, a chat member change, a channel post...: kept, not answered."""
    payload: Any = next((v for k, v in update.items() if k != "update_id"), None)
    payload = payload if isinstance(payload, dict) else {}
    chat = _first_object(payload.get("chat"), _first_object(payload.get("message")).get("chat"))
    person = _first_object(payload.get("from"), payload.get("user"))
    who = chat.get("id") if _is_int(chat.get("id")) else person.get("id")
    return InboundMessage(
        channel="telegram",
        event_id=event_id,
        external_user_id=str(who) if _is_int(who) else "unknown",
        kind="event",
        sent_at=_time(payload.get("date")),
        user_name=_name(person),
        raw=update,
    )


def _object(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    if not isinstance(value, dict):
        raise WebhookPayloadError(f"a Telegram {key} must be a JSON object")
    return value


def _first_object(*values: Any) -> dict[str, Any]:
    return next((v for v in values if isinstance(v, dict)), {})


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _time(value: Any) -> datetime | None:
    return datetime.fromtimestamp(value, UTC) if _is_int(value) else None


def _name(user: Mapping[str, Any]) -> str | None:
    names = [user.get("first_name"), user.get("last_name")]
    return " ".join(n for n in names if isinstance(n, str) and n) or None


# -- the adapter --------------------------------------------------------------------------------


class TelegramAdapter:
    channel: Channel = "telegram"

    def __init__(self, settings: TelegramSettings) -> None:
        self.settings = settings

    def verify(self, raw: RawRequest) -> None:
        if self.settings.secret_token is None:
            raise WebhookAuthError(_FORGEABLE)
        given = raw.headers.get(SECRET_HEADER)
        if given is None:
            raise WebhookAuthError(f"missing {SECRET_HEADER} header")
        if not secrets_equal(given, self.settings.secret_token.get_secret_value()):
            raise WebhookAuthError(f"wrong {SECRET_HEADER}")

    def parse(self, raw: RawRequest) -> list[InboundMessage]:
        return parse_update(json_body(raw))

    async def send(self, http: aiohttp.ClientSession, reply: OutboundReply) -> SendResult:
        # The limit counts the text after entity parsing: split the plain text, then escape.
        parts = split_text(reply.text, MESSAGE_LIMIT)
        if not parts:
            raise SendError("telegram sendMessage: the reply is empty", retryable=False)

        async def send_one(index: int, part: str) -> str | None:
            payload: dict[str, Any] = {
                "chat_id": _chat_id(reply.external_user_id),
                "text": html.escape(part, quote=False),
                "parse_mode": "HTML",
                "link_preview_options": {"is_disabled": True},
            }
            if reply.quick_replies and index == len(parts) - 1:
                # Tapping a button sends its text as the user's next question.
                payload["reply_markup"] = {
                    "keyboard": [[{"text": q}] for q in reply.quick_replies],
                    "one_time_keyboard": True,
                    "resize_keyboard": True,
                }
            result = await call_api(http, self.settings, "sendMessage", payload)
            message_id = result.get("message_id") if isinstance(result, dict) else None
            return str(message_id) if message_id is not None else None

        return await send_parts(parts, reply.first_part, send_one)

    async def typing(self, http: aiohttp.ClientSession, external_user_id: str) -> None:
        payload = {"chat_id": _chat_id(external_user_id), "action": "typing"}
        try:
            await call_api(http, self.settings, "sendChatAction", payload, timeout_s=10.0)
        except (SendError, ConfigError) as exc:
            log.debug("telegram typing indicator not shown: %s", exc)


def _chat_id(external_user_id: str) -> int | str:
    """Chat ids are integers; a channel may also be addressed as "@name"."""
    try:
        return int(external_user_id)
    except ValueError:
        return external_user_id


# -- calling the Bot API ------------------------------------------------------------------------


async def call_api(
    http: aiohttp.ClientSession,
    settings: TelegramSettings,
    method: str,
    payload: Mapping[str, Any],
    *,
    timeout_s: float = 30.0,
) -> Any:
    """The ``result`` of a Bot API method, or ``SendError`` (retryable: 429, 5xx, network)."""
    if settings.token is None:
        raise ConfigError("no Telegram bot token: set TUVAN_TELEGRAM__TOKEN")
    token = settings.token.get_secret_value()
    url = f"{settings.api_base.rstrip('/')}/bot{token}/{method}"
    what = f"telegram {method}"
    try:
        async with http.post(
            url, json=dict(payload), timeout=aiohttp.ClientTimeout(total=timeout_s)
        ) as response:
            status = response.status
            body = await read_json_response(response, what)
    except (aiohttp.ClientError, TimeoutError) as exc:
        # Not chained: aiohttp's text for some errors is the URL, and the URL holds the token.
        detail = _redact(f"{type(exc).__name__}: {exc}".rstrip(": "), token)
        raise SendError(f"{what}: {detail}", retryable=True) from None
    if not isinstance(body, dict):
        raise SendError(
            f"{what}: HTTP {status}: not a Bot API response", retryable=status >= 500, status=status
        )
    if body.get("ok") is True:
        return body.get("result")
    error_code = body.get("error_code")
    code: int = error_code if _is_int(error_code) else status
    description = _redact(str(body.get("description") or "no description"), token)
    parameters = body.get("parameters")
    retry_after = parameters.get("retry_after") if isinstance(parameters, dict) else None
    raise SendError(
        f"{what}: HTTP {code}: {description}"[:500],
        retryable=code == 429 or code >= 500,
        retry_after=float(retry_after) if isinstance(retry_after, int | float) else None,
        status=code,
        code=str(code),
    )


def _redact(text: str, token: str) -> str:
    return text.replace(token, "<token>").replace(quote(token), "<token>")


def check_secret_token(secret: str) -> None:
    if not _SECRET_TOKEN.fullmatch(secret):
        raise ConfigError(
            "TUVAN_TELEGRAM__SECRET_TOKEN must be 1-256 characters of A-Z, a-z, 0-9, _ and - "
            "(Telegram's rule for setWebhook's secret_token)"
        )


async def set_webhook(
    http: aiohttp.ClientSession, settings: TelegramSettings, url: str, *, drop_pending: bool = False
) -> None:
    """Have Telegram post updates to ``url``, with our secret in every request's header."""
    if settings.secret_token is None:
        raise ConfigError(
            "no webhook secret: set TUVAN_TELEGRAM__SECRET_TOKEN (1-256 characters of A-Z, a-z, "
            "0-9, _ and -) so that tuvan can tell Telegram's requests from forged ones"
        )
    secret = settings.secret_token.get_secret_value()
    check_secret_token(secret)
    payload = {"url": url, "secret_token": secret, "drop_pending_updates": drop_pending}
    await call_api(http, settings, "setWebhook", payload)


async def delete_webhook(
    http: aiohttp.ClientSession, settings: TelegramSettings, *, drop_pending: bool = False
) -> None:
    await call_api(http, settings, "deleteWebhook", {"drop_pending_updates": drop_pending})


async def get_updates(
    http: aiohttp.ClientSession,
    settings: TelegramSettings,
    offset: int | None,
    timeout: int,  # noqa: ASYNC109 (getUpdates' own parameter: how long Telegram holds the call)
) -> list[dict[str, Any]]:
    """Updates from ``offset`` on (which confirms those before it), waiting up to ``timeout`` s."""
    payload: dict[str, Any] = {"timeout": timeout}
    if offset is not None:
        payload["offset"] = offset
    result = await call_api(http, settings, "getUpdates", payload, timeout_s=timeout + 15.0)
    if not isinstance(result, list):
        raise SendError("telegram getUpdates: the result is not a list", retryable=True)
    return [u for u in result if isinstance(u, dict)]


# -- long polling -------------------------------------------------------------------------------


async def poll(
    settings: TelegramSettings,
    http: aiohttp.ClientSession,
    deliver: Deliver,
    *,
    stop: asyncio.Event,
    timeout: int = 30,  # noqa: ASYNC109 (getUpdates' long-poll time, see get_updates)
    backoff_max_s: float = 30.0,
) -> None:
    """Fetch updates until ``stop`` is set, hand each batch to ``deliver`` and only then move
    the offset past it: updates whose delivery failed are fetched again. ``deliver`` must be
    idempotent (Telegram may repeat updates that were not yet confirmed)."""
    offset: int | None = None
    delay = 1.0
    while not stop.is_set():
        wait = delay
        try:
            updates = await _unless_stopped(get_updates(http, settings, offset, timeout), stop)
        except SendError as exc:
            if exc.status == 409:
                raise SendError(
                    f"{exc} (a webhook is set: run `tuvan telegram delete-webhook` first)",
                    retryable=False,
                    status=409,
                ) from exc
            if not exc.retryable:
                raise
            wait = exc.retry_after or delay
            log.warning("telegram getUpdates failed, again in %.0f s: %s", wait, exc)
        else:
            if updates is None:  # stopped while waiting
                return
            try:
                await _deliver(updates, deliver)
            except Exception:  # a task boundary: keep polling, the offset stays put
                log.exception("storing Telegram updates failed; again in %.0f s", wait)
            else:
                ids = [u["update_id"] for u in updates if _is_int(u.get("update_id"))]
                if ids:
                    offset = max(ids) + 1
                delay = 1.0
                continue
        delay = min(delay * 2, backoff_max_s)
        with suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), wait)


async def _deliver(updates: list[dict[str, Any]], deliver: Deliver) -> None:
    messages: list[InboundMessage] = []
    for update in updates:
        try:
            messages.extend(parse_update(update))
        except WebhookPayloadError as exc:
            log.warning("skipping Telegram update %s: %s", update.get("update_id"), exc)
    if messages:
        await deliver(messages)


async def _unless_stopped(work: Awaitable[T], stop: asyncio.Event) -> T | None:
    """The result of ``work``, or None if ``stop`` is set first (``work`` is then cancelled)."""
    task = asyncio.ensure_future(work)
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        task.cancel()
        stopper.cancel()
        await asyncio.gather(task, stopper, return_exceptions=True)
    return None if task.cancelled() else task.result()
