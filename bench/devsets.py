"""Every development set with the default configuration, as written and without diacritics.

    .venv/bin/python bench/devsets.py [--datasets ../shared/datasets] [--out DIR] [--quick]

Prints one table per part and writes them, with every set's full ``tuvan eval`` report (its
misses included), under ``--out`` (default bench/results/devsets):

- tier 2 retrieval: UIT (corpus folder, document level), ALQAC and ViRHE4QA (pre-cut passages,
  chunk level); modes dense, bm25 and hybrid (what tuvan answers with); each question asked as
  written and again folded (``tuvan eval questions --unaccented``); answers: tier shares and key
  facts;
- tier 1: the UIT and ViRHE4QA FAQ sets (``tuvan eval faq``), queries as written and folded;
- the diacritic restorer: syllable accuracy of every question set folded and restored, learned
  from that set's knowledge (what the store learns: passage texts and the FAQ);
- multi-part questions: the questions that split into parts, searched as one query and split.

One default configuration for all of it: nothing here is set per dataset. ``--quick`` is a smoke
run, not a figure to report: each part on one set of each kind (a folder, pre-cut passages, an
FAQ), its first questions and only the knowledge they cite (bench/small_sets.py), written under
bench/results/devsets-quick unless ``--out`` says otherwise. It leaves out ``loso`` unless
``--only`` names it: those are fit_decisions.py's own functions, which its ``--quick
--documents`` runs (three databases the smoke run of the other parts need not wait for).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from common import DATASETS, RESULTS_DIR, bench_settings, machine, markdown_table
from devsets_tables import answer_rows, faq_rows, multi_part_rows, retrieval_rows
from question_sets import MODES, QuestionSet, dev_sets, knowledge_for, knowledge_texts, small_demo
from small_sets import faq_sample

from bot.evaluation.data import (
    read_faq_items,
    read_faq_queries,
    read_questions,
)
from bot.evaluation.faq import evaluate_faq
from bot.evaluation.faq_report import faq_report
from bot.evaluation.questions import evaluate_questions
from bot.evaluation.questions_report import questions_report
from bot.evaluation.report import write_markdown
from bot.runtime import build_parts
from retrieval.query import split_question
from retrieval.restore.ngrams import NgramCounts, has_marks
from retrieval.restore.restorer import DiacriticRestorer
from retrieval.text.folding import fold

OWN_DIALOGUES = Path(__file__).resolve().parent.parent / "tests" / "data" / "demo_dialogues.jsonl"
MIN_MULTI_PART = 5  # questions that split, for a set's multi-part figure


# -- tier 2 -------------------------------------------------------------------------------------


async def retrieval(parts: Any, qs: QuestionSet, quick: bool, out: Path) -> dict[str, Any]:
    questions, knowledge = knowledge_for(qs, read_questions(qs.questions), quick)
    started = time.perf_counter()
    ev = await evaluate_questions(parts, questions, knowledge, modes=MODES, unaccented=True)
    data, markdown = questions_report(ev)
    (out / qs.name).mkdir(parents=True, exist_ok=True)
    write_markdown(out / qs.name, markdown)
    (out / qs.name / "report.json").write_text(
        json.dumps(data, ensure_ascii=False, indent=1, default=str), encoding="utf-8"
    )
    data["level"] = ev.levels[0]
    data["seconds_total"] = time.perf_counter() - started
    return data


# -- tier 1 -------------------------------------------------------------------------------------


async def faq_tier(parts: Any, qs: QuestionSet, out: Path, quick: bool = False) -> dict[str, Any]:
    """The shipped scorer on one FAQ set, as written and folded. In-sample: the scorer was
    fitted on these sets; the figures that count are the left-out ones (``fit_decisions``)."""
    if qs.faq is None or qs.faq_queries is None:
        raise ValueError(f"{qs.name} has no FAQ set")
    items = read_faq_items(qs.faq)
    queries = read_faq_queries(qs.faq_queries, {i.id for i in items})
    if quick:
        items, queries = faq_sample(items, queries)
    ev = await evaluate_faq(parts, items, queries, unaccented=True)
    data, markdown = faq_report(ev)
    folder = out / f"{qs.name}-faq"
    folder.mkdir(parents=True, exist_ok=True)
    write_markdown(folder, markdown)
    return {"written": data["written"], "unaccented": data["folded"]}


# -- the restorer -------------------------------------------------------------------------------


def syllables(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+", unicodedata.normalize("NFC", text).lower())


def restorer_accuracy(
    parts: Any, qs: QuestionSet, limit: int | None = None
) -> list[dict[str, Any]]:
    """Fold each question written with marks, restore it, compare syllable by syllable.

    Abbreviations that retrieval.text writes out ("đc", "cntt") are left out of the count: they
    are expanded, not restored. Both tone placements of a syllable count as right (hòa = hoà).
    """
    expansions = parts.processor.dense_expansions
    restorer = DiacriticRestorer(NgramCounts().add_texts(knowledge_texts(qs)), expansions)
    files: list[tuple[str, list[str]]] = [
        ("questions", [q.question for q in read_questions(qs.questions)][:limit])
    ]
    if qs.faq_queries is not None and qs.faq is not None:
        items = read_faq_items(qs.faq)
        queries = read_faq_queries(qs.faq_queries, {i.id for i in items})
        files.append(("faq queries", [q.query for q in queries][:limit]))
    rows = []
    for label, texts in files:
        total = right = 0
        seconds = 0.0
        asked = [t for t in texts if any(has_marks(w) for w in syllables(t))]
        for text in asked:
            folded = fold(text)
            started = time.perf_counter()
            restored = restorer.restore(folded).text
            seconds += time.perf_counter() - started
            for want, got in zip(syllables(text), syllables(restored), strict=True):
                if fold(want) in expansions:
                    continue
                total += 1
                right += _same_syllable(want, got)
        rows.append(
            {
                "set": qs.name,
                "questions": label,
                "asked": len(asked),
                "syllables": total,
                "accuracy": right / max(total, 1),
                "ms_per_question": 1000 * seconds / max(len(asked), 1),
            }
        )
    return rows


_TONES = "\u0300\u0301\u0303\u0309\u0323"


def _same_syllable(a: str, b: str) -> bool:
    """Equal, or equal but for where the tone mark sits (old "hòa", new "hoà" style)."""

    def key(s: str) -> tuple[str, str]:
        d = unicodedata.normalize("NFD", s)
        return "".join(c for c in d if c not in _TONES), "".join(c for c in d if c in _TONES)

    return a == b or key(a) == key(b)


# -- multi-part questions -------------------------------------------------------------------------


async def multi_part(parts: Any, qs: QuestionSet, quick: bool, out: Path) -> dict[str, Any] | None:
    """The questions that split, searched split (the default) and as one query."""
    questions = [
        q
        for q in read_questions(qs.questions)
        if not q.out_of_scope and len(split_question(q.question, parts.processor)) > 1
    ]
    least = 1 if quick else MIN_MULTI_PART  # quick: one question runs the whole path
    questions, knowledge = knowledge_for(qs, questions, quick, least)
    if len(questions) < least:
        return None  # too few to measure; each run below indexes the set's knowledge again
    found: dict[str, Any] = {"questions": len(questions)}
    for label, split in (("split", True), ("one query", False)):
        search = parts.settings.search.model_copy(update={"split_questions": split})
        swapped = replace(parts, settings=parts.settings.model_copy(update={"search": search}))
        ev = await evaluate_questions(swapped, questions, knowledge, modes=("hybrid",))
        level = ev.levels[0]
        found[label] = {
            "level": level,
            **{k: v for k, v in ev.metrics("hybrid", level).items() if k.split("@")[1] in "510"},
        }
    return found


# -- main ---------------------------------------------------------------------------------------


async def main(argv: Sequence[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    ap.add_argument("--out", type=Path, default=None, help="default bench/results/devsets")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--only",
        default="",
        help="Comma-separated parts: loso, dialogues, tier2, tier1, restorer, multi",
    )
    args = ap.parse_args(argv)
    every = {"loso", "dialogues", "tier2", "tier1", "restorer", "multi"}
    only = set(args.only.split(",")) if args.only else every - ({"loso"} if args.quick else set())
    if args.out is None:
        args.out = RESULTS_DIR / ("devsets-quick" if args.quick else "devsets")
    parts = build_parts(bench_settings())
    sets = dev_sets(args.datasets)
    # A database each, whatever its size: quick, one set of each kind (UIT: a folder and an
    # FAQ, ALQAC: pre-cut passages).
    question_sets = [qs for qs in sets if qs.questions]
    faq_sets = [qs for qs in sets if qs.faq]
    if args.quick:
        question_sets, faq_sets = [qs for qs in sets if qs.name in ("UIT", "ALQAC")], sets[:1]
    args.out.mkdir(parents=True, exist_ok=True)
    sections = [f"# Development sets, default configuration ({machine()})", ""]

    def emit(title: str, header: list[str], rows: list[list[Any]]) -> None:
        block = f"## {title}\n\n{markdown_table(header, rows)}\n"
        print(block, flush=True)
        sections.append(block)

    if "loso" in only:
        # The figures that count: each set answered by what the other sets fitted.
        import fit_decisions

        evidence = await fit_decisions.evidence(args.datasets, args.quick)
        markdown, _ = fit_decisions.report(evidence)
        print(markdown, flush=True)
        sections.append(markdown)
        doc_sets = await fit_decisions.documents_evidence(args.quick)
        if len(doc_sets) > 2:  # each fold is fitted leaving a set out again: three at least
            markdown, _ = fit_decisions.documents_report(doc_sets)
            print(markdown, flush=True)
            sections.append(markdown)
    if "dialogues" in only:
        from bot.evaluation.dialogues import dialogues_report, read_dialogues
        from bot.web.dialogues import dialogues_through_web_chat

        rows = []
        paths = [args.datasets / "demo-dialogues" / "dialogues.jsonl", OWN_DIALOGUES]
        for path in paths[: 1 if args.quick else None]:
            label = "own dialogues" if path == OWN_DIALOGUES else path.parent.name
            turns = read_dialogues(path)[: 4 if args.quick else None]
            load = small_demo(parts) if args.quick else None
            ev = await dialogues_through_web_chat(parts, turns, load=load)
            _, markdown = dialogues_report(ev, path.name)
            folder = args.out / f"dialogues-{label.replace(' ', '-')}"
            folder.mkdir(parents=True, exist_ok=True)
            write_markdown(folder, markdown)
            rows.append([label, len(turns), ev.correct, ev.confidently_wrong, ev.fallbacks])
        emit(
            "Dialogues through the web chat, in session order",
            ["file", "questions", "correct", "confidently wrong", "fallback (should answer)"],
            rows,
        )
    if "restorer" in only:
        limit = 10 if args.quick else None
        accuracy = [row for qs in question_sets for row in restorer_accuracy(parts, qs, limit)]
        emit(
            "Diacritic restorer: syllable accuracy, questions folded and restored",
            ["set", "questions", "asked", "syllables", "accuracy", "ms / question"],
            [
                [
                    r["set"],
                    r["questions"],
                    r["asked"],
                    r["syllables"],
                    f"{r['accuracy']:.4f}",
                    f"{r['ms_per_question']:.2f}",
                ]
                for r in accuracy
            ],
        )
    if "tier2" in only:
        results = {
            qs.name: await retrieval(parts, qs, args.quick, args.out) for qs in question_sets
        }
        emit("Tier 2 retrieval (w: as written, u: without diacritics)", *retrieval_rows(results))
        emit("Answers", *answer_rows(results))
    if "tier1" in only:
        faq = {qs.name: await faq_tier(parts, qs, args.out, args.quick) for qs in faq_sets}
        emit("Tier 1: FAQ sets", *faq_rows(faq))
    if "multi" in only:
        multi: dict[str, dict[str, Any]] = {}
        for qs in question_sets:
            found = await multi_part(parts, qs, args.quick, args.out)
            if found is not None:
                multi[qs.name] = found
                if args.quick:
                    break  # one set measured is the whole path
        if multi:
            emit(
                "Multi-part questions: hybrid, split into parts or as one query",
                *multi_part_rows(multi),
            )
    (args.out / "devsets.md").write_text("\n".join(sections), encoding="utf-8")
    print(f"written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
