"""Telegram: updates in (webhook or long polling), replies out, over the Bot API.

``verify`` checks the secret Telegram echoes in ``X-Telegram-Bot-Api-Secret-Token`` (the API
signs nothing else). ``parse_update`` reads one Update object with python-telegram-bot's types
(``telegram.Update.de_json``), for the webhook and for ``getUpdates`` alike; the JSON is stored
as it came. Calls go through ``telegram.Bot`` (its HTTPX client, not the process's aiohttp
session), one per adapter: close it with ``TelegramAdapter.aclose()``.

The token is part of every URL, so no URL and no unredacted error text reaches an exception or a
log line (httpx logs each request's URL: its records are redacted too).
"""

from __future__ import annotations

import asyncio
import contextvars
import html
import json
import logging
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, replace
from typing import Any, TypeGuard, TypeVar
from urllib.parse import quote

import aiohttp
from telegram import (
    Bot,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    KeyboardButton,
    LinkPreviewOptions,
    Message,
    ReplyKeyboardMarkup,
    Update,
    User,
)
from telegram.constants import ChatAction, ParseMode
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Conflict,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
from telegram.request import HTTPXRequest

from adapters.base import (
    button_title,
    json_body,
    secrets_equal,
    send_parts,
    split_text,
)
from bot.core.citations import source_links
from bot.core.errors import ConfigError, SendError, WebhookAuthError, WebhookPayloadError
from bot.core.messages import (
    Capabilities,
    InboundKind,
    InboundMessage,
    OutboundReply,
    RawRequest,
    SendResult,
)
from bot.core.settings import TelegramSettings
from bot.core.types import Channel

log = logging.getLogger(__name__)

# PTB 22 warns (PTBDeprecationWarning, in RetryAfter's constructor) unless durations are opted in
# to datetime.timedelta, their type from its next major version on (read at each use).
os.environ.setdefault("PTB_TIMEDELTA", "true")

T = TypeVar("T")

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 (a header name)
# sendMessage: "1-4096 characters after entities parsing" (core.telegram.org/bots/api#sendmessage)
MESSAGE_LIMIT = 4096
SOURCE_BUTTONS = 5  # link buttons under a reply, one per source
BUTTON_TITLE_MAX = 60
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
# A bot token in a URL: ".../bot123456:AA-b_c/sendMessage".
_TOKEN_IN_URL = re.compile(r"/bot\d+:[A-Za-z0-9_-]+")

Deliver = Callable[[list[InboundMessage]], Awaitable[None]]


# -- reading updates ----------------------------------------------------------------------------


def parse_update(data: Any) -> list[InboundMessage]:
    """The one message an Update carries; ``WebhookPayloadError`` if it is not an Update."""
    if not isinstance(data, dict):
        raise WebhookPayloadError("a Telegram update must be a JSON object")
    if not _is_int(data.get("update_id")):  # PTB would take "1"
        raise WebhookPayloadError("a Telegram update must have an integer update_id")
    for key in ("message", "edited_message"):
        if key in data and not isinstance(data[key], dict):
            raise WebhookPayloadError(f"a Telegram {key} must be a JSON object")
    try:
        update = Update.de_json(data, bot=None)  # copies what it reads: ``data`` stays as it came
    except Exception as exc:  # PTB's constructors raise whatever a missing or odd field causes
        raise WebhookPayloadError(
            f"not a Telegram update: {type(exc).__name__}: {exc}"[:300]
        ) from exc
    event_id = str(update.update_id)
    if update.message is not None:
        return [_message(event_id, update.message, update, data)]
    if update.edited_message is not None:
        # Stored, not answered: the answer to the first version has been sent already.
        edited = _message(event_id, update.edited_message, update, data)
        return [replace(edited, kind="event")]
    return [_other(event_id, update, data)]


def _message(
    event_id: str, message: Message, update: Update, raw: dict[str, Any]
) -> InboundMessage:
    # PTB does not check types: a message without a chat or with a string id passes.
    chat: Any = message.chat
    if chat is None or not _is_int(chat.id):
        raise WebhookPayloadError("a Telegram message must have an integer chat.id")
    text = message.text
    kind: InboundKind
    if text is not None:
        if not isinstance(text, str):
            raise WebhookPayloadError("a Telegram message's text must be a string")
        command = _COMMAND.match(text)
        kind, text = ("command", f"/{command[1]}") if command else ("text", text)
    elif any(getattr(message, key, None) for key in _MEDIA):
        caption = message.caption
        kind, text = "unsupported", caption if isinstance(caption, str) else ""
    else:  # a service message: someone joined, a pin, a chat photo changed...
        kind, text = "event", ""
    sender = message.from_user
    locale = sender.language_code if sender is not None else None
    return InboundMessage(
        channel="telegram",
        event_id=event_id,
        external_user_id=str(chat.id),
        kind=kind,
        text=text,
        sent_at=message.date,
        user_name=_name(sender),
        locale=locale if isinstance(locale, str) else None,
        raw=raw,
    )


