"""How fast a staff reply reaches open web chats, and what many open chats cost.

``--pages`` visitors each have a conversation and an open page long-polling
``GET /api/chat/updates`` on one serve process (the web chat app on 127.0.0.1); staff then reply
in ``--replies`` of those conversations, one at a time, each committed on its own connection as
the admin of another serve process would. For each reply: the time from its commit to the held
request's answer at the client. Meanwhile the other pages stay held: the report says how many
came back early (none should) and the database queries the updates route made.

    .venv/bin/python bench/handover_latency.py [--pages 500] [--replies 30] [--quick]

``--quick`` (a smoke run): 20 pages, 3 replies.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestServer
from common import bench_database, bench_settings, machine, percentiles, server_version
from sqlalchemy import event

from bot.answer.answerer import Answerer
from bot.conversations.store import queue_staff_reply, upsert_conversation
from bot.keys import RUNTIME
from bot.runtime import Runtime, build_parts
from bot.web.webchat.handlers import setup_webchat


async def main(args: argparse.Namespace) -> None:
    settings = bench_settings()
    async with bench_database(pool_size=10) as (engine, sm):
        parts = build_parts(settings)
        runtime = Runtime(settings, engine, sm, parts, Answerer(parts, sm))
        app = web.Application()
        app[RUNTIME] = runtime
        chat = setup_webchat(app)
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        await asyncio.wait_for(chat.watch.ready(), 10)

        visitors = [uuid.uuid4().hex for _ in range(args.pages)]
        conversations = {}
        async with sm.begin() as session:
            for v in visitors:
                conversations[v] = await upsert_conversation(session, "web", v)

        queries = 0

        def count(*_: Any) -> None:
            nonlocal queries
            queries += 1

        event.listen(engine.sync_engine, "before_cursor_execute", count)

        answered_at: dict[str, float] = {}
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as http:

            async def page(visitor: str) -> None:
                async with http.get(
                    server.make_url("/api/chat/updates?since=0"),
                    headers={"X-Visitor-Id": visitor},
                ) as response:
                    body = await response.json()
                    if body["changed"]:
                        answered_at[visitor] = time.perf_counter()

            held = {v: asyncio.create_task(page(v)) for v in visitors}
            for _ in range(1200):  # until every page is held (a minute at most)
                if chat.watch.held >= args.pages:
                    break
                await asyncio.sleep(0.05)
            start_queries = queries

            latencies = []
            for visitor in visitors[: args.replies]:
                async with sm.begin() as session:
                    await queue_staff_reply(session, conversations[visitor], "Chào em", "s@x.vn")
                committed = time.perf_counter()
                await held[visitor]
                latencies.append((answered_at[visitor] - committed) * 1000)
            early = sum(1 for v in visitors[args.replies :] if held[v].done())
            still_held = chat.watch.held
            await chat.watch.stop()
            await asyncio.gather(*held.values(), return_exceptions=True)
        await server.close()

        p = percentiles(latencies)
        print(f"# handover latency · {machine()} · PostgreSQL {await server_version(engine)}")
        print(f"open pages held: {args.pages}; replies: {args.replies}")
        print(
            f"commit → page answered: p50 {p['p50']:.1f} ms, p95 {p['p95']:.1f} ms, "
            f"max {max(latencies):.1f} ms"
        )
        print(f"other pages answered early: {early}; still held after the replies: {still_held}")
        print(
            f"SQL statements: {start_queries} to hold {args.pages} pages, "
            f"{queries - start_queries} for {args.replies} replies (their inserts included)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--replies", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 20 pages, 3 replies")
    args = parser.parse_args()
    if args.quick:
        args.pages, args.replies = 20, 3
    asyncio.run(main(args))
