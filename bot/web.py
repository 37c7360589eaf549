"""A minimal web chat (``tuvan demo``): one page and a JSON endpoint.

The channels issue replaces this with the real web chat and webhooks; the answerer behind it
is the same.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
from importlib import resources

from aiohttp import web

from bot.runtime import Runtime

log = logging.getLogger(__name__)

RUNTIME = web.AppKey("runtime", Runtime)
MAX_BODY = 64 * 1024


async def index(request: web.Request) -> web.Response:
    page = (resources.files("bot") / "static" / "chat.html").read_text(encoding="utf-8")
    return web.Response(text=page, content_type="text/html", charset="utf-8")


def _error(message: str) -> str:
    return json.dumps({"error": message})


async def ask(request: web.Request) -> web.Response:
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge as exc:  # aiohttp's own reply is plain text
        raise web.HTTPRequestEntityTooLarge(
            MAX_BODY,
            text=_error(f"the request body is over {MAX_BODY} bytes"),
            content_type="application/json",
        ) from exc
    try:
        body = json.loads(raw)
        question = body["question"]
        if not isinstance(question, str):
            raise TypeError("question must be a string")
    except (ValueError, KeyError, TypeError) as exc:
        raise web.HTTPBadRequest(
            text=_error(f"expected {{\"question\": \"...\"}}: {exc}"),
            content_type="application/json",
        ) from exc
    answer = await request.app[RUNTIME].answerer.answer(question)
    return web.json_response(answer.to_json(), dumps=lambda o: json.dumps(o, ensure_ascii=False))


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


def create_app(runtime: Runtime) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY)
    app[RUNTIME] = runtime
    app.router.add_get("/", index)
    app.router.add_post("/api/ask", ask)
    app.router.add_get("/healthz", healthz)
    return app


async def serve(runtime: Runtime, host: str, port: int) -> None:
    runner = web.AppRunner(create_app(runtime), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    print(f"tuvan is ready: http://{host}:{port}  (Ctrl-C stops)", flush=True)
    try:
        await _until_stopped()
    finally:
        await runner.cleanup()


async def _until_stopped() -> None:
    """Wait for SIGINT or SIGTERM (a service manager stops with SIGTERM): returning lets the
    caller release the embedded PostgreSQL, which a default SIGTERM death would leave running."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
