"""Tier 2's answers on every set with key facts: key facts, length and compose time, fast.

    .venv/bin/python bench/answer_shape.py retrieve [--sets UIT,ALQAC,...]   (all sets by default)
    .venv/bin/python bench/answer_shape.py replay [--sets …] [--misses SET] [--dump FILE]

``retrieve`` loads each set into a throwaway database, reads and searches every question as
the answerer does (written and folded; a dialogue's follow-up made standalone first, as the
channels do) and keeps what it found in ``bench/.cache/answers``. ``replay`` composes the
answers again from that cache with the code as it is now: a change to how units are chosen and
rendered is measured in seconds, not in the minutes a search takes. Together they are the
answerer without its small-talk check; ``bench/devsets.py`` runs the whole of it on the three
dataset sets and gives the same figures for them.

Sets: UIT (corpus folder), ALQAC and ViRHE4QA (pre-cut passages), the demo knowledge base with
its FAQ and its question files (``bot/knowledge/demo_kb/questions.jsonl``, the 40 dialogues in
``tests/data/demo_dialogues.jsonl`` and, as set ``probes``, the blind probes in
``tests/data/probe*_dialogues.jsonl``, each turn read after its session's earlier ones), and
the PTIT questions written for this project (``bench/ptit-questions.jsonl``) over the PTIT
corpus's .md pages, and (``bench/ptit-pdf-questions.jsonl``, set PTIT-PDF) over its 16 PDFs
(11 scans: the retrieve step OCRs them, ~4 min).

Printed per set and form: in-scope questions answered, the share of answered ones with every
key fact, the mean share of key facts, the median and p90 length of the documents answers'
bodies (characters before the sources) and the factoid median, out-of-scope questions that
fell back, the time to compose an answer from what was found (p50 / p95 ms), and the quotes
of the documents answers with a defect of shape (``quote_hygiene``: a number cut at its thousands
dot, a letterhead or page furniture, a piece of a sentence) out of all their quotes.
``--quick`` (a smoke run, both steps when none is named) reads a few questions as written only,
over only the files or passages they cite, of UIT, ALQAC and the demo dialogues unless
``--sets`` names others (three sets: fit_decisions.py fits each left out on the others, each
left out in turn); its cache is kept apart (``SET-quick.pickle``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pickle
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import CACHE_DIR, DATASETS, bench_settings, markdown_table
from found_reading import read_again
from quote_hygiene import quote_count, quote_defects
from small_sets import faq_sample, small_corpus, small_passages

from bot.answer.answerer import Answerer
from bot.answer.followup import ContextRules, Turn, read_in_context
from bot.answer.found import Timer
from bot.answer.read import read_asked
from bot.answer.replies import answer_body
from bot.evaluation.data import Question, read_faq_items, read_passages, read_questions
from bot.evaluation.dialogues import as_question_rows, read_dialogues
from bot.evaluation.metrics import facts_found
from bot.evaluation.workspace import (
    indexer_for,
    load_corpus,
    load_faq,
    load_passages,
    throwaway_database,
)
from bot.knowledge.demo import demo_kb_dir
from bot.knowledge.ingest import ingest_paths
from bot.runtime import build_parts
from retrieval.index.state import ensure_index_state
from retrieval.loading.ocr import OcrOptions
from retrieval.loading.pdf import PdfOptions
from retrieval.text.folding import fold

ROOT = Path(__file__).resolve().parent.parent
CACHE = CACHE_DIR / "answers"
PTIT_PAGES = DATASETS / "ptit-admissions" / "corpus"
DEFECTS = ("cut number", "furniture", "mid-sentence")
_EVERY_PAGE = PdfOptions(ocr=OcrOptions(budget_s=3600, timeout_s=600))
QUICK_SETS = "UIT,ALQAC,demo-dialogues"  # a folder; pre-cut passages; an FAQ and follow-ups


@dataclass(frozen=True)
class AnswerSet:
    name: str
    questions: Path
    corpus: Path | None = None
    passages: Path | None = None
    faq: Path | None = None
    only: str = ""  # a glob: just these files of the corpus folder ("*.md": PTIT's web pages)


def answer_sets() -> list[AnswerSet]:
    uit, alqac = DATASETS / "uit-admissions", DATASETS / "alqac"
    demo = demo_kb_dir()
    sets = [
        AnswerSet("UIT", uit / "questions.jsonl", corpus=uit / "corpus"),
        AnswerSet("ALQAC", alqac / "questions.jsonl", passages=alqac / "corpus.jsonl"),
        AnswerSet(
            "ViRHE4QA",
            DATASETS / "virhe4qa" / "questions.jsonl",
            passages=DATASETS / "virhe4qa" / "corpus.jsonl",
        ),
        AnswerSet("demo", demo / "questions.jsonl", corpus=demo / "docs", faq=demo / "faq.jsonl"),
        AnswerSet(
            "demo-dialogues",
            ROOT / "tests" / "data" / "demo_dialogues.jsonl",
            corpus=demo / "docs",
            faq=demo / "faq.jsonl",
        ),
        AnswerSet("probes", probe_questions(), corpus=demo / "docs", faq=demo / "faq.jsonl"),
        AnswerSet("PTIT", ROOT / "bench" / "ptit-questions.jsonl", corpus=PTIT_PAGES, only="*.md"),
        AnswerSet(
            "PTIT-PDF", ROOT / "bench" / "ptit-pdf-questions.jsonl", corpus=PTIT_PAGES, only="*.pdf"
        ),
    ]
    return [s for s in sets if s.questions.exists()]


def probe_questions() -> Path:
    """The blind probes written for this project (tests/data/probe*_dialogues.jsonl: students'
    conversations over the demo knowledge base) as one question set, ids prefixed by file."""
    rows = []
    for path in sorted((ROOT / "tests" / "data").glob("probe*_dialogues.jsonl")):
        prefix = path.name.removesuffix("_dialogues.jsonl") + ":"
        rows += as_question_rows(read_dialogues(path), prefix)
    out = CACHE_DIR / "probes.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return out


def cache_path(name: str, quick: bool = False) -> Path:
    return CACHE / f"{name}{'-quick' if quick else ''}.pickle"


async def retrieve(answer_set: AnswerSet, forms: tuple[str, ...], quick: bool = False) -> None:
    parts = build_parts(bench_settings())
    questions = read_questions(answer_set.questions)
    earlier = _previous(answer_set.questions)
    passages = read_passages(answer_set.passages) if answer_set.passages is not None else None
    folder = answer_set.corpus
    if quick and passages is not None:
        questions, passages = small_passages(questions, passages)
    elif quick and folder is not None:
        # Two follow-ups of a dialogue first, if the set has some: their reading is a path.
        follow_ups = [q for q in questions if q.id in earlier][:2]
        ordered = follow_ups + [q for q in questions if q not in follow_ups]
        questions, folder = small_corpus(ordered, folder)
    found: dict[tuple[str, str], Any] = {}
    async with throwaway_database() as workspace:
        if passages is not None:
            await load_passages(workspace, parts, passages)
        else:
            assert folder is not None
            corpus = folder
            if answer_set.only:
                corpus = Path(tempfile.mkdtemp(prefix="tuvan-pages-"))
                for page in folder.glob(answer_set.only):
                    shutil.copy(page, corpus)
            if answer_set.only == "*.pdf":
                # The default OCR budget (120 s a file) runs out on a busy machine, and which
                # pages are read would then change from run to run: here every page is read.
                indexer = indexer_for(parts)
                async with workspace.sessionmaker.begin() as session:
                    await ensure_index_state(session, indexer.embedder)
                await ingest_paths(workspace.sessionmaker, indexer, [corpus], pdf=_EVERY_PAGE)
            else:
                await load_corpus(workspace, parts, corpus)
        if answer_set.faq is not None:
            items = read_faq_items(answer_set.faq)
            await load_faq(workspace, parts, faq_sample(items, [])[0] if quick else items)
        answerer = Answerer(parts, workspace.sessionmaker)
        for q in questions:
            for form, text in (("written", q.question), ("folded", fold(q.question))):
                if form not in forms:
                    continue
                # A follow-up in a dialogue is read as the answerer's callers read it.
                rules = ContextRules(parts.guard, parts.processor)
                turns: list[Turn] = []
                for t in earlier.get(q.id, []):
                    t = t if form == "written" else fold(t)
                    turns.append(Turn(read_in_context(t, turns, rules).asked))
                asked = read_asked(read_in_context(text, turns, rules).asked)
                found[(q.id, form)] = await answerer.find(asked, Timer())
    CACHE.mkdir(parents=True, exist_ok=True)
    with cache_path(answer_set.name, quick).open("wb") as f:
        pickle.dump({"questions": questions, "found": found}, f)


def _previous(path: Path) -> dict[str, list[str]]:
    """The earlier questions of each dialogue row ("previous", oldest first)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return {str(r["id"]): list(r["previous"]) for r in rows if r.get("previous")}


