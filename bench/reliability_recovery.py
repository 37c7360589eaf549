"""The reliability bench's results-week cases with ``tuvan serve`` and ``tuvan worker`` together
(issue 3/4):

- ``burst``: a burst of updates in one Telegram chat: every question answered in its turn after
  one waiting notice, and only past the flood cap held, and counted;
- ``serve_kill``: ``serve`` SIGKILLed while it answers a web chat question through the LLM: the
  page's retry through another ``serve`` takes the question over within the web lease, the LLM
  is called once after the kill, one answer is stored;
- ``listen``: the LISTEN connections of serve and the worker terminated by PostgreSQL: the next
  question is answered at once (not at the next poll), and the loop says so in its log.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import aiohttp
from reliability_limits import ask_like_page
from reliability_stack import PENDING, Database, Figure, Processes, base_env, client, demo_questions
from reliability_telegram import Telegram, post_updates, telegram_update
from reliability_web import chat_request
from reliability_worker import Responder, llm_env, worker_env

from bot.conversations.inbound import HELD_ERROR, WAITING_NOTICE
from tests.fakes.openai_stub import start_openai_stub

# A documents question (no FAQ entry answers it), so that the web chat asks the LLM.
DOCUMENTS_QUESTION = "Tiền đặt cọc ký túc xá là bao nhiêu và có được hoàn lại không?"
FLOOD_CAP = 30  # TUVAN_LIMITS__FLOOD_PER_CONVERSATION's default


async def drained(db: Database, url_db: str, within_s: float) -> int:
    """Wait until nothing is pending; how many rows still are."""
    deadline = time.monotonic() + within_s
    pending = -1
    while time.monotonic() < deadline:
        pending = await db.scalar(
            url_db, f"SELECT count(*) FROM messages WHERE status IN {PENDING}"
        )
        if pending == 0:
            break
        await asyncio.sleep(0.5)
    return int(pending)


async def burst_case(
    db: Database, procs: Processes, data_dir: Path, *, updates: int
) -> list[Figure]:
    url_db = await db.copy_demo()
    telegram = Telegram()
    await telegram.start()
    env = worker_env(base_env(url_db, data_dir, telegram.api.api_base), 60, 5)
    chat = 9_100_000
    pool = demo_questions()
    try:
        _, url = await procs.serve("burst-serve", env)
        await procs.worker("burst-worker", env)
        batch = [telegram_update(i + 1, chat, pool[i % len(pool)]) for i in range(updates)]
        statuses = await post_updates(url, batch, rate=1000)
        pending = await drained(db, url_db, 60 + updates)
        sends = [text for to, text in telegram.sends() if to == chat]
    finally:
        await procs.stop_all()
        await telegram.close()
    notices = sum(1 for text in sends if text in WAITING_NOTICE.values())
    rows = await db.rows(
        url_db,
        "SELECT status::text, error FROM messages WHERE direction = 'in' AND channel = 'telegram'",
    )
    answered = sum(1 for status, _ in rows if status == "answered")
    held = sum(1 for _, error in rows if error == HELD_ERROR)
    silent = held if held and not notices else 0
    return [
        Figure(
            "burst",
            f"{updates} updates in one chat at once: webhooks",
            str(dict(statuses)),
            "all 200",
            statuses.get("200", 0) == updates,
        ),
        Figure(
            "burst",
            "answered / held past the flood cap / waiting notices sent",
            f"{answered} / {held} / {notices}",
            f"answered ≥ {min(updates, FLOOD_CAP)}, answered + held = {updates}, a notice",
            answered >= min(updates, FLOOD_CAP)
            and answered + held == updates
            and (notices >= 1 or updates <= 5),
        ),
        Figure("burst", "held silently (no notice in the chat)", silent, "0", silent == 0),
        Figure("burst", "rows pending at the end", pending, "0", pending == 0),
    ]


async def serve_kill_case(
    db: Database, procs: Processes, data_dir: Path, *, llm_delay_s: float
) -> list[Figure]:
    url_db = await db.copy_demo()
    stub = await start_openai_stub(dimension=384)
    responder = Responder(stub, delay_s=llm_delay_s)
    env = llm_env(worker_env(base_env(url_db, data_dir), 120, 5), stub)
    try:
        first, url_a = await procs.serve("kill-serve-a", env)
        _, url_b = await procs.serve("kill-serve-b", env)
        await procs.worker("kill-serve-worker", env)  # the one that waited out 120 s before
        headers, body = chat_request("bench-killed", DOCUMENTS_QUESTION)
        async with client("127.0.0.4", timeout_s=60) as http:
            asking = asyncio.create_task(_post(http, url_a, headers, body))
            await _second_call(responder, 0, time.monotonic())  # A asks the LLM
            await asyncio.sleep(min(0.5, llm_delay_s / 2))
            calls_before = responder.calls_for(DOCUMENTS_QUESTION)
            await procs.kill(first)
            killed_at = time.monotonic()
            await asyncio.gather(asking, return_exceptions=True)
            attempts = await _attempts(db, url_db)
            taken_over = asyncio.create_task(_claimed_again(db, url_db, attempts, killed_at))
            outcome, _ = await ask_like_page(
                http, url_b, body["visitor_id"], DOCUMENTS_QUESTION, message_id=body["message_id"]
            )
            answered_s = time.monotonic() - killed_at
            taken_s = await taken_over
        await asyncio.sleep(2)  # anything else that would answer it
        calls_after = responder.calls_for(DOCUMENTS_QUESTION) - calls_before
        replies = await db.scalar(
            url_db,
            "SELECT count(*) FROM messages o JOIN messages i ON o.reply_to_id = i.id "
            "WHERE i.text = :t AND o.direction = 'out'",
            t=DOCUMENTS_QUESTION,
        )
    finally:
        await procs.stop_all()
        await stub.close()
    lease_s = 10.0  # TUVAN_WEB__ANSWER_LEASE_S's default
    return [
        Figure(
            "serve_kill",
            "the page's retry through another serve: the question claimed again after the kill",
            f"{taken_s:.1f} s" if taken_s is not None else "never",
            f"≤ {lease_s + 1:g} s (the lease, then a poll of the waiting request)",
            taken_s is not None and taken_s <= lease_s + 1,
        ),
        Figure(
            "serve_kill",
            f"answered after the kill (LLM takes {llm_delay_s:g} s)",
            f"{outcome}, {answered_s:.1f} s",
            f"≤ {lease_s + llm_delay_s + 2:g} s",
            outcome == "answered" and answered_s <= lease_s + llm_delay_s + 2,
        ),
        Figure("serve_kill", "LLM answer calls after the kill", calls_after, "1", calls_after == 1),
        Figure("serve_kill", "answers stored for the question", replies, "1", replies == 1),
    ]


async def _post(
    http: aiohttp.ClientSession, url: str, headers: dict[str, str], body: dict[str, Any]
) -> None:
    async with http.post(f"{url}/api/chat", json=body, headers=headers) as response:
        await response.read()


async def _second_call(responder: Responder, before: int, since: float) -> float | None:
    """Seconds from ``since`` until the LLM is asked the question again (None: not in 60 s)."""
    deadline = since + 60
    while time.monotonic() < deadline:
        if responder.calls_for(DOCUMENTS_QUESTION) > before:
            return time.monotonic() - since
        await asyncio.sleep(0.05)
    return None


async def _attempts(db: Database, url_db: str) -> int:
    claims = await db.scalar(
        url_db,
        "SELECT attempts FROM messages WHERE direction = 'in' AND text = :t",
        t=DOCUMENTS_QUESTION,
    )
    return int(claims or 0)


async def _claimed_again(db: Database, url_db: str, before: int, since: float) -> float | None:
    """Seconds from ``since`` until another process claims the question (None: not in 60 s)."""
    deadline = since + 60
    while time.monotonic() < deadline:
        if await _attempts(db, url_db) > before:
            return time.monotonic() - since
        await asyncio.sleep(0.1)
    return None


async def listen_case(db: Database, procs: Processes, data_dir: Path) -> list[Figure]:
    url_db = await db.copy_demo()
    telegram = Telegram()
    await telegram.start()
    poll_s = 30.0
    env = worker_env(base_env(url_db, data_dir, telegram.api.api_base), 60, 5) | {
        "TUVAN_WORKER__POLL_S": str(poll_s)
    }
    pool = demo_questions()
    try:
        _, url = await procs.serve("listen-serve", env)
        worker = await procs.worker("listen-worker", env)
        await post_updates(url, [telegram_update(1, 9_200_001, pool[0])], rate=1)
        await _sent_to(telegram, 9_200_001, 60)
        terminated = await db.scalar(
            url_db,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND query ILIKE 'LISTEN%'",
        )
        await asyncio.sleep(2)
        started = time.monotonic()
        await post_updates(url, [telegram_update(2, 9_200_002, pool[1])], rate=1)
        answered = await _sent_to(telegram, 9_200_002, poll_s + 30)
        seconds = time.monotonic() - started if answered else None
        said = procs.logs[worker.pid].read_bytes().count(b"polling until it is back")
    finally:
        await procs.stop_all()
        await telegram.close()
    return [
        Figure(
            "listen", "LISTEN connections terminated", terminated, "≥ 1", (terminated or 0) >= 1
        ),
        Figure(
            "listen",
            f"the next Telegram question answered after (worker polls every {poll_s:g} s)",
            f"{seconds:.1f} s" if seconds is not None else "not answered",
            "< 5 s",
            seconds is not None and seconds < 5,
        ),
        Figure("listen", "the worker's log says the loop lost and polls", said, "≥ 1", said >= 1),
    ]


async def _sent_to(telegram: Telegram, chat: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if any(to == chat for to, _ in telegram.sends()):
            return True
        await asyncio.sleep(0.1)
    return False
