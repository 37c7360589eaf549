"""What operators look at: ``GET /healthz`` (the database answers) and ``GET /metrics``
(Prometheus text: the process's counters and the depth of both queues).

``/healthz`` is public and says only ``ok`` or ``unavailable``: why goes to the log, not to
whoever asks. ``/metrics`` answers ``Authorization: Bearer <TUVAN_METRICS_TOKEN>`` (401
otherwise), or, with no token set, clients on this host that did not come through a proxy
(403 otherwise).
"""

from __future__ import annotations

import logging

from aiohttp import web
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from bot.conversations.queue import queue_depths
from bot.core.metrics import METRICS
from bot.keys import RUNTIME
from bot.web.access import UNAUTHORIZED_HEADERS, forwarded, metrics_refusal

log = logging.getLogger(__name__)


async def healthz(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    try:
        async with runtime.sessionmaker() as session:
            await session.execute(text("SELECT 1"))
    except (SQLAlchemyError, OSError):
        log.exception("healthz: the database does not answer")
        return web.json_response(
            {"status": "unavailable"}, status=503, headers={"Cache-Control": "no-store"}
        )
    return web.json_response({"status": "ok"}, headers={"Cache-Control": "no-store"})


async def metrics(request: web.Request) -> web.Response:
    refusal = metrics_refusal(
        request.app[RUNTIME].settings.metrics_token,
        request.headers.get("Authorization"),
        request.remote,  # the connection's peer, never a header
        proxied=forwarded(request),
    )
    if refusal == 401:
        raise web.HTTPUnauthorized(headers=UNAUTHORIZED_HEADERS)
    if refusal is not None:
        raise web.HTTPForbidden()
    gauges: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    try:
        async with request.app[RUNTIME].sessionmaker() as session:
            depths = await queue_depths(session)
        gauges["tuvan_queue_depth"] = {
            (("queue", "inbox"),): float(depths.inbox),
            (("queue", "outbox"),): float(depths.outbox),
        }
    except (SQLAlchemyError, OSError) as exc:
        log.warning("metrics: queue depths unavailable: %s", exc)
    return web.Response(
        text=METRICS.render(gauges),
        content_type="text/plain",
        charset="utf-8",
        headers={"X-Content-Type-Options": "nosniff"},
    )


def setup_ops(app: web.Application) -> None:
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