def _other(event_id: str, update: Update, raw: dict[str, Any]) -> InboundMessage:
    """A callback query, a chat member change, a channel post...: kept, not answered."""
    # The update's one payload object: its JSON key is PTB's attribute name.
    key = next((k for k in raw if k != "update_id"), None)
    payload = getattr(update, key, None) if key is not None else None
    chat, person = update.effective_chat, update.effective_user
    who = chat.id if chat is not None and _is_int(chat.id) else None
    if who is None and person is not None and _is_int(person.id):
        who = person.id
    sent_at = getattr(payload, "date", None)
    return InboundMessage(
        channel="telegram",
        event_id=event_id,
        external_user_id=str(who) if who is not None else "unknown",
        kind="event",
        sent_at=sent_at if sent_at is not None and hasattr(sent_at, "tzinfo") else None,
        user_name=_name(person),
        raw=raw,
    )


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _name(user: User | None) -> str | None:
    if user is None:
        return None
    names = [user.first_name, user.last_name]
    return " ".join(n for n in names if isinstance(n, str) and n) or None


# -- the adapter --------------------------------------------------------------------------------


class TelegramAdapter:
    channel: Channel = "telegram"
    capabilities = Capabilities()

    def __init__(self, settings: TelegramSettings) -> None:
        self.settings = settings
        self._client: _Client | None = None

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

    def _bot(self) -> _Client:
        """The adapter's Bot API client, made on first use (``ConfigError`` without a token)."""
        if self._client is None:
            self._client = _Client(self.settings)
        return self._client

    async def aclose(self) -> None:
        """Close the Bot API client's connections (the adapter may be used again after)."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def send(self, http: aiohttp.ClientSession, reply: OutboundReply) -> SendResult:
        """Send ``reply`` with the adapter's ``telegram.Bot``; ``http`` is not used (the
        signature is the one all adapters share)."""
        # The sources become link buttons under the last part, not lines of URLs.
        text, sources = source_links(reply.text)
        if sources is not None and len(sources.links) > SOURCE_BUTTONS:
            text, sources = reply.text, None  # more sources than buttons: all of them as text
        # The limit counts the text after entity parsing: split the plain text, then escape.
        parts = split_text(text, MESSAGE_LIMIT)
        if not parts:
            raise SendError("telegram sendMessage: the reply is empty", retryable=False)
        client = self._bot()

        async def send_one(index: int, part: str) -> str | None:
            markup: ReplyKeyboardMarkup | InlineKeyboardMarkup | None = None
            if sources is not None and index == len(parts) - 1:
                markup = InlineKeyboardMarkup(
                    [
                        [InlineKeyboardButton(button_title(link, BUTTON_TITLE_MAX), url=link.url)]
                        for link in sources.links[:SOURCE_BUTTONS]
                    ]
                )
            elif reply.quick_replies and index == len(parts) - 1:
                # Tapping a button sends its text as the user's next question.
                markup = ReplyKeyboardMarkup(
                    [[KeyboardButton(q)] for q in reply.quick_replies],
                    one_time_keyboard=True,
                    resize_keyboard=True,
                )
            sent = await client.call(
                "sendMessage",
                client.bot.send_message(
                    chat_id=_chat_id(reply.external_user_id),
                    text=html.escape(part, quote=False),
                    parse_mode=ParseMode.HTML,
                    link_preview_options=LinkPreviewOptions(is_disabled=True),
                    reply_markup=markup,
                ),
            )
            return str(sent.message_id)

        return await send_parts(parts, reply.first_part, send_one)

    async def typing(self, http: aiohttp.ClientSession, external_user_id: str) -> None:
        """``sendChatAction`` typing (``http`` is not used, as in ``send``)."""
        try:
            client = self._bot()
            await client.call(
                "sendChatAction",
                client.bot.send_chat_action(
                    chat_id=_chat_id(external_user_id), action=ChatAction.TYPING, read_timeout=10.0
                ),
            )
        except (SendError, ConfigError) as exc:
            log.debug("telegram typing indicator not shown: %s", exc)


def _chat_id(external_user_id: str) -> int | str:
    """Chat ids are integers; a channel may also be addressed as "@name"."""
    try:
        return int(external_user_id)
    except ValueError:
        return external_user_id


# -- calling the Bot API ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Failure:
    """What Telegram answered to a failed call: PTB's exceptions keep neither the HTTP status
    nor the description as sent ("Bad Request: chat not found" becomes "Chat not found")."""

    status: int
    description: str | None
    retry_after: float | None


# Set by ``_Request`` in the calling task's context (PTB awaits the request in that task).
_last_failure: contextvars.ContextVar[_Failure | None] = contextvars.ContextVar(
    "telegram_last_failure", default=None
)


class _Request(HTTPXRequest):
    async def do_request(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        status, payload = await super().do_request(*args, **kwargs)
        if not 200 <= status <= 299:
            _last_failure.set(_failure(status, payload))
        return status, payload


def _failure(status: int, payload: bytes) -> _Failure:
    try:
        body = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return _Failure(status, None, None)
    if not isinstance(body, dict):
        return _Failure(status, None, None)
    code = body.get("error_code")
    description = body.get("description")
    parameters = body.get("parameters")
    retry_after = parameters.get("retry_after") if isinstance(parameters, dict) else None
    return _Failure(
        code if _is_int(code) else status,
        description if isinstance(description, str) and description else None,
        float(retry_after) if isinstance(retry_after, int | float) else None,
    )


class _Bot(Bot):
    async def get_update_dicts(
        self,
        offset: int | None,
        timeout: int,  # noqa: ASYNC109 (getUpdates' own parameter)
        read_timeout: float,
    ) -> Any:
        """getUpdates' result as Telegram sent it. ``Bot.get_updates`` turns the batch into
        Update objects, which loses the JSON as received and fails the whole batch on one update
        it cannot read (``do_api_request("getUpdates")`` warns to use ``get_updates``)."""
        return await self._post(
            "getUpdates", {"offset": offset, "timeout": timeout}, read_timeout=read_timeout
        )


class _Client:
    """A ``telegram.Bot`` pointed at ``settings.api_base``, and PTB's errors as ``SendError``."""

    def __init__(self, settings: TelegramSettings) -> None:
        if settings.token is None:
            raise ConfigError("no Telegram bot token: set TUVAN_TELEGRAM__TOKEN")
        self.token = settings.token.get_secret_value()
        base = settings.api_base.rstrip("/")
        # Sends wait up to 30 s for an answer (PTB's default is 5 s); getUpdates adds its own.
        self._request = _Request(read_timeout=30.0)
        self.bot = _Bot(
            self.token,
            base_url=f"{base}/bot",
            base_file_url=f"{base}/file/bot",
            request=self._request,
            get_updates_request=self._request,
        )
        _guard_httpx_log()

    async def aclose(self) -> None:
        # Bot.shutdown only closes what Bot.initialize opened, and initialize is not called (it
        # would call getMe first, and names the token in its error): close the client as well.
        await self.bot.shutdown()
        await self._request.shutdown()

    async def call(self, method: str, work: Awaitable[T]) -> T:
        """The result of ``work`` (a call of ``self.bot``), or ``SendError``."""
        _last_failure.set(None)
        try:
            return await work
        except TelegramError as exc:
            raise _send_error(method, exc, _last_failure.get(), self.token) from None
        finally:
            _last_failure.set(None)


