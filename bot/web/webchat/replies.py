"""The web chat API's JSON responses, alike for every route: never cached, with the CORS headers
of an allowed site, errors as ``{"error": …}`` with the header a client needs to retry."""

from __future__ import annotations

from aiohttp import web

from bot.keys import RUNTIME
from bot.web.rate_limits import retry_after
from bot.web.webchat.cors import cors_headers
from bot.web.webchat.protocol import dumps

UNAVAILABLE = "the chat is unavailable for a moment; try again"


def json_reply(
    request: web.Request, payload: object, *, status: int = 200, extra: dict[str, str] | None = None
) -> web.Response:
    settings = request.config_dict[RUNTIME].settings
    headers = {"Cache-Control": "no-store", **cors_headers(request, settings), **(extra or {})}
    return web.json_response(payload, status=status, headers=headers, dumps=dumps)


def error_reply(
    request: web.Request, status: int, message: str, extra: dict[str, str] | None = None
) -> web.Response:
    return json_reply(request, {"error": message}, status=status, extra=extra)


def unavailable(request: web.Request) -> web.Response:
    return error_reply(request, 503, UNAVAILABLE, {"Retry-After": "5"})


def too_many(request: web.Request, message: str, wait_s: float) -> web.Response:
    return error_reply(request, 429, message, {"Retry-After": retry_after(wait_s)})
