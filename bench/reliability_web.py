"""The reliability bench's cases against ``tuvan serve``'s public side, each on its own
database and serve process:

- ``flood``: one client floods ``POST /api/chat`` while Telegram webhooks arrive and a normal
  visitor (another address) asks questions;
- ``bad_inputs``: the malformed requests of ``bad_requests`` → statuses, 5xx count;
- ``login``: parallel wrong passwords for one staff account → guesses verified.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from pathlib import Path

import aiohttp
from bad_requests import bad_requests, send
from common import percentiles
from reliability_stack import ORIGIN, Database, Figure, Processes, base_env, client, demo_questions
from reliability_telegram import post_updates, telegram_update

FLOOD_WORDS = "hoc phi nganh cong nghe thong tin nam 2026 la bao nhieu va co hoc bong khong "
VISITOR_TIMEOUT_S = 30.0


def chat_request(visitor: str, text: str) -> tuple[dict[str, str], dict[str, str]]:
    """Headers and JSON body of a ``POST /api/chat``, as today's page and later versions want
    them: JSON content type, an allowed Origin, the visitor id in the body and the header."""
    headers = {"Content-Type": "application/json", "Origin": ORIGIN, "X-Visitor-Id": visitor}
    return headers, {"visitor_id": visitor, "message_id": str(uuid.uuid4()), "text": text}


async def ask_chat(
    http: aiohttp.ClientSession, url: str, visitor: str, text: str
) -> tuple[str, float]:
    """One question; its outcome ("answered", a status code, "timeout", "error") and seconds."""
    headers, body = chat_request(visitor, text)
    started = time.monotonic()
    try:
        async with http.post(f"{url}/api/chat", json=body, headers=headers) as response:
            payload = await response.read()
            if response.status == 200:
                outcome = "answered" if b"event: done" in payload else "200 without an answer"
            else:
                outcome = str(response.status)
    except TimeoutError:
        outcome = "timeout"
    except aiohttp.ClientError:
        outcome = "error"
    return outcome, time.monotonic() - started


async def flood_case(
    db: Database,
    procs: Processes,
    data_dir: Path,
    *,
    requests: int,
    chars: int,
    timeout_s: float,
    visitor_questions: int,
    webhook_rate: float,
) -> list[Figure]:
    url_db = await db.copy_demo()
    _, url = await procs.serve("flood-serve", base_env(url_db, data_dir))
    flood_text = (FLOOD_WORDS * (chars // len(FLOOD_WORDS) + 1))[:chars]
    questions = demo_questions()
    async with client("127.0.0.4", timeout_s=VISITOR_TIMEOUT_S) as visitor_http:
        # Before the flood: the visitor's answer time on an idle server (and the model warm).
        await ask_chat(visitor_http, url, "bench-warm", questions[1])
        idle = [(await ask_chat(visitor_http, url, "bench-idle", q))[1] for q in questions[2:5]]
        flood: Counter[str] = Counter()
        stop = asyncio.Event()

        async def flood_one(http: aiohttp.ClientSession, i: int) -> None:
            outcome, _ = await ask_chat(http, url, f"flood-{uuid.uuid4().hex[:20]}", flood_text)
            flood["200" if outcome == "answered" else outcome] += 1

        async def visitor() -> list[tuple[str, float]]:
            """A question 1 s into the flood, then one every 2 s, each waited for on its own."""

            async def one(i: int) -> tuple[str, float]:
                await asyncio.sleep(1 + 2 * i)
                question = questions[i % len(questions)]
                return await ask_chat(visitor_http, url, "bench-visitor", question)

            return list(await asyncio.gather(*(one(i) for i in range(visitor_questions))))

        async def webhooks() -> Counter[str]:
            """Updates at ``webhook_rate`` per second until the flood ends, each on its own
            (a slow answer does not delay the next one), from their own address."""
            total: Counter[str] = Counter()
            sending: list[asyncio.Task[Counter[str]]] = []
            started = time.monotonic()
            while not stop.is_set():
                n = len(sending) + 1
                update = telegram_update(n, 6_000_000 + n, questions[n % len(questions)])
                sending.append(asyncio.create_task(post_updates(url, [update], rate=1)))
                await asyncio.sleep(max(0.0, started + n / webhook_rate - time.monotonic()))
            for counts in await asyncio.gather(*sending):
                total += counts
            return total

        hooks = asyncio.create_task(webhooks())
        started = time.monotonic()
        async with client("127.0.0.2", limit=requests, timeout_s=timeout_s) as flood_http:
            flooding = asyncio.gather(*(flood_one(flood_http, i) for i in range(requests)))
            visits, _ = await asyncio.gather(visitor(), flooding)
        flood_s = time.monotonic() - started
        stop.set()
        hook_statuses = await hooks
    sent = sum(hook_statuses.values())
    stored = await db.scalar(
        url_db,
        "SELECT count(DISTINCT event_id) FROM messages "
        "WHERE channel = 'telegram' AND direction = 'in'",
    )
    flood_stored = await db.scalar(
        url_db,
        "SELECT count(*) FROM messages WHERE direction = 'in' AND length(text) >= :n",
        n=chars // 2,
    )
    times = [s for outcome, s in visits if outcome == "answered"]
    unanswered = [outcome for outcome, _ in visits if outcome != "answered"]
    p = percentiles(times)
    ok_hooks = hook_statuses.get("200", 0)
    visitor_value = (
        f"p50 {p['p50']:.1f} s, max {p['max']:.1f} s" if times else "none answered"
    ) + (
        f"; not answered: {', '.join(unanswered)} (gave up after {VISITOR_TIMEOUT_S:.0f} s)"
        if unanswered
        else ""
    )
    counts = ", ".join(f"{k}: {v}" for k, v in sorted(flood.items()))
    return [
        Figure(
            "flood",
            f"flood: {requests} × POST /api/chat of {chars:,} chars, status counts",
            counts,
            "limited (429 or 503), no 500",
            flood.get("429", 0) + flood.get("503", 0) > 0 and "500" not in flood,
        ),
        Figure(
            "flood",
            "flood duration (client gives up after)",
            f"{flood_s:.0f} s ({timeout_s:.0f} s)",
            "",
            None,
        ),
        Figure("flood", "flood messages stored", flood_stored, "", None),
        Figure(
            "flood",
            f"webhooks 200 during the flood ({sent} at {webhook_rate:g}/s)",
            f"{100 * ok_hooks / max(sent, 1):.0f} % ({dict(hook_statuses)})",
            "100 %",
            sent > 0 and ok_hooks == sent,
        ),
        Figure(
            "flood",
            "webhooks stored",
            f"{100 * (stored or 0) / max(sent, 1):.0f} %",
            "100 %",
            sent > 0 and stored == sent,
        ),
        Figure(
            "flood",
            "normal visitor, idle server",
            f"p50 {percentiles(idle)['p50']:.1f} s",
            "",
            None,
        ),
        Figure(
            "flood",
            f"normal visitor during the flood ({visitor_questions} questions)",
            visitor_value,
            "< 2 s",
            bool(times) and not unanswered and p["max"] < 2,
        ),
    ]


async def bad_inputs_case(db: Database, procs: Processes, data_dir: Path) -> list[Figure]:
    url_db = await db.copy_demo()
    _, url = await procs.serve("bad-inputs-serve", base_env(url_db, data_dir, all_channels=True))
    port = int(url.rsplit(":", 1)[1])
    results: list[tuple[str, str]] = []
    for request in bad_requests():
        results.append(
            (request.name, await send("127.0.0.1", port, request, "127.0.0.5", timeout_s=20))
        )
    statuses = Counter(status for _, status in results)
    fives = [f"{name} → {status}" for name, status in results if status.startswith("5")]
    five_hundreds = [f for f in fives if f.endswith("→ 500")]
    return [
        Figure("bad_inputs", "malformed requests tried", len(results), "", None),
        Figure(
            "bad_inputs",
            "statuses",
            ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())),
            "",
            None,
        ),
        Figure("bad_inputs", "500 responses", len(five_hundreds), "0", not five_hundreds),
        *[
            Figure("bad_inputs", "no response: " + name, status, "", None)
            for name, status in results
            if not status.isdigit()
        ],
        Figure("bad_inputs", "5xx responses", len(fives), "0", not fives),
        *[
            Figure(
                "bad_inputs", "5xx: " + f.split(" → ")[0], f.split(" → ")[1], "4xx or 200", False
            )
            for f in fives
        ],
    ]


async def create_staff(procs: Processes, env: dict[str, str], email: str, password: str) -> None:
    """An admin account made as staff make one (``tuvan admin create-user``)."""
    code = await procs.run(
        ["admin", "create-user", email, "--role", "admin"],
        env,
        f"{password}\n{password}\n".encode(),
    )
    if code:
        raise RuntimeError(f"tuvan admin create-user exited with {code}")


async def login_token(http: aiohttp.ClientSession, url: str) -> str:
    """The login form's CSRF token, from its cookie (aiohttp's jar keeps none for an IP)."""
    async with http.get(f"{url}/admin/login") as response:
        await response.read()
        cookie = response.cookies.get("tuvan_admin_login")
    return cookie.value if cookie is not None else ""


async def try_login(
    http: aiohttp.ClientSession, url: str, token: str, email: str, password: str
) -> str:
    """One sign-in through the login form; its status ("error" without a response)."""
    form = {"csrf_token": token, "email": email, "password": password, "next": "/admin/"}
    headers = {"Origin": url, "Cookie": f"tuvan_admin_login={token}"}
    try:
        async with http.post(
            f"{url}/admin/login", data=form, headers=headers, allow_redirects=False
        ) as response:
            await response.read()
            return str(response.status)
    except (aiohttp.ClientError, TimeoutError):
        return "error"


async def login_case(db: Database, procs: Processes, data_dir: Path, *, tries: int) -> list[Figure]:
    url_db = await db.copy_demo()
    env = base_env(url_db, data_dir)
    email = "staff@bench.example.edu.vn"
    password = "Bench-Correct-Password-2026"
    await create_staff(procs, env, email, password)
    _, url = await procs.serve("login-serve", env)
    statuses: Counter[str] = Counter()
    async with client("127.0.0.6", limit=tries, timeout_s=120) as http:
        token = await login_token(http, url)

        async def guess(i: int) -> None:
            statuses[await try_login(http, url, token, email, f"wrong-guess-{i}")] += 1

        await asyncio.gather(*(guess(i) for i in range(tries)))
    verified = await db.scalar(
        url_db, "SELECT count(*) FROM login_attempts WHERE email = :e", e=email
    )
    limit = 5
    return [
        Figure(
            "login",
            f"{tries} parallel wrong passwords: statuses",
            ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())),
            f"≤ {limit} × 401, the rest 429",
            statuses.get("401", 0) <= limit,
        ),
        Figure(
            "login",
            "guesses verified (login attempts recorded)",
            verified,
            f"≤ {limit}",
            (verified or 0) <= limit,
        ),
    ]
