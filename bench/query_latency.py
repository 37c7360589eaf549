"""What reading a question costs beside embedding it: restoration, expansion, splitting.

For each development question set, asked as written and folded (no diacritics), every question
is read as the answerer reads it (``retrieval.query.prepare_query`` with the restorer learned from
that set's knowledge: passages and FAQ) and embedded as the answerer embeds it (its
``dense_texts`` in one ``embed_queries`` batch: the question, or its parts). Timed separately:

- "read": prepare_query (restore when needed, expand, split);
- "embed 1": one ``embed_queries`` call with the whole question alone (the earlier cost);
- "embed": the batch the answerer now sends (the parts of a multi-part question).

The target (issue 1/6): restoration at most 10 % of the query-embedding time, and a multi-part
question no more than one embedding per part, in one batch.

    .venv/bin/python bench/query_latency.py [--limit 300] [--quick]

``--quick`` (a smoke run): 3 questions per file.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from common import DATASETS, Report, bench_settings, markdown_table, percentiles
from question_sets import dev_sets, knowledge_texts

from bot.evaluation.data import read_faq_items, read_faq_queries, read_questions
from bot.runtime import build_parts
from retrieval.query import prepare_query
from retrieval.restore.ngrams import NgramCounts
from retrieval.restore.restorer import DiacriticRestorer
from retrieval.text.folding import fold


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=300, help="questions per file")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 3 questions per file")
    args = ap.parse_args()
    if args.quick:
        args.limit = 3
    parts = build_parts(bench_settings())
    embedder, processor = parts.embedder, parts.processor
    embedder.embed_queries(["khởi động"])  # load the model before timing
    report = Report("query_latency" + ("_quick" if args.quick else ""))
    rows: list[list[Any]] = []
    totals: dict[str, list[float]] = {"read": [], "embed1": [], "embed": []}
    multi: dict[str, list[float]] = {"embed1": [], "embed": [], "parts": []}
    for qs in dev_sets(DATASETS):
        if qs.questions is None:
            continue  # an FAQ set only (UTEHY)
        restorer = DiacriticRestorer(
            NgramCounts().add_texts(knowledge_texts(qs)), processor.dense_expansions
        )
        files = [("questions", [q.question for q in read_questions(qs.questions)])]
        if qs.faq is not None and qs.faq_queries is not None:
            items = read_faq_items(qs.faq)
            queries = read_faq_queries(qs.faq_queries, {i.id for i in items})
            files.append(("faq queries", [q.query for q in queries]))
        for label, texts in files:
            for form in ("written", "folded"):
                asked = [t if form == "written" else fold(t) for t in texts[: args.limit]]
                read, embed1, embed = [], [], []
                restored = split = 0
                for text in asked:
                    t0 = time.perf_counter()
                    prepared = prepare_query(text, processor, restorer)
                    t1 = time.perf_counter()
                    embedder.embed_queries([prepared.dense])
                    t2 = time.perf_counter()
                    embedder.embed_queries(prepared.dense_texts)
                    t3 = time.perf_counter()
                    read.append((t1 - t0) * 1000)
                    embed1.append((t2 - t1) * 1000)
                    embed.append((t3 - t2) * 1000)
                    restored += prepared.restored is not None
                    if prepared.parts:
                        split += 1
                        multi["embed1"].append((t2 - t1) * 1000)
                        multi["embed"].append((t3 - t2) * 1000)
                        multi["parts"].append(len(prepared.parts))
                totals["read"] += read
                totals["embed1"] += embed1
                totals["embed"] += embed
                rows.append(
                    [
                        qs.name,
                        label,
                        form,
                        len(asked),
                        restored,
                        split,
                        f"{statistics.mean(read):.2f}",
                        f"{percentiles(read)['p95']:.2f}",
                        f"{statistics.mean(embed1):.1f}",
                        f"{100 * statistics.mean(read) / statistics.mean(embed1):.1f} %",
                    ]
                )
    header = [
        "set",
        "questions",
        "form",
        "n",
        "restored",
        "split",
        "read ms (mean)",
        "read p95",
        "embed 1 ms (mean)",
        "read / embed",
    ]
    report.print_header([f"embedder {embedder.name}; read = restore + expand + split"])
    print(markdown_table(header, rows))
    share = 100 * statistics.mean(totals["read"]) / statistics.mean(totals["embed1"])
    print(
        f"\nall questions: read {statistics.mean(totals['read']):.2f} ms, one embedding "
        f"{statistics.mean(totals['embed1']):.1f} ms: {share:.1f} % (target ≤ 10 %)"
    )
    if multi["parts"]:
        ratio = statistics.mean(multi["embed"]) / statistics.mean(multi["embed1"])
        print(
            f"multi-part questions: {len(multi['parts'])}, {statistics.mean(multi['parts']):.2f} "
            f"parts on average; their batch {statistics.mean(multi['embed']):.1f} ms against "
            f"{statistics.mean(multi['embed1']):.1f} ms for the whole question alone "
            f"({ratio:.2f}x, for {statistics.mean(multi['parts']):.2f} embeddings)"
        )
    report.data.update(
        {
            "rows": [dict(zip(header, r, strict=True)) for r in rows],
            "read_share_of_embedding_percent": round(share, 2),
            "multi_part": {k: statistics.mean(v) if v else None for k, v in multi.items()},
        }
    )
    report.finish()


if __name__ == "__main__":
    main()
