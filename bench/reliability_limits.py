"""The reliability bench's results-week cases on ``tuvan serve``'s public side (issue 3/4), each
on its own database and serve process, a normal visitor timed while the load goes on:

- ``reads``: one client loops ``GET /api/chat/updates`` and ``/api/chat/history``;
- ``held``: long polls held open past a serve process's open-file limit (set low, as a service
  manager might), from many networks;
- ``rotate``: behind the trusted proxy, a client rotating its address inside one IPv6 /64;
- ``fair``: thousands of questions from a thousand addresses (each in its own network) while a
  student uses the page;
- ``owner``: wrong passwords from twelve addresses of one network, then the owner signs in
  from their own address.

The visitor acts as the page does: a 429 or 503 is sent again after ``Retry-After`` with the
same message id, and its time counts from the first send.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from common import percentiles
from reliability_stack import ORIGIN, Database, Figure, Processes, base_env, client, demo_questions
from reliability_web import ask_chat, chat_request, create_staff, login_token, try_login

VISITOR_GIVES_UP_S = 30.0
VISITOR_TARGET_S = 2.0


# The page's shortest wait before sending a busy question again ("Retry-After: 0"; chat.html).
BUSY_MIN_S = 0.25


async def ask_like_page(
    http: aiohttp.ClientSession,
    url: str,
    visitor: str,
    text: str,
    forwarded_for: str = "",
    message_id: str = "",
) -> tuple[str, float]:
    """One question sent as the page sends it: again after ``Retry-After`` (429, 503) or a
    second (no connection), with the same message id (``message_id``: one sent before); its
    outcome and seconds from the first send."""
    headers, body = chat_request(visitor, text)
    body["message_id"] = message_id or body["message_id"]
    if forwarded_for:
        headers["X-Forwarded-For"] = forwarded_for
    started = time.monotonic()
    outcome = "gave up"
    while time.monotonic() - started < VISITOR_GIVES_UP_S:
        wait_s = 1.0
        try:
            async with http.post(f"{url}/api/chat", json=body, headers=headers) as response:
                payload = await response.read()
                if response.status == 200 and b"event: done" in payload:
                    return "answered", time.monotonic() - started
                outcome = str(response.status)
                if response.status not in (429, 503):
                    return outcome, time.monotonic() - started
                wait_s = float(response.headers.get("Retry-After", "1") or 1)
        except (aiohttp.ClientError, TimeoutError):
            outcome = "error"
        await asyncio.sleep(min(max(wait_s, BUSY_MIN_S), 5.0))
    return outcome, time.monotonic() - started


async def visitor_meanwhile(
    url: str, questions: list[str], *, source: str = "127.0.0.4", forwarded_for: str = ""
) -> list[tuple[str, float]]:
    """A student's questions, one a second from a second into the load, each sent as the page
    sends it (``ask_like_page``)."""
    async with client(source, timeout_s=VISITOR_GIVES_UP_S) as http:

        async def one(i: int, question: str) -> tuple[str, float]:
            await asyncio.sleep(1 + i)
            visitor = f"bench-student-{i}"
            return await ask_like_page(http, url, visitor, question, forwarded_for)

        return list(await asyncio.gather(*(one(i, q) for i, q in enumerate(questions))))


def visitor_figure(case: str, visits: list[tuple[str, float]]) -> Figure:
    times = [s for outcome, s in visits if outcome == "answered"]
    missed = [outcome for outcome, _ in visits if outcome != "answered"]
    p = percentiles(times)
    value = (f"p50 {p['p50']:.2f} s, max {p['max']:.2f} s" if times else "none answered") + (
        f"; not answered: {', '.join(missed)}" if missed else ""
    )
    return Figure(
        case,
        f"a student's {len(visits)} questions meanwhile (retries as the page does)",
        value,
        f"each < {VISITOR_TARGET_S:g} s",
        bool(times) and not missed and p["max"] < VISITOR_TARGET_S,
    )


def status_text(statuses: Counter[str]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items()))


async def warm(url: str) -> None:
    """The model and the pools warm before a case's load (the first answer is slow)."""
    async with client("127.0.0.9", timeout_s=120) as http:
        await ask_chat(http, url, "bench-warm", demo_questions()[1])


