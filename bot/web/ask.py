"""``POST /api/ask {"question": ...}``: one answer as JSON, nothing stored (tools, tests).

Off unless ``TUVAN_WEB__ASK_TOKEN`` is set (404), and then only for ``Authorization: Bearer
<token>`` (401): the answer carries scores, thresholds and chunk ids, which are for the staff's
tools, not the public. Its sources are named by title and web address, never by a server path.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from bot.core.citations import public_citation
from bot.keys import RUNTIME
from bot.web.access import UNAUTHORIZED_HEADERS, bearer_matches

ASK_MAX_BODY = 64 * 1024


async def ask(request: web.Request) -> web.Response:
    token = request.app[RUNTIME].settings.web.ask_token
    if token is None or not token.get_secret_value():  # TUVAN_WEB__ASK_TOKEN= is unset too
        raise web.HTTPNotFound()
    if not bearer_matches(request, token):
        return _json_error(401, "a valid bearer token is required", UNAUTHORIZED_HEADERS)
    raw = await request.content.read(ASK_MAX_BODY + 1)
    if len(raw) > ASK_MAX_BODY:
        return _json_error(413, f"the request body is over {ASK_MAX_BODY} bytes")
    try:
        body = json.loads(raw)
        question = body["question"]
        if not isinstance(question, str):
            raise TypeError("question must be a string")
    except (ValueError, RecursionError, KeyError, TypeError) as exc:  # "[[[[…": RecursionError
        return _json_error(400, f'expected {{"question": "..."}}: {exc}')
    answer = await request.app[RUNTIME].answerer.answer(question)
    payload: dict[str, Any] = answer.to_json()
    payload["citations"] = [public_citation(c) for c in answer.citations]
    payload["related"] = [public_citation(c) for c in answer.related]
    return web.json_response(payload, dumps=lambda o: json.dumps(o, ensure_ascii=False))


def _json_error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"error": message}, status=status, headers=headers)


def setup_ask(app: web.Application) -> None:
    app.router.add_post("/api/ask", ask)
