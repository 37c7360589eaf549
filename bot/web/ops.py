"""What operators look at: ``GET /healthz`` (the database answers) and ``GET /metrics``
(Prometheus text: the process's counters and the depth of both queues)."""

from __future__ import annotations

import logging

from aiohttp import web
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from bot.conversations.queue import queue_depths
from bot.core.metrics import METRICS
from bot.keys import RUNTIME

log = logging.getLogger(__name__)


async def healthz(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    try:
        async with runtime.sessionmaker() as session:
            await session.execute(text("SELECT 1"))
    except (SQLAlchemyError, OSError) as exc:
        return web.json_response({"status": "unavailable", "database": str(exc)[:200]}, status=503)
    return web.json_response({"status": "ok"})


async def metrics(request: web.Request) -> web.Response:
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