async def reads_case(
    db: Database, procs: Processes, data_dir: Path, *, seconds: float, loops: int
) -> list[Figure]:
    url_db = await db.copy_demo()
    _, url = await procs.serve("reads-serve", base_env(url_db, data_dir))
    await warm(url)
    questions = demo_questions()
    statuses: dict[str, Counter[str]] = {"updates": Counter(), "history": Counter()}
    async with client("127.0.0.2", limit=loops, timeout_s=30) as http:
        await ask_chat(http, url, "bench-reader", questions[0])  # updates answer at once
        headers = {"X-Visitor-Id": "bench-reader", "Origin": ORIGIN}
        until = time.monotonic() + seconds

        async def loop(route: str) -> None:
            path = "/api/chat/updates?since=0" if route == "updates" else "/api/chat/history"
            while time.monotonic() < until:
                try:
                    async with http.get(url + path, headers=headers) as response:
                        await response.read()
                        statuses[route][str(response.status)] += 1
                except (aiohttp.ClientError, TimeoutError):
                    statuses[route]["error"] += 1

        looping = [loop("updates" if i % 2 else "history") for i in range(loops)]
        *_, visits = await asyncio.gather(*looping, visitor_meanwhile(url, questions[2:5]))
    # Both routes take from the address's reads bucket (TUVAN_LIMITS__READS_IP_*'s defaults).
    allowed = 30 + int(120 * seconds / 60) + 1
    passed = sum(counts.get("200", 0) for counts in statuses.values())
    figures = [
        Figure(
            "reads",
            f"GET /api/chat/{route} looped for {seconds:g} s: statuses",
            f"{sum(counts.values()) / seconds:.0f}/s; {status_text(counts)}",
            "no 5xx",
            not any(k.startswith("5") or k == "error" for k in counts),
        )
        for route, counts in statuses.items()
    ]
    figures.append(
        Figure(
            "reads",
            "reads let through (both routes)",
            passed,
            f"≤ {allowed} (the address's burst and refill)",
            0 < passed <= allowed,
        )
    )
    return [*figures, visitor_figure("reads", visits)]