def _percentile(values: list[Any], share: float) -> Any:
    if not values:
        return 0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _write(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")


async def replay(
    names: list[str],
    misses: str | None,
    dump: Path | None,
    forms: tuple[str, ...],
    quick: bool = False,
) -> None:
    parts = build_parts(bench_settings())
    answerer = Answerer(parts, None)  # type: ignore[arg-type]  # no LLM: nothing reads the store
    rows = []
    outcomes: dict[str, Any] = {}
    for name in names:
        path = cache_path(name, quick)
        if not path.exists():
            continue
        data = pickle.loads(path.read_bytes())
        questions: list[Question] = data["questions"]
        for form in forms:
            if not any(key[1] == form for key in data["found"]):
                continue  # retrieved with --quick
            scored = []
            compose_ms: list[float] = []
            for q in questions:
                found = read_again(data["found"][(q.id, form)], parts)  # as the code reads now
                started = time.perf_counter()
                answer = await answerer.answer_found(found, Timer())
                compose_ms.append((time.perf_counter() - started) * 1000)
                body = answer_body(answer)
                scored.append((q, answer, body, facts_found(body, q.key_facts)))
                flaws = quote_defects(body) if answer.tier == "documents" else Counter()
                outcomes[f"{name}/{form}/{q.id}"] = {
                    "question": found.question,
                    "key_facts": q.key_facts,
                    "tier": answer.tier,
                    "found": scored[-1][3],
                    "body": body,
                    "defects": dict(flaws),
                }
            scope = [s for s in scored if not s[0].out_of_scope and s[0].key_facts]
            answered = [s for s in scope if s[1].tier != "fallback"]
            docs = [s for s in answered if s[1].tier == "documents"]
            complete = [s for s in answered if s[3] == len(s[0].key_facts)]
            lengths = [len(s[2]) for s in docs]
            factoid = [len(s[2]) for s in docs if s[0].type == "factoid"]
            oos = [s for s in scored if s[0].out_of_scope]
            defects: Counter[str] = Counter()
            for s in docs:
                defects += quote_defects(s[2])
            quotes = sum(quote_count(s[2]) for s in docs)
            rows.append(
                [
                    name,
                    form,
                    f"{len(answered)}/{len(scope)}",
                    f"{len(complete) / len(answered):.3f}" if answered else "-",
                    f"{sum(s[3] / len(s[0].key_facts) for s in scope) / len(scope):.3f}"
                    if scope
                    else "-",
                    f"{statistics.median(lengths):.0f} / {_percentile(lengths, 0.9)}"
                    if lengths
                    else "-",
                    f"{statistics.median(factoid):.0f}" if factoid else "-",
                    f"{sum(s[1].tier == 'fallback' for s in oos)}/{len(oos)}",
                    f"{statistics.median(compose_ms):.1f} / {_percentile(compose_ms, 0.95):.1f}",
                    " / ".join(str(defects[d]) for d in DEFECTS) + f" of {quotes}",
                ]
            )
            if misses == name and form == "written":
                for q, answer, body, n in scored:
                    if q.out_of_scope or n == len(q.key_facts):
                        continue
                    print(f"\n### {q.id} [{q.type}] {q.question}\nkey facts: {q.key_facts}")
                    print(f"tier {answer.tier} ({len(body)} chars)\n{body}")
    if dump is not None:
        _write(dump, outcomes)
    header = [
        "set",
        "form",
        "answered",
        "all key facts (answered)",
        "mean key facts",
        "docs length median / p90",
        "factoid median",
        "out of scope → fallback",
        "compose ms p50 / p95",
        "quotes: cut number / furniture / mid-sentence",
    ]
    print(markdown_table(header, rows))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "step", choices=("retrieve", "replay"), nargs="?", help="both with --quick and no step"
    )
    parser.add_argument("--sets", default="")
    parser.add_argument("--misses", default=None)
    parser.add_argument("--dump", type=Path, default=None, help="per-question outcomes (JSON)")
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: a few questions, as written only"
    )
    args = parser.parse_args(argv)
    if args.step is None and not args.quick:
        parser.error("name a step: retrieve or replay")
    forms = ("written",) if args.quick else ("written", "folded")
    sets = answer_sets()
    chosen = args.sets or (QUICK_SETS if args.quick else "")
    wanted = [s for s in sets if not chosen or s.name in chosen.split(",")]
    if args.step in ("retrieve", None):
        for s in wanted:
            started = time.perf_counter()
            asyncio.run(retrieve(s, forms, args.quick))
            print(f"{s.name}: {time.perf_counter() - started:.0f} s", flush=True)
    if args.step in ("replay", None):
        names = [s.name for s in wanted]
        asyncio.run(replay(names, args.misses, args.dump, forms, args.quick))


if __name__ == "__main__":
    main(sys.argv[1:])
