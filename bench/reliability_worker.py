"""The reliability bench's worker cases, each on its own database, ``tuvan serve`` and
``tuvan worker``, with questions arriving through the fake Telegram API's webhook:

- ``kill``: the worker is SIGKILLed while a reply is in flight (the fake platform has accepted
  it, the worker has not heard back), N times, and restarted each time;
- ``poison``: the LLM stub, asked to answer one question, has the bench SIGKILL the worker;
  how often that question is claimed, whether it ends failed, and whether the next message in
  the same conversation is answered;
- ``slow_llm``: an LLM stub slower than the worker's lease.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

from reliability_stack import PENDING, Database, Figure, Processes, base_env, demo_questions
from reliability_telegram import Telegram, post_updates, telegram_update

from bot.answer.followup import REWRITE_PROMPT
from tests.fakes.openai_stub import OpenAIStub, start_openai_stub

# Questions on the demo documents that no FAQ entry answers: tier 2, where the LLM writes.
POISON_QUESTION = "SHUT Code Club tổ chức contest nội bộ vào tối thứ mấy?"
NEXT_QUESTION = "CLB Tiếng Anh Speak Up sinh hoạt mấy buổi một tuần?"
SLOW_QUESTION = "SHUT Security Team thi đấu CTF ở đâu và có workshop gì?"
LLM_REPLY = "Theo tài liệu của trường, thông tin như sau [1]."


def worker_env(env: dict[str, str], lease_s: float, max_attempts: int) -> dict[str, str]:
    return env | {
        "TUVAN_WORKER__LEASE_S": str(lease_s),
        "TUVAN_WORKER__MAX_ATTEMPTS": str(max_attempts),
        "TUVAN_WORKER__BACKOFF_BASE_S": "0.2",
        "TUVAN_WORKER__BACKOFF_MAX_S": "2",
        "TUVAN_WORKER__POLL_S": "0.5",
    }


async def kill_case(
    db: Database, procs: Processes, data_dir: Path, *, questions: int, kills: int, lease_s: float
) -> list[Figure]:
    url_db = await db.copy_demo()
    telegram = Telegram()
    await telegram.start()
    env = worker_env(base_env(url_db, data_dir, telegram.api.api_base), lease_s, 5)
    in_flight = asyncio.Event()
    let_through = -1  # sends to let pass before holding one back; -1: none held

    async def on_send(chat: int, text: str) -> None:
        nonlocal let_through
        if let_through > 0:
            let_through -= 1
        elif let_through == 0:  # hold the response back while the bench kills the worker
            let_through = -1
            in_flight.set()
            await asyncio.sleep(1.0)

    telegram.hook = on_send
    try:
        _, url = await procs.serve("kill-serve", env)
        worker = await procs.worker("kill-worker", env)
        pool = demo_questions()
        chats = [8_000_000 + i for i in range(questions)]
        updates = [
            telegram_update(i + 1, chat, pool[i % len(pool)]) for i, chat in enumerate(chats)
        ]
        posting = asyncio.create_task(post_updates(url, updates, rate=20))
        gap = max(1, questions // (kills + 1))
        done_kills = 0
        for _ in range(kills):
            in_flight.clear()
            let_through = gap
            try:
                await asyncio.wait_for(in_flight.wait(), 180)
            except TimeoutError:
                let_through = -1
                break
            await procs.kill(worker)
            done_kills += 1
            worker = await procs.start("kill-worker", ["worker"], env)
        statuses = await posting
        deadline = time.monotonic() + lease_s + 90
        while time.monotonic() < deadline:
            replied = set(telegram.per_chat())
            pending = await db.scalar(
                url_db, f"SELECT count(*) FROM messages WHERE status IN {PENDING}"
            )
            if pending == 0 and all(c in replied for c in chats):
                break
            await asyncio.sleep(1)
        replied = set(telegram.per_chat())
        lost = sum(1 for c in chats if c not in replied)
        stuck = await db.scalar(url_db, f"SELECT count(*) FROM messages WHERE status IN {PENDING}")
        failed = await db.scalar(url_db, "SELECT count(*) FROM messages WHERE status = 'failed'")
        duplicated = telegram.duplicates()
        await procs.stop(worker)
    finally:
        await procs.stop_all()
        await telegram.close()
    return [
        Figure("kill", "SIGKILLs of the worker during a send", done_kills, f"{kills}", None),
        Figure(
            "kill",
            "webhooks 200",
            f"{statuses.get('200', 0)}/{questions}",
            "all",
            statuses.get("200", 0) == questions,
        ),
        Figure("kill", "lost (questions never answered)", lost, "0", lost == 0),
        Figure(
            "kill",
            "duplicated (replies the platform saw twice)",
            duplicated,
            f"≤ {kills} (one per kill)",
            duplicated <= kills,
        ),
        Figure("kill", "stuck (rows pending at the end)", stuck, "0", stuck == 0),
        Figure("kill", "rows failed", failed, "0", failed == 0),
    ]


class Responder:
    """The LLM stub's replies: a cited sentence, the question back for a rewrite, and for
    the poison question the SIGKILL of the worker that asked."""

    def __init__(self, stub: OpenAIStub, poison: str = "", *, delay_s: float = 0) -> None:
        self.stub = stub
        self.poison = poison
        self.worker: asyncio.subprocess.Process | None = None
        self.poison_calls = 0
        self.delay_s = delay_s
        self.refill()

    def refill(self, n: int = 200) -> None:
        for _ in range(n):
            self.stub.script_chat(self.reply, delay_s=self.delay_s)

    def dump(self, path: Path) -> int:
        """Every chat request the stub got, to ``path`` (JSON); their count."""
        bodies = [r.body for r in self.stub.requests_to("/v1/chat/completions")]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(bodies, ensure_ascii=False, indent=1), encoding="utf-8")
        return len(bodies)

    def calls_for(self, question: str) -> int:
        """Answer calls (not rewrites) whose last message holds ``question``."""
        return sum(
            1
            for r in self.stub.requests_to("/v1/chat/completions")
            if not _is_rewrite(r.body) and question in _last_user(r.body)
        )

    def reply(self, body: dict[str, Any]) -> str:
        last = _last_user(body)
        if _is_rewrite(body):
            return NEXT_QUESTION if NEXT_QUESTION in last else last.strip().splitlines()[-1]
        if self.poison and self.poison in last:
            self.poison_calls += 1
            if self.worker is not None and self.worker.returncode is None:
                os.kill(self.worker.pid, signal.SIGKILL)
            return "…"
        return LLM_REPLY


def _is_rewrite(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or [{}]
    return REWRITE_PROMPT[:60] in str(messages[0].get("content", ""))


def _last_user(body: dict[str, Any]) -> str:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return str(users[-1].get("content", "")) if users else ""


def llm_env(env: dict[str, str], stub: OpenAIStub) -> dict[str, str]:
    return env | {
        "TUVAN_LLM__BASE_URL": stub.base_url,
        "TUVAN_LLM__API_KEY": "bench",
        "TUVAN_LLM__MODEL": stub.model,
    }


async def inbound_status(db: Database, url_db: str, question: str) -> str:
    status = await db.scalar(
        url_db,
        "SELECT status::text FROM messages WHERE direction = 'in' AND text = :t "
        "ORDER BY id DESC LIMIT 1",
        t=question,
    )
    return str(status or "not stored")


async def poison_case(
    db: Database,
    procs: Processes,
    data_dir: Path,
    *,
    lease_s: float,
    max_attempts: int,
    seconds: float,
) -> list[Figure]:
    url_db = await db.copy_demo()
    telegram = Telegram()
    await telegram.start()
    stub = await start_openai_stub(dimension=384)
    responder = Responder(stub, POISON_QUESTION)
    env = llm_env(
        worker_env(base_env(url_db, data_dir, telegram.api.api_base), lease_s, max_attempts), stub
    )
    restarts = 0
    done = asyncio.Event()
    try:
        _, url = await procs.serve("poison-serve", env)
        responder.worker = await procs.worker("poison-worker", env)

        async def supervise() -> None:
            nonlocal restarts
            while not done.is_set():
                worker = responder.worker
                assert worker is not None
                await worker.wait()
                if done.is_set():
                    return
                restarts += 1
                responder.worker = await procs.start("poison-worker", ["worker"], env)

        supervisor = asyncio.create_task(supervise())
        chat = 9_000_001
        await post_updates(url, [telegram_update(1, chat, POISON_QUESTION)], rate=1)
        await asyncio.sleep(1)
        await post_updates(url, [telegram_update(2, chat, NEXT_QUESTION)], rate=1)
        deadline = time.monotonic() + seconds
        cap = max_attempts + 2  # claimed this often: claims have no cap
        while time.monotonic() < deadline and responder.poison_calls < cap:
            poison = await inbound_status(db, url_db, POISON_QUESTION)
            following = await inbound_status(db, url_db, NEXT_QUESTION)
            if poison in ("failed", "answered", "skipped") and following == "answered":
                break
            await asyncio.sleep(0.5)
        await asyncio.sleep(1)
        poison = await inbound_status(db, url_db, POISON_QUESTION)
        following = await inbound_status(db, url_db, NEXT_QUESTION)
        claims = responder.poison_calls
        llm_requests = responder.dump(procs.log_dir / "poison-llm.json")
        done.set()
        if responder.worker is not None:
            await procs.stop(responder.worker)
        supervisor.cancel()
    finally:
        done.set()
        await procs.stop_all()
        await telegram.close()
        await stub.close()
    capped = "≥ " if claims >= cap else ""
    return [
        Figure(
            "poison",
            "claims of the poison message (LLM calls for it)",
            f"{capped}{claims}",
            f"≤ {max_attempts} (max_attempts)",
            claims <= max_attempts,
        ),
        Figure("poison", "worker restarts", restarts, "", None),
        Figure("poison", "LLM requests in all", llm_requests, "", None),
        Figure(
            "poison", "poison message's status at the end", poison, "failed", poison == "failed"
        ),
        Figure(
            "poison",
            "next message in the conversation",
            following,
            "answered",
            following == "answered",
        ),
    ]


async def slow_llm_case(
    db: Database,
    procs: Processes,
    data_dir: Path,
    *,
    lease_s: float,
    delay_s: float,
    seconds: float,
) -> list[Figure]:
    url_db = await db.copy_demo()
    telegram = Telegram()
    await telegram.start()
    stub = await start_openai_stub(dimension=384)
    responder = Responder(stub, delay_s=delay_s)
    env = llm_env(worker_env(base_env(url_db, data_dir, telegram.api.api_base), lease_s, 5), stub)
    chat = 9_100_001
    try:
        _, url = await procs.serve("slow-serve", env)
        await procs.worker("slow-worker", env)
        started = time.monotonic()
        await post_updates(url, [telegram_update(1, chat, SLOW_QUESTION)], rate=1)
        first_reply: float | None = None
        while time.monotonic() - started < seconds:
            if first_reply is None and telegram.per_chat()[chat]:
                first_reply = time.monotonic()
            # Once answered, wait two leases more for a late second reply.
            if first_reply is not None and time.monotonic() - first_reply > 2 * lease_s + delay_s:
                break
            await asyncio.sleep(0.5)
        calls = responder.calls_for(SLOW_QUESTION)
        llm_requests = responder.dump(procs.log_dir / "slow-llm.json")
        replies = telegram.per_chat()[chat]
        status = await inbound_status(db, url_db, SLOW_QUESTION)
    finally:
        await procs.stop_all()
        await telegram.close()
        await stub.close()
    took = (
        f"{first_reply - started:.0f} s" if first_reply is not None else f"none in {seconds:.0f} s"
    )
    return [
        Figure(
            "slow_llm",
            f"LLM calls for the question (LLM {delay_s:g} s, lease {lease_s:g} s)",
            calls,
            "1",
            calls == 1,
        ),
        Figure("slow_llm", "replies the platform got", replies, "1", replies == 1),
        Figure("slow_llm", "LLM requests in all", llm_requests, "", None),
        Figure("slow_llm", "first reply after", took, "", None),
        Figure(
            "slow_llm", "question's status at the end", status, "answered", status == "answered"
        ),
    ]
