"""Fit tier 1's scorer on every development FAQ set, one set left out at a time, and write it.

    .venv/bin/python bench/fit_decisions.py [--datasets DIR] [--write] [--quick] [--out DIR]
        [--documents | --only-documents]

With ``--documents``, tier 2's answer-or-abstain scorer too (``bot.evaluation.documents_fit``),
on the question sets ``answer_shape.py retrieve`` cached (UIT, ALQAC, PTIT pages, the demo's
questions and dialogues): each question's passages composed with no scorer, its answer's
features and whether it holds every key fact. ``--only-documents`` fits and writes tier 2's
scorer alone, leaving tier 1's as it is.

Collects each FAQ set's evidence (``bot.evaluation.faq_examples``: every query as written and
folded, weighed as the answerer weighs it; cached in bench/.cache by the code and data it came
from), fits the scorer and its operating points with each set left out in turn
(``bot.evaluation.fitting``), prints the left-out figures for every risk target, and with
``--write`` fits on all sets and writes ``retrieval/data/decisions.json`` with those figures in
it. ``--quick`` (a smoke run; never ``--write`` it) takes each set's first entries and a few
queries of each kind, and writes its report to bench/results/fit-quick.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import pickle
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from common import CACHE_DIR, DATASETS, RESULTS_DIR, bench_settings, machine, markdown_table
from small_sets import faq_sample

from bot.evaluation.data import read_faq_items, read_faq_queries
from bot.evaluation.faq_examples import FaqSetEvidence, collect_faq_evidence
from bot.evaluation.fitting import (
    RISKS,
    choose_points,
    fit_faq_scorer,
    leave_one_out,
    reliability,
)
from bot.runtime import build_parts
from retrieval.decisions.store import DECISIONS_FILE, VERSION, Decision, decision_to_json

ROOT = Path(__file__).resolve().parent.parent
FAQ_SETS = {
    "UIT": "uit-admissions",
    "ViRHE4QA": "virhe4qa",
    "UTEHY": "utehy-fanpage",
}
# What the evidence depends on: a change here re-collects it.
SOURCES = (
    "retrieval/faq",
    "retrieval/guard",
    "retrieval/data/language.yaml",
    "retrieval/data/abbreviations.yaml",
    "retrieval/data/stopwords.yaml",
    "retrieval/query.py",
    "retrieval/restore",
    "retrieval/text",
    "bot/answer/lookup.py",
    "bot/evaluation/faq_examples.py",
)


def _fingerprint(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for rel in SOURCES:
        for f in sorted((ROOT / rel).rglob("*") if (ROOT / rel).is_dir() else [ROOT / rel]):
            if f.is_file() and f.suffix in (".py", ".yaml", ".txt"):
                digest.update(f.read_bytes())
    for p in paths:
        digest.update(p.read_bytes())
    return digest.hexdigest()[:16]


async def evidence(datasets: Path, quick: bool = False) -> list[FaqSetEvidence]:
    """Each FAQ set's evidence; ``quick``: each set's first entries and a few queries
    (bench/small_sets.py), collected every time (a smoke run is there to run the code). Every
    set, even then: a fold left out fits on the others, each left out in turn, so fewer than
    three leave an inner fit with nothing to fit on."""
    parts = build_parts(bench_settings())
    out = []
    for name, folder in FAQ_SETS.items():
        faq, queries = datasets / folder / "faq.jsonl", datasets / folder / "faq_queries.jsonl"
        key = f"faq-evidence-{name}-None-{_fingerprint([faq, queries])}.pkl"
        cached = CACHE_DIR / key
        if cached.exists() and not quick:
            out.append(pickle.loads(cached.read_bytes()))
            print(f"{name}: evidence from {cached.name}", flush=True)
            continue
        started = time.perf_counter()
        items = read_faq_items(faq)
        asked = read_faq_queries(queries, {i.id for i in items})
        if quick:
            items, asked = faq_sample(items, asked)
        found = await collect_faq_evidence(parts, name, items, asked)
        if not quick:
            CACHE_DIR.mkdir(parents=True, exist_ok=True)
            cached.write_bytes(pickle.dumps(found))
        print(f"{name}: {len(found.examples)} examples in {time.perf_counter() - started:.0f} s")
        out.append(found)
    return out


def _rates_row(name: str, form: str, risk: float, threshold: float, r: Any) -> list[Any]:
    return [
        name,
        form,
        f"{risk:g}",
        f"{threshold:.3f}",
        f"{r.precision:.3f}",
        f"{r.coverage:.3f}",
        f"{r.false_accept_near_miss:.3f}",
        f"{r.false_accept_out_of_scope:.3f}",
        f"{r.answered}",
    ]


def report(sets: list[FaqSetEvidence]) -> tuple[str, dict[str, Any]]:
    folds = leave_one_out(sets)
    header = [
        "left out",
        "form",
        "risk",
        "threshold",
        "precision",
        "coverage",
        "FA near",
        "FA oos",
        "answered",
    ]
    rows = []
    figures: dict[str, Any] = {}
    for fold in folds:
        for risk in RISKS:
            t = fold.threshold(risk)
            for form in ("written", "folded"):
                r = fold.scored.rates(fold.point(risk), form)
                rows.append(_rates_row(fold.name, form, risk, t, r))
                figures.setdefault(fold.name, {}).setdefault(str(risk), {})[form] = r.as_dict()
    lines = ["## Tier 1, each set left out", "", markdown_table(header, rows), ""]
    lines += ["## Reliability of the left-out probabilities (likeliest candidate)", ""]
    rel_rows = [
        [fold.name, b, n, f"{p:.3f}", f"{y:.3f}"]
        for fold in folds
        for b, n, p, y in reliability(fold.scored)
    ]
    lines += [markdown_table(["left out", "p", "n", "mean p", "right"], rel_rows), ""]
    return "\n".join(lines), figures


DOC_SETS = ("UIT", "ALQAC", "PTIT", "demo", "demo-dialogues")


async def documents_evidence(quick: bool = False) -> list[Any]:
    """Each cached question set's documents answers, composed with no tier-2 scorer; ``quick``:
    from the caches of ``answer_shape.py --quick``."""
    from dataclasses import replace

    from answer_shape import cache_path
    from found_reading import read_again

    from bot.answer.answerer import Answerer
    from bot.answer.found import Timer
    from bot.answer.replies import answer_body
    from bot.evaluation.documents_fit import DocExample, DocSet
    from bot.evaluation.metrics import facts_found
    from retrieval.decisions.store import Decisions

    parts = build_parts(bench_settings())
    parts = replace(parts, decisions=Decisions(faq=parts.decisions.faq))
    answerer = Answerer(parts, None)  # type: ignore[arg-type]  # composing reads no store
    out = []
    for name in DOC_SETS:
        path = cache_path(name, quick)
        if not path.exists():
            how = "--quick" if quick else "retrieve"
            print(f"{name}: no cache (run answer_shape.py {how} --sets {name})")
            continue
        data = pickle.loads(path.read_bytes())
        examples = []
        for (qid, form), found in data["found"].items():
            q = next(q for q in data["questions"] if q.id == qid)
            found = read_again(found, parts)  # read again by the code as it is now
            answer = await answerer.answer_found(found, Timer())
            features = (answer.scores.get("documents") or {}).get("features")
            if answer.tier != "documents" or not features:
                continue
            got = facts_found(answer_body(answer), q.key_facts) if q.key_facts else 0
            right = bool(q.key_facts) and got == len(q.key_facts)
            if not q.key_facts and not q.out_of_scope:
                continue  # answerable, but nothing to score it by
            examples.append(DocExample(qid, form, tuple(features), right, got, len(q.key_facts)))
        in_scope = sum(1 for q in data["questions"] if q.key_facts)
        out.append(DocSet(name, tuple(examples), in_scope))
        print(f"{name}: {len(examples)} documents answers")
    return out


def documents_report(sets: list[Any]) -> tuple[str, dict[str, Any]]:
    from bot.evaluation.documents_fit import DOC_RISKS, leave_one_out

    folds = leave_one_out(sets)
    rows = []
    figures: dict[str, Any] = {}
    for fold in folds:
        for risk in DOC_RISKS:
            for form in ("written", "folded"):
                r = fold.rates(risk, form)
                point = next(p for p in fold.points if p.risk == risk)
                rows.append(
                    [
                        fold.name,
                        form,
                        f"{risk:g}",
                        f"{point.threshold:.2f}",
                        f"{r.precision:.3f}",
                        f"{r.coverage:.3f}",
                        r.answered,
                        r.wrong_no_fact,
                        f"{r.confidently_wrong_share:.3f}",
                        r.out_of_scope,
                    ]
                )
                figures.setdefault(fold.name, {}).setdefault(str(risk), {})[form] = {
                    "precision": r.precision,
                    "coverage": r.coverage,
                    "answered": r.answered,
                    "confidently_wrong": r.wrong_no_fact,
                    "out_of_scope_answered": r.out_of_scope,
                }
    header = [
        "left out",
        "form",
        "risk",
        "threshold",
        "key facts (answered)",
        "right / questions",
        "answered",
        "no key fact",
        "no key fact / answered",
        "out of scope answered",
    ]
    return "\n".join(
        ["## Tier 2, each set left out", "", markdown_table(header, rows), ""]
    ), figures


def write_documents(sets: list[Any], figures: dict[str, Any]) -> None:
    from bot.evaluation.documents_fit import choose_thresholds, fit_documents, leave_one_out

    scorer = fit_documents(sets)
    points = choose_thresholds([(f.doc_set, f.p) for f in leave_one_out(sets)])
    data = json.loads(DECISIONS_FILE.read_text())
    data["documents"] = decision_to_json(Decision(scorer, points))
    data.setdefault("about", {})["documents_left_out"] = figures
    data["about"]["documents_sets"] = {s.name: len(s.examples) for s in sets}
    DECISIONS_FILE.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    print(f"wrote the documents scorer: points {points}")


def write(sets: list[FaqSetEvidence], figures: dict[str, Any]) -> None:
    scorer = fit_faq_scorer(sets)
    folds = leave_one_out(sets)
    points = choose_points([f.scored for f in folds])
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    existing = json.loads(DECISIONS_FILE.read_text()) if DECISIONS_FILE.exists() else {}
    about: dict[str, Any] = {
        "written_by": "bench/fit_decisions.py --write",
        "fitted_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "embedder": build_parts(bench_settings()).embedder.name,
        "faq_sets": {s.name: len(s.examples) for s in sets},
        "faq_left_out": figures,
        # the other scorers' provenance stays with them
        **{k: v for k, v in existing.get("about", {}).items() if k.startswith("documents_")},
    }
    data = {"version": VERSION, "about": about, "faq": decision_to_json(Decision(scorer, points))}
    for other in ("documents", "context"):
        if other in existing:
            data[other] = existing[other]
    DECISIONS_FILE.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    print(f"wrote {DECISIONS_FILE.relative_to(ROOT)}: points {points}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", type=Path, default=DATASETS)
    parser.add_argument("--out", type=Path, default=None, help="default bench/results/fit")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--documents", action="store_true", help="fit tier 2's scorer too")
    parser.add_argument(
        "--only-documents", action="store_true", help="fit tier 2's scorer alone; tier 1's stays"
    )
    args = parser.parse_args()
    args.documents = args.documents or args.only_documents
    if args.quick and args.write:
        sys.exit("--quick fits on a few queries a set: never written")
    if args.out is None:
        args.out = RESULTS_DIR / ("fit-quick" if args.quick else "fit")
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.only_documents:
        sets = asyncio.run(evidence(args.datasets, args.quick))
        markdown, figures = report(sets)
        print(f"{machine()}\n\n{markdown}")
        (args.out / "report.md").write_text(markdown, encoding="utf-8")
        (args.out / "report.json").write_text(json.dumps(figures, indent=1), encoding="utf-8")
        if args.write:
            write(sets, figures)
    if args.documents:
        doc_sets = asyncio.run(documents_evidence(args.quick))
        doc_markdown, doc_figures = documents_report(doc_sets)
        print(doc_markdown)
        (args.out / "documents.md").write_text(doc_markdown, encoding="utf-8")
        if args.write:
            write_documents(doc_sets, doc_figures)


if __name__ == "__main__":
    main()
