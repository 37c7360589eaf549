"""How long the admin's report pages take on a busy store: the conversation list (with and
without an accent-insensitive search), a transcript, the "Cần xem lại" queue and its grouping
(cold: every phrasing embedded; warm: from the cache), and the dashboard's aggregations.

The store is synthetic: ``--conversations`` threads over the last 90 days on four channels, five
question/answer pairs each (so 10 messages a thread); a fifth of the answers are the fallback,
asked in ``--phrasings`` different ways; the rest FAQ or document answers with their scores.
Rows are generated inside PostgreSQL (generate_series), then ANALYZE.

    .venv/bin/python bench/admin_reports.py [--conversations 20000] [--phrasings 400] [--runs 5]
        [--quick]

``--quick`` (a smoke run): 200 conversations, 40 phrasings, one run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from common import bench_database, bench_settings, machine, server_version
from sqlalchemy import text

from admin.conversation_store import ConversationFilters, list_conversations, transcript
from admin.dashboard import MESSAGES_PER_DAY, daily_counts, reply_latency, tier_counts
from admin.period import Period
from admin.question_groups import QuestionVectors, group_questions
from admin.recheck_queue import MAX_ITEMS, queue_items
from bot.core.types import CHANNELS
from bot.runtime import build_parts

TOPICS = [
    "học phí",
    "điểm chuẩn",
    "ký túc xá",
    "học bổng",
    "hạn nộp hồ sơ",
    "chỉ tiêu",
    "thực tập",
    "câu lạc bộ",
    "xe buýt",
    "bảo hiểm y tế",
]
FORMS = [
    "{t} ngành {m} năm nay thế nào?",
    "cho em hỏi {t} của ngành {m} ạ",
    "{t} {m} bao nhiêu vậy ad",
    "Trường có thông tin về {t} cho sinh viên ngành {m} không?",
]
MAJORS = ["CNTT", "kinh tế", "du lịch", "ngôn ngữ Anh", "điện tử", "kế toán", "luật", "y tế"]

_FILL = text(
    """
    WITH k AS (
        INSERT INTO contacts (channel, external_id, name)
        SELECT (ARRAY['telegram','messenger','zalo','web'])[1 + g % 4], 'bench-' || g,
               'Người hỏi ' || g
        FROM generate_series(1, :n) g
        RETURNING id, channel
    ), c AS (
        INSERT INTO conversations (contact_id, channel, updated_at)
        SELECT id, channel, now() FROM k
        RETURNING id, channel
    ), q AS (
        INSERT INTO messages (conversation_id, channel, direction, author, kind, text, status,
                              created_at, done_at)
        SELECT c.id, c.channel, 'in', 'user', 'text',
               (CAST(:phrasings AS text[]))
                   [1 + (c.id * 7 + p) % cardinality(CAST(:phrasings AS text[]))],
               'answered',
               now() - make_interval(secs => ((c.id * 97 + p * 13) % (90 * 86400))),
               now() - make_interval(secs => ((c.id * 97 + p * 13) % (90 * 86400)))
                     + make_interval(secs => 0.2 + ((c.id + p) % 40) / 10.0)
        FROM c CROSS JOIN generate_series(1, 5) p
        RETURNING id, conversation_id, channel, created_at, done_at
    )
    INSERT INTO messages (conversation_id, channel, direction, author, kind, text, tier, details,
                          status, reply_to_id, created_at, done_at)
    SELECT conversation_id, channel, 'out', 'bot', 'text', 'trả lời',
           CASE WHEN id % 5 = 0 THEN 'fallback' WHEN id % 5 = 1 THEN 'faq' ELSE 'documents' END,
           CASE WHEN id % 5 = 0 THEN '{"scores": {"doc_best": 0.7, "t_doc": 0.84}}'::jsonb
                WHEN id % 5 = 1 THEN '{"scores": {"faq": 0.95, "t_faq": 0.925}}'::jsonb
                ELSE jsonb_build_object('scores', jsonb_build_object('t_doc', 0.84, 'chunks',
                     jsonb_build_array(jsonb_build_object('similarity', 0.84 + (id % 7) / 100.0))))
           END,
           'sent', id, done_at, done_at
    FROM q
    """
)


def phrasings(count: int) -> list[str]:
    found = []
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        major = MAJORS[(i // len(TOPICS)) % len(MAJORS)]
        form = FORMS[(i // (len(TOPICS) * len(MAJORS))) % len(FORMS)]
        found.append(form.format(t=topic, m=major) + ("" if i < 320 else f" (lần {i})"))
    return found


async def timed(runs: int, work: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    """Median milliseconds of ``runs`` runs, and the last result."""
    samples = []
    result = None
    for _ in range(runs):
        started = time.perf_counter()
        result = await work()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), result


async def main(args: argparse.Namespace) -> None:
    settings = bench_settings()
    parts = build_parts(settings)
    async with bench_database() as (engine, sm):
        started = time.perf_counter()
        async with sm.begin() as session:
            await session.execute(
                _FILL, {"n": args.conversations, "phrasings": phrasings(args.phrasings)}
            )
        async with engine.begin() as conn:
            await conn.execute(text("ANALYZE"))
            messages = await conn.scalar(text("SELECT count(*) FROM messages"))
        print(f"# admin reports, {machine()}; {await server_version(engine)}")
        print(
            f"{args.conversations} conversations, {messages} messages, filled in "
            f"{time.perf_counter() - started:.1f} s; median of {args.runs} runs\n"
        )
        rows: list[tuple[str, float, str]] = []
        month, quarter = Period.from_query({"days": "30"}), Period.from_query({"days": "90"})

        async def listing(**query: str) -> Any:
            async with sm() as session:
                return await list_conversations(session, ConversationFilters.from_query(query), 25)

        for label, query in [
            ("conversations, page 1", {}),
            ("conversations, channel=zalo, page 3", {"channel": "zalo", "page": "3"}),
            ("conversations, search 'ky tuc xa'", {"q": "ky tuc xa"}),
            ("conversations, search 'ký túc xá'", {"q": "ký túc xá"}),
        ]:
            ms, (_, total) = await timed(args.runs, lambda q=query: listing(**q))
            rows.append((label, ms, f"{total} matching"))

        async def one_transcript() -> Any:
            async with sm() as session:
                return await transcript(session, 1)

        ms, found = await timed(args.runs, one_transcript)
        rows.append(("transcript (10 messages)", ms, f"{len(found.lines)} lines"))

        for label, period in (("30 days", month), ("90 days", quarter)):

            async def recheck(p: Period = period) -> Any:
                async with sm() as session:
                    return await queue_items(session, p, parts.processor)

            ms, (asked, _) = await timed(args.runs, recheck)
            rows.append(
                (f"Cần xem lại queue, {label}", ms, f"{len(asked)} answers (cap {MAX_ITEMS})")
            )

        vectors = QuestionVectors()
        cold, groups = await timed(
            1, lambda: group_questions(asked, vectors, parts.embedder, parts.processor)
        )
        unique = len({a.question for a in asked})
        rows.append(("grouping, cold cache", cold, f"{unique} phrasings -> {len(groups)} groups"))
        warm, _ = await timed(
            args.runs, lambda: group_questions(asked, vectors, parts.embedder, parts.processor)
        )
        rows.append(("grouping, warm cache", warm, "embeddings from the cache"))

        for label, period in (("30 days", month), ("90 days", quarter)):

            async def dashboard(p: Period = period) -> Any:
                async with sm() as session:
                    await daily_counts(session, MESSAGES_PER_DAY, p, CHANNELS)
                    await tier_counts(session, p)
                    return await reply_latency(session, p)

            ms, _ = await timed(args.runs, dashboard)
            rows.append((f"dashboard aggregations, {label}", ms, "3 queries"))
        print("| what | median ms | note |\n|---|---:|---|")
        for label, ms, note in rows:
            print(f"| {label} | {ms:.1f} | {note} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=20_000)
    parser.add_argument("--phrasings", type=int, default=400)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="a smoke run on a small store")
    args = parser.parse_args()
    if args.quick:
        args.conversations, args.phrasings, args.runs = 200, 40, 1
    asyncio.run(main(args))