def _send_error(method: str, exc: TelegramError, failure: _Failure | None, token: str) -> SendError:
    """PTB's exception as a ``SendError``: retryable for 429 (``RetryAfter``), 5xx and the network
    (``NetworkError``, ``TimedOut``); not for 400, 401/404, 403 and 409. Not chained: httpx's text
    for some errors is the URL, and the URL holds the token."""
    what = f"telegram {method}"
    status = failure.status if failure is not None else None
    description = _redact(
        failure.description if failure is not None and failure.description else exc.message,
        token,
    )
    retryable: bool
    retry_after: float | None = None
    if isinstance(exc, RetryAfter):
        status, retryable = status or 429, True
        retry_after = failure.retry_after if failure is not None else None
    elif isinstance(exc, Forbidden):
        status, retryable = status or 403, False
    elif isinstance(exc, InvalidToken):
        status, retryable = status or 401, False
    elif isinstance(exc, BadRequest | ChatMigrated):
        status, retryable = status or 400, False
    elif isinstance(exc, Conflict):
        status, retryable = status or 409, False
    elif isinstance(exc, TimedOut):
        retryable = True
    elif isinstance(exc, NetworkError):  # PTB's error for 5xx and for a failed connection
        retryable = status is None or status == 429 or status >= 500
    else:  # e.g. a body that is not JSON
        retryable = status is not None and (status == 429 or status >= 500)
    if status is None:
        message = f"{what}: {type(exc).__name__}: {description}"
    else:
        message = f"{what}: HTTP {status}: {description}"
    return SendError(
        message[:500],
        retryable=retryable,
        retry_after=retry_after,
        status=status,
        code=str(status) if status is not None else None,
    )


