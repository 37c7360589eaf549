"""A fake Telegram Bot API on loopback: records every call, answers like the real one.

    api = await start_telegram_api(token="123:abc")
    settings = api.settings(secret_token="s3cret")        # TelegramSettings pointing here
    api.fail("sendMessage", 429, "Too Many Requests: retry after 7", retry_after=7)
    api.fail("sendMessage", 502, body="<html>Bad Gateway</html>")   # not JSON
    api.push_update({"update_id": 1, "message": {...}})  # served by getUpdates
    ...
    api.calls_to("sendMessage")[0].body["text"]; api.webhook; api.offsets
    await api.close()

Endpoints under ``/bot<token>/``: ``sendMessage`` (checks the HTML parse mode like Telegram:
only its tags, only ``&lt; &gt; &amp; &quot;`` and numeric entities, at most 4096 characters
after entity parsing; an inline keyboard's ``callback_data`` at most 64 bytes),
``answerCallbackQuery`` (text at most 200 characters), ``editMessageReplyMarkup``,
``sendChatAction``, ``setWebhook``, ``deleteWebhook``, ``getWebhookInfo``,
``getUpdates`` (confirms updates below ``offset``, waits up to ``timeout`` s for new ones, 409
while a webhook is set), ``getMe``. Bodies may be JSON, form-encoded or multipart (PTB's
format); another token gets 401.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from pydantic import SecretStr

from bot.core.settings import TelegramSettings

_TAG = re.compile(
    r"</?(b|strong|i|em|u|ins|s|strike|del|a|code|pre|tg-spoiler|span|blockquote|tg-emoji)"
    r"(\s[^<>]*)?>"
)
_ENTITY = re.compile(r"&(lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);")
_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")
# Parameters that are strings whatever they look like ("42" as a message text stays a string).
_STRING_FIELDS = frozenset(
    {"text", "caption", "url", "secret_token", "action", "parse_mode", "callback_query_id"}
)


@dataclass(frozen=True)
class BotApiCall:
    method: str
    token: str
    body: dict[str, Any]


@dataclass
class ScriptedError:
    method: str | None  # None: any method
    status: int
    description: str
    retry_after: float | None
    body: str | None  # a raw body instead of the Bot API's JSON error


@dataclass
class FakeTelegramApi:
    token: str
    calls: list[BotApiCall] = field(default_factory=list)
    api_base: str = ""
    webhook: dict[str, Any] | None = None
    offsets: list[int | None] = field(default_factory=list)  # of each getUpdates, in order
    _pending: list[dict[str, Any]] = field(default_factory=list)
    _errors: deque[ScriptedError] = field(default_factory=deque)
    _next_message_id: int = 100
    _runner: web.AppRunner | None = None

    # -- scripting ----------------------------------------------------------------------------

    def settings(self, **values: Any) -> TelegramSettings:
        secret = values.pop("secret_token", None)
        return TelegramSettings(
            token=SecretStr(self.token),
            secret_token=SecretStr(secret) if secret is not None else None,
            api_base=self.api_base,
            **values,
        )

    def fail(
        self,
        method: str | None,
        status: int,
        description: str = "fake failure",
        *,
        retry_after: float | None = None,
        body: str | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next ``times`` calls of ``method`` (or of any method) with an error."""
        for _ in range(times):
            self._errors.append(ScriptedError(method, status, description, retry_after, body))

    def push_update(self, update: dict[str, Any]) -> None:
        self._pending.append(update)

    def calls_to(self, method: str) -> list[BotApiCall]:
        return [c for c in self.calls if c.method == method]

    # -- serving ------------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        return app

    async def close(self) -> None:
        runner, self._runner = self._runner, None  # ends pending long polls
        if runner is not None:
            await runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        method = request.match_info["method"]
        body = await _body(request)
        self.calls.append(BotApiCall(method, token, body))
        if token != self.token:
            return _error(401, "Unauthorized")
        for scripted in self._errors:
            if scripted.method in (None, method):
                self._errors.remove(scripted)
                if scripted.body is not None:
                    return web.Response(status=scripted.status, text=scripted.body)
                return _error(scripted.status, scripted.description, scripted.retry_after)
        if method == "getUpdates":
            return await self._get_updates(request, body)
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            return _error(404, "Not Found")
        response: web.Response = await handler(body)
        return response

    async def _m_getMe(self, body: dict[str, Any]) -> web.Response:
        return _ok({"id": int(self.token.split(":")[0]), "is_bot": True, "first_name": "Fake"})

    async def _m_sendMessage(self, body: dict[str, Any]) -> web.Response:
        text = str(body.get("text", ""))
        if body.get("parse_mode") == "HTML":
            bare = _TAG.sub("", text)
            if "<" in bare or ">" in bare:
                return _error(400, "Bad Request: can't parse entities: Unsupported start tag")
            if "&" in _ENTITY.sub("", bare):
                return _error(400, "Bad Request: can't parse entities: unescaped &")
            text = html.unescape(bare)
        if not text.strip():
            return _error(400, "Bad Request: message text is empty")
        if len(text) > 4096:
            return _error(400, "Bad Request: message is too long")
        if (problem := _keyboard_problem(body.get("reply_markup"))) is not None:
            return _error(400, problem)
        self._next_message_id += 1
        sent = {
            "message_id": self._next_message_id,
            "date": int(time.time()),
            "chat": {"id": _int(body.get("chat_id")), "type": "private"},
            "text": text,
        }
        markup = body.get("reply_markup")
        if isinstance(markup, dict) and "inline_keyboard" in markup:  # a Message shows only these
            sent["reply_markup"] = markup
        return _ok(sent)

    async def _m_answerCallbackQuery(self, body: dict[str, Any]) -> web.Response:
        if not isinstance(body.get("callback_query_id"), str):
            return _error(400, "Bad Request: query is too old and response timeout expired")
        if len(str(body.get("text", ""))) > 200:
            return _error(400, "Bad Request: MESSAGE_TOO_LONG")
        return _ok(True)

    async def _m_editMessageReplyMarkup(self, body: dict[str, Any]) -> web.Response:
        if body.get("chat_id") is None or body.get("message_id") is None:
            return _error(400, "Bad Request: message to edit not found")
        if (problem := _keyboard_problem(body.get("reply_markup"))) is not None:
            return _error(400, problem)
        return _ok({"message_id": _int(body["message_id"]), "date": int(time.time())})

    async def _m_sendChatAction(self, body: dict[str, Any]) -> web.Response:
        return _ok(True)

    async def _m_setWebhook(self, body: dict[str, Any]) -> web.Response:
        if not body.get("url"):
            return _error(400, "Bad Request: bad webhook: URL is empty")
        secret = body.get("secret_token")
        if secret is not None and not _SECRET.fullmatch(str(secret)):
            return _error(400, "Bad Request: secret token contains unallowed characters")
        if _truthy(body.get("drop_pending_updates")):
            self._pending.clear()
        self.webhook = body
        return _ok(True, description="Webhook was set")

    async def _m_deleteWebhook(self, body: dict[str, Any]) -> web.Response:
        if _truthy(body.get("drop_pending_updates")):
            self._pending.clear()
        self.webhook = None
        return _ok(True, description="Webhook was deleted")

    async def _m_getWebhookInfo(self, body: dict[str, Any]) -> web.Response:
        url = self.webhook["url"] if self.webhook else ""
        return _ok({"url": url, "pending_update_count": len(self._pending)})

    async def _get_updates(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        if self.webhook is not None:
            return _error(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        offset = _int(body["offset"]) if "offset" in body else None
        self.offsets.append(offset)
        if offset is not None:  # confirms every update before it
            self._pending = [u for u in self._pending if u["update_id"] >= offset]
        deadline = time.monotonic() + float(body.get("timeout", 0))
        while not self._pending and time.monotonic() < deadline and self._runner is not None:
            if request.transport is None or request.transport.is_closing():
                break  # the client gave up (aiohttp does not cancel the handler)
            await asyncio.sleep(0.02)
        limit = _int(body.get("limit", 100))
        return _ok(self._pending[:limit])


async def _body(request: web.Request) -> dict[str, Any]:
    values: dict[str, Any] = dict(request.query)
    if request.content_type == "application/json":
        raw = await request.read()
        data = json.loads(raw) if raw else {}
        values.update(data if isinstance(data, dict) else {"_json": data})
    elif request.can_read_body:
        form = await request.post()
        for key, value in form.items():
            text = value if isinstance(value, str) else repr(value)
            # PTB sends every value that is not a string JSON-encoded (chat_id=42, true,
            # reply_markup={...}): decode those, keep the fields that are always strings.
            if key in _STRING_FIELDS:
                values[key] = text
                continue
            try:
                values[key] = json.loads(text)
            except ValueError:
                values[key] = text
    return values


def _keyboard_problem(markup: Any) -> str | None:
    """What Telegram says of an inline keyboard it refuses: callback_data is 1-64 bytes."""
    rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
    for row in rows or []:
        for button in row:
            data = button.get("callback_data")
            if data is not None and not 1 <= len(str(data).encode()) <= 64:
                return "Bad Request: BUTTON_DATA_INVALID"
    return None


def _int(value: Any) -> Any:
    try:
        return int(value)
    except (TypeError, ValueError):
        return value


def _truthy(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _ok(result: Any, description: str | None = None) -> web.Response:
    body: dict[str, Any] = {"ok": True, "result": result}
    if description:
        body["description"] = description
    return web.json_response(body)


def _error(status: int, description: str, retry_after: float | None = None) -> web.Response:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if retry_after is not None:
        body["parameters"] = {"retry_after": retry_after}
    return web.json_response(body, status=status)


async def start_telegram_api(token: str = "123456:TEST-token_abcdef") -> FakeTelegramApi:
    """Serve a new fake on 127.0.0.1, on a free port. Close it with ``await api.close()``."""
    api = FakeTelegramApi(token=token)
    runner = web.AppRunner(api.app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    api._runner = runner
    api.api_base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    return api
