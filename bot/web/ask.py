"""``POST /api/ask {"question": ...}``: one answer as JSON, nothing stored (tools, tests)."""

from __future__ import annotations

import json

from aiohttp import web

from bot.keys import RUNTIME

ASK_MAX_BODY = 64 * 1024


async def ask(request: web.Request) -> web.Response:
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
    return web.json_response(answer.to_json(), dumps=lambda o: json.dumps(o, ensure_ascii=False))


def _json_error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def setup_ask(app: web.Application) -> None:
    app.router.add_post("/api/ask", ask)