def _redact(text: str, token: str) -> str:
    return text.replace(token, "<token>").replace(quote(token), "<token>")


class _RedactTokens(logging.Filter):
    """httpx logs every request's URL at INFO: keep the bot token out of those records."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "/bot" in message:
            record.msg, record.args = _TOKEN_IN_URL.sub("/bot<token>", message), ()
        return True


def _guard_httpx_log() -> None:
    logger = logging.getLogger("httpx")
    if not any(isinstance(f, _RedactTokens) for f in logger.filters):
        logger.addFilter(_RedactTokens())


@asynccontextmanager
async def _client(settings: TelegramSettings) -> AsyncIterator[_Client]:
    client = _Client(settings)
    try:
        yield client
    finally:
        await client.aclose()


def check_secret_token(secret: str) -> None:
    if not _SECRET_TOKEN.fullmatch(secret):
        raise ConfigError(
            "TUVAN_TELEGRAM__SECRET_TOKEN must be 1-256 characters of A-Z, a-z, 0-9, _ and - "
            "(Telegram's rule for setWebhook's secret_token)"
        )


async def set_webhook(
    http: aiohttp.ClientSession, settings: TelegramSettings, url: str, *, drop_pending: bool = False
) -> None:
    """Have Telegram post updates to ``url``, with our secret in every request's header.
    (``http`` is not used: the call goes through a ``telegram.Bot`` of its own.)"""
    if settings.secret_token is None:
        raise ConfigError(
            "no webhook secret: set TUVAN_TELEGRAM__SECRET_TOKEN (1-256 characters of A-Z, a-z, "
            "0-9, _ and -) so that tuvan can tell Telegram's requests from forged ones"
        )
    secret = settings.secret_token.get_secret_value()
    check_secret_token(secret)
    async with _client(settings) as client:
        await client.call(
            "setWebhook",
            client.bot.set_webhook(url, secret_token=secret, drop_pending_updates=drop_pending),
        )


async def delete_webhook(
    http: aiohttp.ClientSession, settings: TelegramSettings, *, drop_pending: bool = False
) -> None:
    """Stop Telegram's posts (``http`` is not used, as in ``set_webhook``)."""
    async with _client(settings) as client:
        await client.call(
            "deleteWebhook", client.bot.delete_webhook(drop_pending_updates=drop_pending)
        )


async def get_updates(
    http: aiohttp.ClientSession | None,
    settings: TelegramSettings,
    offset: int | None,
    timeout: int,  # noqa: ASYNC109 (getUpdates' own parameter: how long Telegram holds the call)
    *,
    client: _Client | None = None,
) -> list[dict[str, Any]]:
    """Updates from ``offset`` on (which confirms those before it), waiting up to ``timeout`` s,
    as the JSON Telegram sent. ``client`` (``poll``'s) is used if given, else one for this call;
    ``http`` is not used."""
    if client is None:
        async with _client(settings) as own:
            return await get_updates(http, settings, offset, timeout, client=own)
    result = await client.call(
        "getUpdates",
        client.bot.get_update_dicts(offset, timeout, read_timeout=timeout + 15.0),
    )
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
    async with _client(settings) as client:
        await _poll(settings, client, deliver, stop, timeout, backoff_max_s)


async def _poll(
    settings: TelegramSettings,
    client: _Client,
    deliver: Deliver,
    stop: asyncio.Event,
    timeout: int,  # noqa: ASYNC109 (see poll)
    backoff_max_s: float,
) -> None:
    offset: int | None = None
    delay = 1.0
    while not stop.is_set():
        wait = delay
        try:
            fetch = get_updates(None, settings, offset, timeout, client=client)
            updates = await _unless_stopped(fetch, stop)
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