async def held_case(
    db: Database, procs: Processes, data_dir: Path, *, polls: int, open_files: int
) -> list[Figure]:
    url_db = await db.copy_demo()
    env = base_env(url_db, data_dir) | {"TUVAN_WEB__UPDATES_WAIT_S": "8"}
    process, url = await procs.serve("held-serve", env, open_files=open_files)
    await warm(url)
    statuses: Counter[str] = Counter()
    retry_after: Counter[str] = Counter()
    per_network = 8  # under the per-address cap and the network's reads bucket
    sessions = [
        client(f"127.0.{10 + n}.1", limit=per_network, timeout_s=30)
        for n in range((polls + per_network - 1) // per_network)
    ]

    async def hold(i: int) -> None:
        http = sessions[i // per_network]
        headers = {"X-Visitor-Id": f"bench-held-{i}", "Origin": ORIGIN}
        try:
            async with http.get(f"{url}/api/chat/updates?since=0", headers=headers) as response:
                await response.read()
                statuses[str(response.status)] += 1
                if response.status == 503:
                    retry_after["given" if "Retry-After" in response.headers else "missing"] += 1
        except (aiohttp.ClientError, TimeoutError):
            statuses["error"] += 1

    try:
        holding = asyncio.gather(*(hold(i) for i in range(polls)))
        visits = await visitor_meanwhile(url, demo_questions()[2:5])
        await holding
    finally:
        for session in sessions:
            await session.close()
    log = procs.logs[process.pid]
    accept_errors = log.read_bytes().count(b"out of system resource")
    return [
        Figure(
            "held",
            f"{polls} long polls held at once, open-file limit {open_files}: statuses",
            status_text(statuses),
            "503 past the cap, no error",
            statuses.get("503", 0) > 0 and "error" not in statuses,
        ),
        Figure(
            "held",
            "503s with Retry-After",
            f"{retry_after.get('given', 0)}/{statuses.get('503', 0)}",
            "all",
            not retry_after.get("missing"),
        ),
        Figure(
            "held",
            "'out of system resource' lines in serve's log",
            f"{accept_errors} (log {log.stat().st_size:,} bytes)",
            "0",
            accept_errors == 0,
        ),
        visitor_figure("held", visits),
    ]


def proxied_env(url_db: str, data_dir: Path) -> dict[str, str]:
    """serve behind a reverse proxy on this host: the client is X-Forwarded-For's last hop."""
    return base_env(url_db, data_dir) | {"TUVAN_ADMIN__TRUST_PROXY": "true"}


async def rotate_case(
    db: Database, procs: Processes, data_dir: Path, *, questions: int
) -> list[Figure]:
    url_db = await db.copy_demo()
    _, url = await procs.serve("rotate-serve", proxied_env(url_db, data_dir))
    await warm(url)
    pool = demo_questions()
    outcomes: Counter[str] = Counter()
    started = time.monotonic()
    async with client("127.0.0.2", limit=questions, timeout_s=30) as http:

        async def one(i: int) -> None:
            headers, body = chat_request(f"bench-rotate-{i}", pool[i % len(pool)])
            headers["X-Forwarded-For"] = f"2001:db8:7:7::{i + 1:x}"
            try:
                async with http.post(f"{url}/api/chat", json=body, headers=headers) as response:
                    payload = await response.read()
                    ok = response.status == 200 and b"event: done" in payload
                    outcomes["answered" if ok else str(response.status)] += 1
            except (aiohttp.ClientError, TimeoutError):
                outcomes["error"] += 1

        await asyncio.gather(*(one(i) for i in range(questions)))
    elapsed = time.monotonic() - started
    # The network's bucket (TUVAN_LIMITS__CHAT_NETWORK_*'s defaults) bounds what passes it:
    # answered, or refused later by the answers in flight (503).
    bound = 20 + int(60 * elapsed / 60) + 1
    passed = outcomes.get("answered", 0) + outcomes.get("503", 0)
    return [
        Figure(
            "rotate",
            f"{questions} questions at once, each from another address of one IPv6 /64",
            status_text(outcomes),
            f"≤ {bound} past the limits (the network's burst and refill), the rest 429",
            0 < passed <= bound and passed + outcomes.get("429", 0) == questions,
        )
    ]


def flood_address(i: int) -> str:
    """The ``i``-th flooding address, each in an IPv4 /24 of its own."""
    return f"10.{(i >> 8) & 255}.{i & 255}.7"


async def fair_case(
    db: Database,
    procs: Processes,
    data_dir: Path,
    *,
    questions: int,
    addresses: int,
    parallel: int,
) -> list[Figure]:
    url_db = await db.copy_demo()
    _, url = await procs.serve("fair-serve", proxied_env(url_db, data_dir))
    await warm(url)
    pool = demo_questions()
    flood: Counter[str] = Counter()
    places = asyncio.Semaphore(parallel)
    async with client("127.0.0.2", limit=parallel, timeout_s=60) as http:

        async def flood_one(i: int) -> None:
            async with places:
                headers, body = chat_request(f"flood-{uuid.uuid4().hex[:20]}", pool[i % len(pool)])
                headers["X-Forwarded-For"] = flood_address(i % addresses)
                try:
                    async with http.post(f"{url}/api/chat", json=body, headers=headers) as r:
                        payload = await r.read()
                        ok = r.status == 200 and b"event: done" in payload
                        flood["answered" if ok else str(r.status)] += 1
                except (aiohttp.ClientError, TimeoutError):
                    flood["error"] += 1

        started = time.monotonic()
        flooding = asyncio.gather(*(flood_one(i) for i in range(questions)))
        visits = await visitor_meanwhile(url, pool[2:6], forwarded_for="192.0.2.50")
        await flooding
        seconds = time.monotonic() - started
    return [
        Figure(
            "fair",
            f"{questions} questions from {addresses} addresses ({parallel} at a time): outcomes",
            f"{status_text(flood)} in {seconds:.0f} s",
            "no 5xx but 503",
            not any(k.startswith("5") and k != "503" for k in flood) and "error" not in flood,
        ),
        visitor_figure("fair", visits),
    ]


async def owner_case(
    db: Database, procs: Processes, data_dir: Path, *, tries: int, guessers: int
) -> list[Figure]:
    url_db = await db.copy_demo()
    env = base_env(url_db, data_dir)
    email = "owner@bench.example.edu.vn"
    password = "Bench-Owner-Password-2026"
    await create_staff(procs, env, email, password)
    _, url = await procs.serve("owner-serve", env)
    guesses: Counter[str] = Counter()
    spread_s = 8.0

    async def guesser(n: int) -> None:
        async with client(f"127.0.1.{n + 1}", timeout_s=60) as http:
            token = await login_token(http, url)
            for k in range(tries // guessers):
                await asyncio.sleep(spread_s * k / max(1, tries // guessers))
                guesses[await try_login(http, url, token, email, f"wrong-{n}-{k}")] += 1

    await asyncio.gather(*(guesser(n) for n in range(guessers)))
    async with client("127.0.2.1", timeout_s=60) as http:
        owner = await try_login(http, url, await login_token(http, url), email, password)
    return [
        Figure(
            "owner",
            f"{tries} wrong passwords from {guessers} addresses of one /24 in {spread_s:g} s",
            status_text(guesses),
            "throttled (429)",
            guesses.get("429", 0) > 0,
        ),
        Figure(
            "owner",
            "the owner, right password, from an address that has not failed",
            owner,
            "signed in (302/303)",
            owner in ("302", "303"),
        ),
    ]


def limits_cases(args: Any) -> dict[str, Callable[[Database, Processes, Path], Awaitable[Any]]]:
    """The cases of this module by name, with their counts from the bench's arguments."""
    return {
        "reads": lambda db, p, d: reads_case(db, p, d, seconds=args.reads_seconds, loops=16),
        "held": lambda db, p, d: held_case(
            db, p, d, polls=args.held_polls, open_files=args.open_files
        ),
        "rotate": lambda db, p, d: rotate_case(db, p, d, questions=60),
        "fair": lambda db, p, d: fair_case(
            db,
            p,
            d,
            questions=args.fair_questions,
            addresses=args.fair_addresses,
            parallel=100,
        ),
        "owner": lambda db, p, d: owner_case(db, p, d, tries=60, guessers=12),
    }
