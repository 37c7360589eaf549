"""Hybrid search latency over 100,000 chunks, per retrieval mode, LLM excluded.

The store: ~1,500 real chunks of the UIT, PTIT and ALQAC corpora, embedded for real, grown to
100,000 rows by perturbing them (bench/search_corpus.py says how). Loaded with COPY; the HNSW and
GIN indexes are built after the load (the migration's own definitions) and timed.

Each real question (UIT questions.jsonl, ALQAC questions.jsonl) is embedded once, timed
("embedding": expand_query + embed_queries on the answerer's one embedding thread;
``--embed-thread to_thread`` uses asyncio.to_thread, the earlier code), then searched the way
the answerer does (a session, ``search_chunks(..., limit=10)``); "total" adds that question's
embedding time to its search time. Modes that take seconds at this size run on an evenly spaced
sample of the questions (column n). Hit@10 maps each hit to the real document its row was made
from (UIT: the source file, ALQAC: the article) and is a sanity check, not a quality benchmark:
every passage has ~65 near-copies, so the top 10 holds few distinct passages.

Then keyword search is dissected (rows the OR-tsquery matches, the commonest terms), and two
proposed fixes (bench/search_proposals.py) are measured beside the current code.

    .venv/bin/python bench/search_latency.py [--quick] [--rows 100000] [--slow-sample 40]
        [--embed-thread answerer|to_thread]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

import numpy as np
from bench_embeddings import add_embed_thread_option, embed_executor, prepare_and_embed
from common import (
    Report,
    bench_database,
    bench_settings,
    explain,
    markdown_table,
    percentiles,
    plan_summary,
    progress,
    server_version,
)
from search_latency_modes import modes, time_modes
from search_latency_store import CORPORA, build_store, hit_rate, load_questions, rss_bytes
from search_proposals import (
    _TS_RANK_SQL,
    load_inverted_bm25,
    mib,
    prune_terms,
    word_frequencies,
)
from sqlalchemy import text

from bot.runtime import build_parts
from retrieval.query import question_vector
from retrieval.restore.store import current_restorer, knowledge_signature
from retrieval.search.dense import DENSE_SQL as _DENSE_SQL
from retrieval.search.dense import vector_literal as _vec
from retrieval.search.keyword import FTS_SQL as _FTS_SQL
from retrieval.search.keyword import bm25_index, or_tsquery

TARGET_HYBRID_P95_MS = 60.0
COUNT_SQL = text("SELECT count(*) FROM chunks WHERE tsv @@ to_tsquery('simple', :tsq)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: 8 UIT chunks grown to 500 rows, 8 questions",
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=None, help="cap on questions")
    parser.add_argument("--slow-sample", type=int, default=40, help="questions for slow modes")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--maintenance-work-mem", default="1GB", help="for the index builds")
    parser.add_argument(
        "--prune-df",
        type=float,
        default=0.05,
        help="proposed fix: leave out terms matching more than this share",
    )
    add_embed_thread_option(parser)
    args = parser.parse_args()
    executor = embed_executor(args.embed_thread)
    corpora, max_real = CORPORA, None
    if args.quick:
        corpora, max_real = ("uit-admissions/corpus",), 8
        args.rows, args.queries, args.slow_sample, args.warmup = 500, 8, 4, 2

    suffix = ("_quick" if args.quick else "") + ("_to_thread" if executor else "")
    report = Report("search_latency" + suffix)
    settings = bench_settings()
    parts = build_parts(settings)
    embedder, processor = parts.embedder, parts.processor
    questions = load_questions(args.queries, uit_only=args.quick)
    step = max(1, len(questions) // max(1, args.slow_sample))
    sample = set(range(0, len(questions), step)[: args.slow_sample])

    async with bench_database() as (engine, sessionmaker):
        version = await server_version(engine)
        store, keys = await build_store(
            engine, settings, parts, corpora, args.rows, max_real, args.maintenance_work_mem
        )
        n_rows = store["rows"]
        progress("store ready; building the in-memory BM25 indexes")

        # In-memory indexes, built on first use: timed apart, with the memory they take.
        rss0 = rss_bytes()
        t0 = time.perf_counter()
        async with sessionmaker() as session:
            await bm25_index(session)
        bm25_build_s = time.perf_counter() - t0
        rss1 = rss_bytes()
        t0 = time.perf_counter()
        async with sessionmaker() as session:
            inverted = await load_inverted_bm25(session)
        inverted_build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        async with sessionmaker() as session:
            df = await word_frequencies(session)
        ts_stat_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        async with sessionmaker() as session:
            restorer = await current_restorer(session, sessionmaker, processor.dense_expansions)
        restorer_s = time.perf_counter() - t0
        report.data["restorer_learned_s"] = round(restorer_s, 2)
        progress(f"diacritic restorer learned in {restorer_s:.1f} s")
        # The answerer checks the knowledge's signature once per question (is the restorer
        # still the knowledge's?): its cost at this size.
        signature_ms = []
        for _ in range(30):
            async with sessionmaker() as session:
                t0 = time.perf_counter()
                await knowledge_signature(session)
                signature_ms.append((time.perf_counter() - t0) * 1000)
        report.data["signature_ms"] = percentiles(signature_ms)
        progress(
            "knowledge signature p50 {p50:.2f} ms, p95 {p95:.2f} ms".format(
                **percentiles(signature_ms)
            )
        )
        for q in questions[: args.warmup]:
            await prepare_and_embed(embedder, processor, q.text, executor, restorer)
        for q in questions:
            t0 = time.perf_counter()
            q.prepared, q.vectors = await prepare_and_embed(
                embedder, processor, q.text, executor, restorer
            )
            q.vector = question_vector(q.prepared, q.vectors)
            q.embed_ms = (time.perf_counter() - t0) * 1000
            q.terms = list(q.prepared.terms)

        progress("questions embedded; timing the modes")
        all_modes = modes(settings, inverted, df, args.prune_df * n_rows)
        await time_modes(sessionmaker, questions, sample, all_modes, keys, args.warmup)

        progress("dissecting BM25 and full-text search")
        # Where the current BM25 spends its time: the signature query, or scoring in Python.
        sig_ms, score_ms = [], []
        for i in sorted(sample):
            async with sessionmaker() as session:
                t0 = time.perf_counter()
                index = await bm25_index(session)
                t1 = time.perf_counter()
                index.rank(questions[i].terms or [], settings.search.candidates)
                sig_ms.append((t1 - t0) * 1000)
                score_ms.append((time.perf_counter() - t1) * 1000)

        # Keyword search dissected on the sample: rows matched, before and after pruning.
        matched, matched_pruned = {}, {}
        limit_df = args.prune_df * n_rows
        async with sessionmaker() as session:
            for i in sorted(sample):
                terms = questions[i].terms or []
                for target, ts in (
                    (matched, terms),
                    (matched_pruned, prune_terms(terms, df, limit_df)),
                ):
                    tsq = or_tsquery(ts)
                    target[i] = (
                        int((await session.execute(COUNT_SQL, {"tsq": tsq})).scalar_one())
                        if tsq
                        else 0
                    )

        fts_mode = next(m for m in all_modes if m.name == "keyword (fts)")
        sample_order = sorted(sample)
        slowest = sample_order[int(np.argmax(fts_mode.ms))]
        q_slow = questions[slowest]
        plans: dict[str, list[str]] = {}
        async with sessionmaker() as session:
            await session.execute(text("SELECT set_config('hnsw.ef_search', '64', true)"))
            plans["dense"] = await explain(
                session, _DENSE_SQL.text, {"q": _vec(q_slow.vector), "n": 40}
            )
        async with sessionmaker() as session:
            plans["full-text, slowest question"] = await explain(
                session, _FTS_SQL.text, {"tsq": or_tsquery(q_slow.terms or []), "n": 40}
            )
        fewest = min(matched, key=lambda i: matched[i])
        async with sessionmaker() as session:
            plans[
                f"full-text, most selective sampled question ({matched[fewest]:,} rows)"
            ] = await explain(
                session, _FTS_SQL.text, {"tsq": or_tsquery(questions[fewest].terms or []), "n": 40}
            )
        async with sessionmaker() as session:
            pruned = prune_terms(q_slow.terms or [], df, limit_df)
            plans["proposed: frequent terms pruned, same question"] = await explain(
                session, _TS_RANK_SQL.text, {"tsq": or_tsquery(pruned), "n": 40}
            )

    # -- report ------------------------------------------------------------------------------
    embed_ms = [q.embed_ms for q in questions]
    embed = percentiles(embed_ms)
    table = [
        [
            f"embedding only ({args.embed_thread})",
            len(embed_ms),
            embed["p50"],
            embed["p95"],
            embed["p99"],
            "",
            "",
            "",
            "",
        ]
    ]
    results: dict[str, Any] = {}
    for mode in all_modes:
        idx = sample_order if mode.sampled else range(len(questions))
        s = percentiles(mode.ms)
        t = percentiles([questions[i].embed_ms + ms for i, ms in zip(idx, mode.ms, strict=True)])
        by_question = dict(zip(idx, mode.hits, strict=True))
        hit_all = hit_rate(mode.hits)
        hit_sample = hit_rate([by_question[i] for i in sample_order])
        results[mode.name] = {
            "search_ms": s,
            "total_ms": t,
            "hit_at_10": hit_all,
            "hit_at_10_sample": hit_sample,
        }
        table.append(
            [
                mode.name,
                s["n"],
                s["p50"],
                s["p95"],
                s["p99"],
                t["p50"],
                t["p95"],
                f"{hit_sample:.2f}",
                "" if mode.sampled else f"{hit_all:.2f}",
            ]
        )
    m_all = percentiles(list(matched.values()))
    m_pruned = percentiles(list(matched_pruned.values()))
    buckets = [(0, 1000), (1000, 10_000), (10_000, 30_000), (30_000, 60_000), (60_000, 10**9)]
    by_bucket = []
    fts_by_q = dict(zip(sample_order, fts_mode.ms, strict=True))
    for lo, hi in buckets:
        ms = [fts_by_q[i] for i, m in matched.items() if lo <= m < hi]
        if ms:
            p = percentiles(ms)
            label = f"{lo:,}-{hi:,}" if hi < 10**9 else f">= {lo:,}"
            by_bucket.append([label, len(ms), p["p50"], p["p95"]])
    sample_terms = {t for i in sample for t in questions[i].terms or [] if "_" not in t}
    common = sorted(((t, df.get(t, 0)) for t in sample_terms), key=lambda kv: -kv[1])[:15]
    bm25_mem = rss1 - rss0
    report.data.update(
        {
            "server": version,
            "embedder": embedder.name,
            "store": store,
            "search_settings": settings.search.model_dump(mode="json"),
            "questions": len(questions),
            "slow_sample": len(sample),
            "warmup": args.warmup,
            "embedding_ms": embed,
            "embed_thread": args.embed_thread,
            "modes": results,
            "bm25": {
                "build_s": round(bm25_build_s, 2),
                "rss_growth_bytes": bm25_mem,
                "signature_query_ms": percentiles(sig_ms),
                "scoring_ms": percentiles(score_ms),
            },
            "inverted_bm25": {
                "build_s": round(inverted_build_s, 2),
                "matrix_bytes": inverted.nbytes,
            },
            "ts_stat_s": round(ts_stat_s, 2),
            "prune_df": args.prune_df,
            "fts_matched_rows": m_all,
            "fts_matched_rows_pruned": m_pruned,
            "fts_by_matched_rows": by_bucket,
            "most_frequent_sample_words": common,
            "slowest_fts_question": {
                "question": q_slow.text,
                "terms": q_slow.terms,
                "ms": fts_by_q[slowest],
                "matched_rows": matched[slowest],
            },
            "plans": plans,
            "target_hybrid_p95_ms": TARGET_HYBRID_P95_MS,
        }
    )
    builds = store["index_builds"]
    report.print_header(
        [
            f"{version}; embedder {embedder.name}; candidates {settings.search.candidates} per "
            f"retriever, rrf_k {settings.search.rrf_k}, ef_search {settings.search.hnsw_ef_search}",
            f"store: {n_rows:,} chunks in {store['documents']:,} documents "
            f"({store['sizes']['table']}; HNSW {store['sizes']['hnsw']}, GIN "
            f"{store['sizes']['gin']}) = {store['real_chunks']:,} real chunks of "
            f"{', '.join(corpora)}, embedded for real + "
            f"{store['synthetic_chunks']:,} synthetic: real chunk a + a line of 5-12 words of real "
            f"chunk b, keyword text a's + the line's, vector normalise(v_a + 0.25 v_b + noise of "
            f"norm 0.25): mean cosine to v_a {store['mean_cosine_synthetic_to_source']:.3f}",
            f"load: chunking {store['chunking_s']} s, passage embedding "
            f"{store['passage_embedding_s']} s (bench/.cache), COPY {store['copy_s']} s; "
            "index builds after the load "
            f"(maintenance_work_mem {args.maintenance_work_mem}): "
            + ", ".join(f"{n} {b['seconds']} s" for n, b in builds.items())
            + f"; in-memory BM25 (retrieval.search.keyword) build {bm25_build_s:.1f} s, "
            + f"+{mib(bm25_mem)} RSS",
            f"{len(questions)} questions (UIT + ALQAC; n = {len(sample)} evenly spaced for the "
            f"slow modes), {args.warmup} warm-up; limit 10",
        ]
    )
    print(
        markdown_table(
            [
                "mode (ms)",
                "n",
                "search p50",
                "search p95",
                "search p99",
                "total p50",
                "total p95",
                f"Hit@10 (the {len(sample)})",
                "Hit@10 (all)",
            ],
            table,
        )
    )
    for name in (
        "hybrid (fts)",
        "hybrid (bm25)",
        "proposed: hybrid (bm25, inverted index)",
        "proposed: hybrid (fts, pruned)",
    ):
        p95 = results[name]["search_ms"]["p95"]
        verdict = "meets" if p95 <= TARGET_HYBRID_P95_MS else "MISSES"
        print(
            f"- {name}: search p95 {p95:.1f} ms {verdict} the {TARGET_HYBRID_P95_MS:.0f} ms target"
        )
    print(
        f"\nFull-text OR-query, rows matched per question (sample): p50 {m_all['p50']:,.0f}, "
        f"p95 {m_all['p95']:,.0f} of {n_rows:,}. Keyword (fts) latency by rows matched:\n"
    )
    print(markdown_table(["rows matched", "questions", "fts p50 (ms)", "fts p95 (ms)"], by_bucket))
    print(
        "\nCommonest words of the sampled questions (chunks containing them): "
        + ", ".join(f"`{t}` {c:,}" for t, c in common)
    )
    print(
        f"\nSlowest keyword question ({fts_by_q[slowest]:,.0f} ms, {matched[slowest]:,} rows "
        f"matched, {len(q_slow.terms or [])} terms): {q_slow.text!r}\nterms: "
        + " ".join(q_slow.terms or [])
    )
    print(
        f"\nCurrent BM25 per query: signature query p50 {percentiles(sig_ms)['p50']:.1f} ms, "
        f"scoring (retrieval.search.keyword) p50 {percentiles(score_ms)['p50']:.1f} ms / p95 "
        f"{percentiles(score_ms)['p95']:.1f} ms."
    )
    print(
        f"Proposed inverted-index BM25: build {inverted_build_s:.1f} s, matrix "
        f"{mib(inverted.nbytes)}. Proposed pruning (terms in > {args.prune_df:.0%} of chunks "
        f"left out; ts_stat refresh {ts_stat_s:.1f} s) leaves p50 {m_pruned['p50']:,.0f} / "
        f"p95 {m_pruned['p95']:,.0f} rows matched."
    )
    for title, plan in plans.items():
        print(f"\nEXPLAIN (ANALYZE) {title}:\n```\n" + "\n".join(plan_summary(plan)) + "\n```")
    report.finish()


if __name__ == "__main__":
    asyncio.run(main())
