"""channels_load's load generator: the process that posts Telegram updates to serve's webhook (at a
rate, or as a burst with a bound on requests in flight) and writes each ack's latency and
status for the bench to read."""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from pathlib import Path

import aiohttp

SECRET = "bench-secret_0123456789"


def update(update_id: int, chat: int, question: str) -> bytes:
    return json.dumps(
        {
            "update_id": update_id,
            "message": {
                "message_id": update_id,
                "date": int(time.time()),
                "chat": {"id": chat, "type": "private", "first_name": "Bench"},
                "from": {"id": chat, "is_bot": False, "first_name": "Bench"},
                "text": question,
            },
        },
        ensure_ascii=False,
    ).encode()


async def generate(args: argparse.Namespace, questions: list[str]) -> None:
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET, "Content-Type": "application/json"}
    url = f"{args.url}/webhooks/telegram"
    rng = random.Random(7)
    bodies = [
        update(args.first_id + i, 1_000_000 + rng.randrange(500), rng.choice(questions))
        for i in range(args.count)
    ]
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    connector = aiohttp.TCPConnector(limit=args.in_flight)
    async with aiohttp.ClientSession(connector=connector) as http:

        async def send(body: bytes) -> None:
            started = time.perf_counter()
            async with http.post(url, data=body, headers=headers) as response:
                await response.read()
                statuses[response.status] = statuses.get(response.status, 0) + 1
            latencies.append((time.perf_counter() - started) * 1000)

        started = time.perf_counter()
        if args.rate:
            tasks = []
            for i, body in enumerate(bodies):
                due = started + i / args.rate
                delay = due - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(send(body)))
            await asyncio.gather(*tasks)
        else:
            queue = list(reversed(bodies))

            async def lane() -> None:
                while queue:
                    await send(queue.pop())

            await asyncio.gather(*(lane() for _ in range(args.in_flight)))
        elapsed = time.perf_counter() - started
    results = {"latencies_ms": latencies, "seconds": elapsed, "statuses": statuses}
    await asyncio.to_thread(Path(args.out).write_text, json.dumps(results), encoding="utf-8")
