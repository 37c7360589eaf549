"""How to embed stored FAQ questions and variants so that a student's question meets them (2/6).

    .venv/bin/python bench/faq_forms.py [--datasets ../shared/datasets] [--quick]

A student's question is read and embedded one way (``retrieval.query.prepare_query``: marks put
back, abbreviations written out, e5's "query: " prefix). The FAQ's own questions and variants can
be stored in several forms; each is compared here on the dev FAQ sets (UIT, ViRHE4QA), every query
asked as written and folded:

- ``passage, raw``: the text as staff typed it, e5 "passage: " (what tuvan stored before 2/6);
- ``query, raw``: the text as typed, "query: ";
- ``passage, read``: read like a question (restored, expanded), "passage: ";
- ``query, read``: read like a question, "query: " — exactly what the question gets.

Every entry stores its question and the question without diacritics (the ``folded`` variants
tuvan adds on save); each form is measured with those copies and without them. Per form: how
often the nearest entry is the expected one (paraphrases), the best paraphrase coverage at which
precision stays ≥ 0.98 with a plain cosine threshold (no guard, no margin: what the embedding
alone allows), and whether each stored text, asked verbatim, finds its own entry first and at
what cosine. ``--quick`` (a smoke run): the first entries of each set and a few queries.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from common import DATASETS, Report, bench_settings, markdown_table
from question_sets import dev_sets, knowledge_texts
from small_sets import faq_sample

from bot.evaluation.data import FaqQuery, read_faq_items, read_faq_queries
from bot.runtime import build_parts
from retrieval.query import prepare_query, question_vector
from retrieval.restore.ngrams import NgramCounts
from retrieval.restore.restorer import DiacriticRestorer
from retrieval.text.folding import fold

Embed = Callable[[list[str]], np.ndarray[Any, Any]]


def nearest(
    queries: np.ndarray[Any, Any], stored: np.ndarray[Any, Any], owners: Sequence[str]
) -> list[tuple[str, float]]:
    """For each query, the entry whose question or variant is closest, and that cosine."""
    sims = queries @ stored.T
    best = sims.argmax(axis=1)
    return [(owners[j], float(sims[i, j])) for i, j in enumerate(best)]


def best_coverage(
    found: Sequence[tuple[str, float]], queries: Sequence[FaqQuery], precision: float
) -> tuple[float, float]:
    """(coverage, threshold): the most paraphrases answered right by a cosine threshold alone
    while precision over every answered query stays at ``precision``."""
    paraphrases = sum(q.kind == "paraphrase" for q in queries)
    best = (0.0, 1.0)
    for t in sorted({round(s, 3) for _, s in found}):
        answered = [(f, q) for f, q in zip(found, queries, strict=True) if f[1] >= t]
        if not answered:
            continue
        right = sum(f[0] == q.expected_faq for f, q in answered)
        covered = sum(f[0] == q.expected_faq and q.kind == "paraphrase" for f, q in answered)
        if right / len(answered) >= precision and covered / paraphrases > best[0]:
            best = (covered / paraphrases, t)
    return best


def embed_read(
    texts: Sequence[str], embed: Embed, processor: Any, restorer: DiacriticRestorer
) -> np.ndarray[Any, Any]:
    """Each text read as the answerer reads a question, embedded with ``embed``."""
    out = []
    for text in texts:
        prepared = prepare_query(text, processor, restorer)
        out.append(question_vector(prepared, embed(prepared.dense_texts)))
    return np.vstack(out)


def main(argv: Sequence[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    ap.add_argument("--quick", action="store_true", help="a smoke run: a few entries a set")
    args = ap.parse_args(argv)
    parts = build_parts(bench_settings())
    embedder, processor = parts.embedder, parts.processor
    report = Report("faq_forms" + ("_quick" if args.quick else ""))
    report.print_header([f"embedder {embedder.name}"])
    rows: list[list[Any]] = []
    for qs in dev_sets(args.datasets):
        if qs.faq is None or qs.faq_queries is None:
            continue
        items = read_faq_items(qs.faq)
        queries = read_faq_queries(qs.faq_queries, {i.id for i in items})
        if args.quick:
            items, queries = faq_sample(items, queries)
        restorer = DiacriticRestorer(
            NgramCounts().add_texts(knowledge_texts(qs)), processor.dense_expansions
        )

        stored_texts: list[str] = []
        owners: list[str] = []
        copies: list[bool] = []  # the folded copy of an entry's question (origin `folded`)
        for item in items:
            for text in dict.fromkeys((item.question, *item.variants, fold(item.question))):
                stored_texts.append(text)
                owners.append(item.id)
                copies.append(text == fold(item.question) and text != item.question.lower())
        kept = np.array([not c for c in copies])
        forms: dict[str, np.ndarray[Any, Any]] = {
            "passage, raw": embedder.embed_passages(stored_texts),
            "query, raw": embedder.embed_queries(stored_texts),
            "passage, read": embed_read(stored_texts, embedder.embed_passages, processor, restorer),
            "query, read": embed_read(stored_texts, embedder.embed_queries, processor, restorer),
        }
        asked = {
            "written": embed_read(
                [q.query for q in queries], embedder.embed_queries, processor, restorer
            ),
            "folded": embed_read(
                [fold(q.query) for q in queries], embedder.embed_queries, processor, restorer
            ),
        }
        own = embed_read(
            stored_texts, embedder.embed_queries, processor, restorer
        )  # stored texts asked verbatim
        for (form, all_stored), with_copies in itertools.product(forms.items(), (True, False)):
            stored = all_stored if with_copies else all_stored[kept]
            who = owners if with_copies else [o for o, k in zip(owners, kept, strict=True) if k]
            mine = own if with_copies else own[kept]
            self_found = nearest(mine, stored, who)
            self_first = statistics.fmean(f == o for (f, _), o in zip(self_found, who, strict=True))
            self_sims = [float(a @ b) for a, b in zip(mine, stored, strict=True)]
            if not with_copies:
                form = f"{form}, no folded copies"
            for how, vectors in asked.items():
                found = nearest(vectors, stored, who)
                para = [
                    (f, q) for f, q in zip(found, queries, strict=True) if q.kind == "paraphrase"
                ]
                top1 = statistics.fmean(f[0] == q.expected_faq for f, q in para)
                coverage, threshold = best_coverage(found, queries, 0.98)
                rows.append(
                    [
                        qs.name,
                        form,
                        how,
                        f"{top1:.3f}",
                        f"{coverage:.3f} @ {threshold:.3f}",
                        f"{self_first:.3f}",
                        f"{min(self_sims):.3f}",
                    ]
                )
    header = [
        "FAQ set",
        "stored as",
        "queries",
        "nearest is right (paraphrases)",
        "coverage at precision 0.98 (cosine only)",
        "stored text asked verbatim: own entry first",
        "lowest self-cosine",
    ]
    print(markdown_table(header, rows))
    report.data["rows"] = [dict(zip(header, r, strict=True)) for r in rows]
    report.finish()


if __name__ == "__main__":
    main(sys.argv[1:])
