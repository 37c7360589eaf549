"""Reliability and security figures of a running ``tuvan serve`` + ``tuvan worker`` (issue 15).

Real processes on loopback: an embedded PostgreSQL (a database per case, copied from a template
holding the demo knowledge base), ``tuvan serve`` and ``tuvan worker`` as subprocesses, the fake
Telegram Bot API of tests/fakes, the OpenAI-compatible LLM stub of tests/fakes, and for the
crawler a crawl target and an "internal" target on two loopback ports. Cases:

- ``flood``: one client (127.0.0.2) sends N parallel ``POST /api/chat`` of 60,000 characters,
  each with a new visitor id, while Telegram webhooks arrive at 10/s (127.0.0.3) and a normal
  visitor (127.0.0.4) asks a few questions;
- ``kill``: the worker SIGKILLed during sends, N times, while questions flow through Telegram;
- ``poison``: a question whose answering kills the worker (the LLM stub has the bench do it);
- ``slow_llm``: an LLM stub slower than a short ``TUVAN_WORKER__LEASE_S``;
- ``bad_inputs``: 50 malformed requests to every public endpoint → count of 5xx;
- ``crawler``: a page that 302-redirects to the internal target and links to the same host on
  the other port, and a 2 MB page;
- ``login``: 50 parallel wrong passwords for one staff account;
- the results week's cases (issue 3/4; ``reliability_limits``, ``reliability_recovery``):
  ``reads``, ``held``, ``rotate``, ``fair``, ``owner``, ``burst``, ``serve_kill``, ``listen``.

Prints one table (figure, value, target, pass/fail) and writes JSON to ``bench/results/``.
Written for today's code and the changes issue 15 asks for: it sends ``Content-Type:
application/json`` and an allowed ``Origin`` to /api/chat, the visitor id in the body and in
``X-Visitor-Id``, a Bearer token to /api/ask (``TUVAN_WEB__ASK_TOKEN``), and it sets
``TUVAN_INGEST__ALLOW_PRIVATE_HOSTS`` to the crawl target only (settings a version does not know
are ignored).

    .venv/bin/python bench/reliability.py [--only flood,kill,...] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
from dataclasses import asdict
from pathlib import Path

from common import Report, markdown_table, progress
from crawl_targets import crawler_case
from reliability_limits import limits_cases
from reliability_recovery import burst_case, listen_case, serve_kill_case
from reliability_stack import Database, Figure, Processes, open_database
from reliability_web import bad_inputs_case, flood_case, login_case
from reliability_worker import kill_case, poison_case, slow_llm_case

CASE_FAILED = "case failed to run"
# The cases whose questions are answered from the demo documents (the LLM's cases); the others
# ask the demo FAQ's questions.
DOCUMENT_CASES = {"poison", "slow_llm", "serve_kill"}
CASES = (
    "flood",
    "kill",
    "poison",
    "slow_llm",
    "bad_inputs",
    "crawler",
    "login",
    # the results week (issue 3/4)
    "reads",
    "held",
    "rotate",
    "fair",
    "burst",
    "owner",
    "serve_kill",
    "listen",
)


async def main(args: argparse.Namespace) -> None:
    # A worker SIGKILLed in the middle of an LLM request leaves the stub a broken connection:
    # expected here, not worth a traceback on the terminal.
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    only = [c.strip() for c in args.only.split(",")] if args.only else list(CASES)
    unknown = set(only) - set(CASES)
    if unknown:
        raise SystemExit(
            f"unknown case(s): {', '.join(sorted(unknown))}; known: {', '.join(CASES)}"
        )
    report = Report("reliability" + ("_quick" if args.quick else ""))
    tmp = Path(tempfile.mkdtemp(prefix="tuvan-reliability-run-"))
    data_dir = tmp / "data"
    procs = Processes(tmp / "logs")
    progress("starting PostgreSQL and loading the demo knowledge base into a template")
    keep = Path(args.keep_db) if args.keep_db else None
    # Most cases ask the demo FAQ's questions: the documents (most of a minute to embed) are
    # loaded only for a case that asks about them.
    db = await open_database(data_dir, keep, documents=bool(DOCUMENT_CASES & set(only)))
    figures: list[Figure] = []
    try:
        for case in only:
            progress(f"case {case}")
            try:
                figures += await run_case(case, args, db, procs, data_dir)
            except Exception as exc:  # one broken case must not hide the others' figures
                figures.append(Figure(case, CASE_FAILED, repr(exc)[:200], "", False))
            finally:
                await procs.stop_all()
    finally:
        db.close()
    report.data["figures"] = [asdict(f) for f in figures]
    report.data["logs"] = str(procs.log_dir)
    report.print_header(
        [
            "tuvan serve + tuvan worker subprocesses, embedded PostgreSQL, fake Telegram API, "
            "LLM stub, crawl targets, all on loopback; cases: " + ", ".join(only),
            f"process logs: {procs.log_dir}",
        ]
    )
    print(
        markdown_table(
            ["case", "figure", "value", "target", "result"],
            [
                [
                    f.case,
                    f.name,
                    f.value,
                    f.target or "–",
                    {True: "pass", False: "FAIL", None: "–"}[f.ok],
                ]
                for f in figures
            ],
        )
    )
    report.finish()
    broken = sorted({f.case for f in figures if f.name == CASE_FAILED})
    if broken:  # a figure that misses its target is a finding; a case that can't run is a bug
        raise SystemExit(f"case(s) failed to run: {', '.join(broken)}")


async def run_case(
    case: str, args: argparse.Namespace, db: Database, procs: Processes, data_dir: Path
) -> list[Figure]:
    if case == "flood":
        return await flood_case(
            db,
            procs,
            data_dir,
            requests=args.flood_requests,
            chars=args.flood_chars,
            timeout_s=args.flood_timeout,
            visitor_questions=args.visitor_questions,
            webhook_rate=args.webhook_rate,
        )
    if case == "kill":
        return await kill_case(
            db,
            procs,
            data_dir,
            questions=args.kill_questions,
            kills=args.kills,
            lease_s=args.kill_lease,
        )
    if case == "poison":
        return await poison_case(
            db,
            procs,
            data_dir,
            lease_s=args.lease,
            max_attempts=args.max_attempts,
            seconds=args.poison_seconds,
        )
    if case == "slow_llm":
        return await slow_llm_case(
            db,
            procs,
            data_dir,
            lease_s=args.lease,
            delay_s=args.llm_delay,
            seconds=args.slow_seconds,
        )
    if case == "bad_inputs":
        return await bad_inputs_case(db, procs, data_dir)
    if case == "crawler":
        return await crawler_case(db, procs, data_dir, page_bytes=args.page_bytes)
    if case == "login":
        return await login_case(db, procs, data_dir, tries=args.login_tries)
    if case == "burst":
        return await burst_case(db, procs, data_dir, updates=args.burst_updates)
    if case == "serve_kill":
        return await serve_kill_case(db, procs, data_dir, llm_delay_s=2.0)
    if case == "listen":
        return await listen_case(db, procs, data_dir)
    return list(await limits_cases(args)[case](db, procs, data_dir))


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated cases: " + ",".join(CASES))
    parser.add_argument(
        "--keep-db",
        default="",
        help="keep PostgreSQL and its templates (the embedded demo data) in this folder for the "
        "next run; delete it after the demo data changes",
    )
    parser.add_argument("--quick", action="store_true", help="smaller counts, for a smoke run")
    parser.add_argument("--flood-requests", type=int, default=200)
    parser.add_argument("--flood-chars", type=int, default=60_000)
    parser.add_argument(
        "--flood-timeout",
        type=float,
        default=30,
        help="the flooding client gives up after this many seconds",
    )
    parser.add_argument("--visitor-questions", type=int, default=5)
    parser.add_argument(
        "--webhook-rate",
        type=float,
        default=10,
        help="Telegram updates per second during the flood",
    )
    parser.add_argument("--kill-questions", type=int, default=120)
    parser.add_argument("--kills", type=int, default=6)
    parser.add_argument(
        "--kill-lease", type=float, default=10, help="TUVAN_WORKER__LEASE_S of the kill case"
    )
    parser.add_argument(
        "--lease", type=float, default=5, help="TUVAN_WORKER__LEASE_S of poison and slow_llm"
    )
    parser.add_argument(
        "--max-attempts", type=int, default=2, help="TUVAN_WORKER__MAX_ATTEMPTS of poison"
    )
    parser.add_argument(
        "--poison-seconds",
        type=float,
        default=180,
        help="stop the poison case after this long (or once the message is claimed "
        "max_attempts + 2 times, or once it failed and the next one was answered)",
    )
    parser.add_argument("--llm-delay", type=float, default=8, help="the slow LLM's answer time")
    parser.add_argument("--slow-seconds", type=float, default=45)
    parser.add_argument("--page-bytes", type=int, default=2_000_000)
    parser.add_argument("--login-tries", type=int, default=50)
    parser.add_argument("--reads-seconds", type=float, default=10)
    parser.add_argument("--held-polls", type=int, default=400)
    parser.add_argument(
        "--open-files", type=int, default=256, help="serve's open-file limit in the held case"
    )
    parser.add_argument("--fair-questions", type=int, default=3000)
    parser.add_argument("--fair-addresses", type=int, default=1000)
    parser.add_argument("--burst-updates", type=int, default=500)
    args = parser.parse_args()
    if args.quick:
        args.flood_requests, args.flood_chars, args.flood_timeout = 40, 20_000, 15
        args.visitor_questions, args.kill_questions, args.kills = 3, 40, 2
        args.slow_seconds, args.page_bytes = 30, 300_000
        args.reads_seconds, args.held_polls = 3, 200
        args.fair_questions, args.fair_addresses, args.burst_updates = 300, 100, 40
    asyncio.run(main(args))


if __name__ == "__main__":
    cli()
