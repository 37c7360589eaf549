"""Webhook load: signed Telegram updates into `tuvan serve`, answered by `tuvan worker`.

Everything runs as separate processes on loopback, as in production: an embedded PostgreSQL
(fresh, with the demo FAQ loaded), `tuvan serve` and `tuvan worker` (real commands), the fake
Telegram Bot API (tests/fakes) that receives the replies, and a load generator in its own process
sending Telegram-shaped updates with the secret-token header. Phases:

    1. a fixed rate (default 200 updates/s for 10 s), each update a new question from one of
       500 chats, phrased as the FAQ asks it so the FAQ tier answers;
    2. as fast as it goes (default 64 requests in flight, 5,000 updates);
    3. every update of phase 1 sent again (a platform retry): nothing may be answered twice.

Reported: acks/s, ack latency (request → 200) p50/p99 per phase, answer latency (update stored →
reply accepted by the fake API, from the database's own timestamps) p50/p99, and the final count
of rows: every update stored once, answered once, one reply each — zero lost, zero duplicated.

    .venv/bin/python bench/channels_load.py [--rate 200] [--seconds 10] [--burst 5000]
        [--in-flight 64] [--workers 1] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from channels_load_generator import SECRET, generate
from common import Report, markdown_table, percentiles
from cpu import pid_cpu, server_cpu
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bot.db.engine import make_engine, start_embedded
from tests.fakes.telegram_api import start_telegram_api

ROOT = Path(__file__).resolve().parents[1]
TUVAN = [sys.executable, "-m", "bot.cli"]


# -- the harness ------------------------------------------------------------------------------


async def run_phase(
    label: str,
    url: str,
    questions: Path,
    tmp: Path,
    *,
    first_id: int,
    count: int,
    rate: float | None,
    in_flight: int,
) -> dict[str, Any]:
    out = tmp / f"{label}.json"
    cmd = [
        sys.executable,
        __file__,
        "--generate",
        "--url",
        url,
        "--questions",
        str(questions),
        "--first-id",
        str(first_id),
        "--count",
        str(count),
        "--out",
        str(out),
        "--in-flight",
        str(in_flight),
        "--rate",
        str(rate or 0),
    ]
    process = await asyncio.create_subprocess_exec(*cmd, cwd=ROOT)
    await process.wait()
    data = json.loads(out.read_text(encoding="utf-8"))
    return {
        "phase": label,
        "count": count,
        "acks_per_s": count / data["seconds"],
        "ack_ms": percentiles(data["latencies_ms"]),
        "statuses": data["statuses"],
    }


async def wait_ready(url: str, within_s: float = 120) -> None:
    deadline = time.monotonic() + within_s
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            try:
                async with http.get(f"{url}/healthz") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.5)
    raise SystemExit("tuvan serve did not become ready")


async def main(args: argparse.Namespace) -> None:
    if args.quick:  # a smoke run: every phase, 170 updates
        args.rate, args.seconds, args.burst, args.warmup = 20, 2, 80, 10
    report = Report("channels_load" + ("_quick" if args.quick else ""))
    tmp = Path(tempfile.mkdtemp(prefix="tuvan-load-"))
    server = start_embedded(tmp / "pg")
    telegram = await start_telegram_api()
    port = 18080 + random.randrange(1000)
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "TUVAN_DATABASE_URL": server.url,
        "TUVAN_DATA_DIR": str(tmp / "data"),
        "TUVAN_TELEGRAM__TOKEN": telegram.token,
        "TUVAN_TELEGRAM__SECRET_TOKEN": SECRET,
        "TUVAN_TELEGRAM__API_BASE": telegram.api_base,
        "TUVAN_WEB__ENABLED": "false",
        "TUVAN_LOG_LEVEL": "WARNING",
    }
    processes: list[asyncio.subprocess.Process] = []
    engine = make_engine(server.url)
    try:
        for step in (["db", "upgrade"], ["faq", "import", "bot/knowledge/demo_kb/faq.jsonl"]):
            done = await asyncio.create_subprocess_exec(*TUVAN, *step, env=env, cwd=ROOT)
            if await done.wait() != 0:
                raise SystemExit(f"tuvan {' '.join(step)} failed")
        faq = [
            json.loads(line)
            for line in (ROOT / "bot/knowledge/demo_kb/faq.jsonl").open(encoding="utf-8")
        ]
        questions = tmp / "questions.json"
        questions.write_text(json.dumps([f["question"] for f in faq], ensure_ascii=False), "utf-8")
        processes.append(
            await asyncio.create_subprocess_exec(
                *TUVAN,
                "serve",
                "--port",
                str(port),
                env=env,
                cwd=ROOT,
                stdout=asyncio.subprocess.DEVNULL,
            )
        )
        nice = ["nice", "-n", str(args.worker_nice)] if args.worker_nice else []
        worker_env = dict(env)
        if args.worker_threads:
            worker_env["OMP_NUM_THREADS"] = str(args.worker_threads)
        for _ in range(args.workers):
            processes.append(
                await asyncio.create_subprocess_exec(
                    *nice,
                    *TUVAN,
                    "worker",
                    env=worker_env,
                    cwd=ROOT,
                    stdout=asyncio.subprocess.DEVNULL,
                )
            )
        await wait_ready(url)
        # Warm-up, not reported: the server's first requests open pool connections and prepare
        # statements. Its updates are stored and answered like the others (counted below).
        warm = int(args.warmup)
        if warm:
            await run_phase(
                "warm-up",
                url,
                questions,
                tmp,
                first_id=10_000_000,
                count=warm,
                rate=50,
                in_flight=args.in_flight,
            )
        fixed = int(args.rate * args.seconds)
        serve_pid = processes[0].pid

        async def measured(name: str, first_id: int, count: int, rate: float | None) -> Any:
            """A phase, with serve's and PostgreSQL's CPU per update: comparable between two
            commits on a machine others use too, where acks/s are not."""
            serve_cpu, pg_cpu = pid_cpu(serve_pid), server_cpu(Path(server.handle.pgdata))
            phase = await run_phase(
                name,
                url,
                questions,
                tmp,
                first_id=first_id,
                count=count,
                rate=rate,
                in_flight=args.in_flight,
            )
            phase["serve_cpu_ms"] = round(1000 * (pid_cpu(serve_pid) - serve_cpu) / count, 2)
            phase["postgres_cpu_ms"] = round(
                1000 * (server_cpu(Path(server.handle.pgdata)) - pg_cpu) / count, 2
            )
            return phase

        phases = [
            await measured("fixed rate", 1, fixed, args.rate),
            await measured("as fast as it goes", fixed + 1, args.burst, None),
            await measured("retries of phase 1", 1, fixed, None),
        ]
        total = fixed + args.burst + warm
        started = time.monotonic()
        async with engine.connect() as conn:
            while True:
                pending = (
                    await conn.execute(
                        text(
                            "SELECT count(*) FROM messages WHERE status IN "
                            "('received', 'answering', 'queued', 'sending')"
                        )
                    )
                ).scalar_one()
                # With no worker nothing drains: serve alone is measured by its acks.
                if (
                    pending == 0
                    or not args.workers
                    or time.monotonic() - started > args.drain_timeout
                ):
                    break
                await asyncio.sleep(1)
            drain_s = time.monotonic() - started
            counts = (
                (
                    await conn.execute(
                        text(
                            """
                SELECT
                  count(*) FILTER (WHERE direction = 'in') AS inbound,
                  count(DISTINCT event_id) FILTER (WHERE direction = 'in') AS distinct_events,
                  count(*) FILTER (WHERE direction = 'in' AND status = 'answered') AS answered,
                  count(*) FILTER (WHERE direction = 'out'
                                   AND details->>'notice' IS NULL) AS replies,
                  count(*) FILTER (WHERE direction = 'out' AND status = 'sent') AS sent,
                  count(DISTINCT reply_to_id) FILTER (WHERE direction = 'out') AS replied_to,
                  count(*) FILTER (WHERE direction = 'in' AND status = 'skipped'
                                   AND error LIKE 'held:%') AS held,
                  count(*) FILTER (WHERE direction = 'out'
                                   AND details->>'notice' = 'waiting') AS waiting_notices
                FROM messages
                """
                        )
                    )
                )
                .one()
                ._asdict()
            )
            answer_ms = [
                float(ms)
                for (ms,) in await conn.execute(
                    text(
                        "SELECT extract(epoch FROM o.done_at - i.created_at) * 1000 "
                        "FROM messages o JOIN messages i ON i.id = o.reply_to_id "
                        "WHERE o.status = 'sent'"
                    )
                )
            ]
            tiers = dict(
                (
                    await conn.execute(
                        text(
                            "SELECT coalesce(tier, '-'), count(*) FROM messages "
                            "WHERE direction = 'out' GROUP BY 1"
                        )
                    )
                ).all()
            )
        api_sends = len(telegram.calls_to("sendMessage"))
    finally:
        for p in processes:
            if p.returncode is None:
                p.terminate()
        for p in processes:
            await p.wait()
        await engine.dispose()
        await telegram.close()
        server.release()

    lost = total - counts["inbound"]
    duplicated = (
        (counts["inbound"] - counts["distinct_events"])
        + (counts["replies"] - counts["replied_to"])
        + (api_sends - counts["sent"])
    )
    report.data.update(
        {
            "phases": phases,
            "updates": total,
            "counts": counts,
            "fake_api_sends": api_sends,
            "answer_ms": percentiles(answer_ms),
            "drain_s": drain_s,
            "tiers": tiers,
            "lost": lost,
            "duplicated": duplicated,
            "workers": args.workers,
            "worker_nice": args.worker_nice,
            "worker_threads": args.worker_threads,
        }
    )
    report.print_header(
        [
            f"tuvan serve (1 process) + tuvan worker ({args.workers} process, nice "
            f"{args.worker_nice}, embedder threads {args.worker_threads or 'default'}) + embedded "
            "PostgreSQL + fake Telegram API + load generator, all on this machine, loopback",
            f"{total:,} distinct updates from 500 chats ({warm} at 50/s to warm up, {fixed:,} at "
            f"{args.rate:g}/s, "
            f"{args.burst:,} as fast as {args.in_flight} in flight allow), then phase 1 again",
        ]
    )
    print(
        markdown_table(
            [
                "phase",
                "updates",
                "acks/s",
                "ack p50 ms",
                "ack p99 ms",
                "serve CPU ms/update",
                "PostgreSQL CPU ms/update",
                "statuses",
            ],
            [
                [
                    p["phase"],
                    p["count"],
                    f"{p['acks_per_s']:.0f}",
                    p["ack_ms"]["p50"],
                    p["ack_ms"]["p99"],
                    p["serve_cpu_ms"],
                    p["postgres_cpu_ms"],
                    p["statuses"],
                ]
                for p in phases
            ],
        )
    )
    a = report.data["answer_ms"]
    if a.get("n"):
        print(
            f"\nAnswer latency (stored → reply accepted by the API), {a['n']:,} replies: "
            f"p50 {a['p50']:.0f} ms, p99 {a['p99']:.0f} ms; queue drained {drain_s:.0f} s after "
            f"the last request. Tiers: {tiers}."
        )
    else:
        print("\nNo worker: serve alone, measured by its acks (nothing answered).")
    print(
        f"\nRows: {counts}; sendMessage calls at the fake API: {api_sends}. "
        f"**Lost: {lost}. Duplicated: {duplicated}. Held (a flood, unanswered): "
        f"{counts['held']}; waiting notices queued: {counts['waiting_notices']}.**"
    )
    report.finish()


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--burst", type=int, default=5000)
    parser.add_argument("--in-flight", type=int, default=64)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--worker-nice", type=int, default=0, help="run the workers at this nice level"
    )
    parser.add_argument(
        "--worker-threads", type=int, default=0, help="OMP_NUM_THREADS of the workers' embedder"
    )
    parser.add_argument("--drain-timeout", type=float, default=600)
    parser.add_argument("--warmup", type=int, default=200, help="updates at 50/s, not reported")
    parser.add_argument("--quick", action="store_true")
    # the generator process
    parser.add_argument("--generate", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--questions", help=argparse.SUPPRESS)
    parser.add_argument("--first-id", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        questions = json.loads(Path(args.questions).read_text(encoding="utf-8"))
        asyncio.run(generate(args, questions))
    else:
        asyncio.run(main(args))


if __name__ == "__main__":
    cli()
