"""The web process's application: ``create_app`` puts the routes together and pairs every
resource it opens with its release in ``cleanup_ctx``.

Routes: platform webhooks (``webhooks``), ``/healthz`` and ``/metrics`` (``ops``), the one-shot
``/api/ask`` (``ask``), the web chat (``webchat``, unless ``TUVAN_WEB__ENABLED=false``) and the
staff pages under ``/admin`` (unless ``TUVAN_ADMIN__ENABLED=false``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack

import aiohttp
from aiohttp import web

from adapters.interface import Adapter
from admin.app import create_admin_app
from bot.channels.wiring import http_session, open_adapters
from bot.keys import ADAPTERS, HTTP, RUNTIME
from bot.runtime import Runtime
from bot.web.ask import setup_ask
from bot.web.ops import setup_ops
from bot.web.webchat.handlers import setup_webchat
from bot.web.webhooks import setup_webhooks

CleanupContext = Callable[[web.Application], AsyncIterator[None]]


def create_app(
    runtime: Runtime,
    adapters: Mapping[str, Adapter] | None = None,
    http: aiohttp.ClientSession | None = None,
) -> web.Application:
    """The application over ``runtime`` (which the caller opens and closes).

    The client session for platform APIs and the adapters of the configured channels are
    opened when the app starts and closed when it stops; a caller that passes its own
    ``http`` or ``adapters`` (tests, a process that shares them with a worker) keeps them.
    """
    app = web.Application(client_max_size=runtime.settings.max_body_bytes)
    app[RUNTIME] = runtime
    if http is not None:
        app[HTTP] = http
    if adapters is not None:
        app[ADAPTERS] = dict(adapters)
    if http is None or adapters is None:
        app.cleanup_ctx.append(_platforms(runtime))
    setup_ops(app)
    setup_ask(app)
    setup_webhooks(app)
    if runtime.settings.web.enabled:
        setup_webchat(app)
    if runtime.settings.admin.enabled:
        app.add_subapp("/admin", create_admin_app())
    return app


def _platforms(runtime: Runtime) -> CleanupContext:
    """Open what the caller did not pass: the client session, then the adapters on it."""

    async def platforms(app: web.Application) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if HTTP not in app:
                app[HTTP] = await stack.enter_async_context(http_session())
            if ADAPTERS not in app:
                app[ADAPTERS] = await stack.enter_async_context(
                    open_adapters(runtime.settings, runtime.sessionmaker, app[HTTP])
                )
            yield

    return platforms
