"""How often the near-miss guard lets the right FAQ through and stops the wrong one.

On an evaluation set's faq.jsonl + faq_queries.jsonl (see the datasets' README):

(a) paraphrase rows: check(query, faq[expected].question) should pass;
(b) near_miss rows: check(query, faq[confusable_with].question) should fail;
(c) near_miss rows with an expected FAQ: check(query, faq[expected].question) should pass.

The guard runs with the bundled vocabulary plus a deployment override, as a university would
configure it: by default the UIT override below (the school's own names, and its partner BCU as
the name of its international programme); ``--vocabulary FILE`` uses another, ``--bundled-only``
none. The failures are listed with the guard's reason.

    .venv/bin/python bench/guard_quality.py [--dataset DIR] [--vocabulary FILE | --bundled-only]
        [--quick]

``--quick`` (a smoke run) checks the first 10 paraphrases and 10 near misses only.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bot.core.settings import TextSettings
from retrieval.guard.checks import NearMissGuard
from retrieval.guard.vocabulary import load_guard

DEFAULT_DATASET = Path("/work/shared/datasets/uit-admissions")

# What the UIT admissions office would put in TUVAN_TEXT__GUARD_VOCABULARY_FILE.
UIT_OVERRIDE = (Path(__file__).parent / "uit-guard.yaml").read_text(encoding="utf-8")


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _of_kind(rows: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [row for row in rows if row["kind"] == kind]


def _guard(args: argparse.Namespace) -> NearMissGuard:
    if args.bundled_only:
        return load_guard()
    if args.vocabulary:
        return load_guard(TextSettings(guard_vocabulary_file=args.vocabulary))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "uit-guard.yaml"
        path.write_text(UIT_OVERRIDE, encoding="utf-8")
        return load_guard(TextSettings(guard_vocabulary_file=path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--vocabulary", type=Path, help="guard override YAML")
    group.add_argument("--bundled-only", action="store_true")
    parser.add_argument("--quiet", action="store_true", help="rates only, no failure list")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 10 queries of each kind")
    args = parser.parse_args()

    guard = _guard(args)
    faq = {row["id"]: row["question"] for row in _jsonl(args.dataset / "faq.jsonl")}
    queries = _jsonl(args.dataset / "faq_queries.jsonl")
    if args.quick:
        queries = [r for kind in ("paraphrase", "near_miss") for r in _of_kind(queries, kind)[:10]]

    # (name, query, faq id, should pass)
    cases: list[tuple[str, str, str, bool]] = []
    for row in queries:
        if row["kind"] == "paraphrase":
            cases.append(("a", row["query"], row["expected_faq"], True))
        elif row["kind"] == "near_miss":
            cases.append(("b", row["query"], row["confusable_with"], False))
            if row.get("expected_faq"):
                cases.append(("c", row["query"], row["expected_faq"], True))

    started = time.perf_counter()
    results = [(c, guard.check(c[1], faq[c[2]])) for c in cases]
    elapsed = time.perf_counter() - started

    titles = {
        "a": "(a) paraphrase passes (target >= 95%)",
        "b": "(b) near miss blocked against the look-alike (target >= 70%)",
        "c": "(c) near miss passes against its right FAQ",
    }
    for part, title in titles.items():
        rows = [(c, v) for c, v in results if c[0] == part]
        good = sum(v.ok == c[3] for c, v in rows)
        print(f"{title}: {good}/{len(rows)} = {good / max(len(rows), 1):.1%}")
    each = elapsed / len(cases) * 1e6
    print(f"{len(cases)} checks in {elapsed * 1000:.1f} ms ({each:.0f} µs each)")

    if args.quiet:
        return
    for part in titles:
        failures = [(c, v) for c, v in results if c[0] == part and v.ok != c[3]]
        if not failures:
            continue
        print(f"\nfailures ({part}):")
        for (_, query, faq_id, _), verdict in failures:
            print(f"  {query}\n    vs {faq_id}: {faq[faq_id]}")
            if verdict.ok:
                mine, theirs = _show(guard.facets(query)), _show(guard.facets(faq[faq_id]))
                print(f"    passed; facets {mine} / {theirs}")
            else:
                print(f"    blocked: {verdict.reason}")


def _show(facets: dict[str, frozenset[str]]) -> str:
    return "{" + "; ".join(f"{k}: {', '.join(sorted(v))}" for k, v in facets.items()) + "}"


if __name__ == "__main__":
    main()
