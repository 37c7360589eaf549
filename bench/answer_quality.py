"""Whole answers, no LLM (tier 2 extractive): tiers, key facts and the fallback, as t_doc varies.

Two knowledge bases, each in its own throwaway PostgreSQL: the UIT corpus + the UIT FAQ with
uit-admissions/questions.jsonl (the guard gets the UIT override of bench/guard_quality.py, as
the admissions office would configure it), and the bundled demo KB (bot/demo_kb: docs, FAQ,
questions) with the bundled guard. Every question goes through ``Answerer.answer`` as a user's
would, once per t_doc of the sweep.

Scoring follows ../shared/datasets/README.md: an answer is right when its text (the body, not the
sources block or disclaimer) contains every key fact after ``norm()`` of validate.py on both
sides; the mean fraction of key facts found is reported too; an out_of_scope question is right
when it gets the fallback (no FAQ, no citation). The suggested t_doc maximises the questions
answered right overall (in-scope with all key facts + out_of_scope in the fallback).

    .venv/bin/python bench/answer_quality.py [--kb uit,demo] [--t-doc-low 0.78 --t-doc-high 0.90]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from common import DATASETS, Report, bench_database, read_jsonl
from guard_quality import UIT_OVERRIDE
from retrieval_quality import (
    bench_parts,
    bench_settings,
    load_alqac_corpus,
    load_uit_corpus,
    metric_table,
    quiet_logs,
    sweep_values,
)

from bot.answerer import Answerer, AnswererParts
from bot.demo import demo_kb_dir
from bot.faqio import read_faq_file
from bot.replies import Answer
from bot.settings import Settings, TextSettings
from retrieval.index import Indexer, upsert_faq
from retrieval.thresholds import BUILTIN, family


def _validate_norm() -> Callable[[str], str]:
    """``norm()`` from the datasets' validate.py: the scoring rules, taken from the source."""
    path = DATASETS / "validate.py"
    spec = importlib.util.spec_from_file_location("datasets_validate", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    norm: Callable[[str], str] = module.norm
    return norm


norm = _validate_norm()


@dataclass(frozen=True)
class KnowledgeBase:
    name: str
    docs: Path  # a folder of files, or an ALQAC-style corpus.jsonl (one document per article)
    faq: Path | None
    questions: Path
    guard_override: str | None


KBS = {
    "uit": KnowledgeBase(
        "uit",
        DATASETS / "uit-admissions" / "corpus",
        DATASETS / "uit-admissions" / "faq.jsonl",
        DATASETS / "uit-admissions" / "questions.jsonl",
        UIT_OVERRIDE,
    ),
    "demo": KnowledgeBase(
        "demo",
        demo_kb_dir() / "docs",
        demo_kb_dir() / "faq.jsonl",
        demo_kb_dir() / "questions.jsonl",
        None,
    ),
    # Out-of-domain control for the extractive answers: legal articles, no FAQ, no fallback rows.
    "alqac": KnowledgeBase(
        "alqac",
        DATASETS / "alqac" / "corpus.jsonl",
        None,
        DATASETS / "alqac" / "questions.jsonl",
        None,
    ),
}


@dataclass(frozen=True)
class Outcome:
    row: dict[str, Any]
    answer: Answer
    found: int  # key facts found

    @property
    def in_scope(self) -> bool:
        return bool(self.row["type"] != "out_of_scope")

    @property
    def facts(self) -> int:
        return len(self.row["key_facts"])

    @property
    def right(self) -> bool:
        if not self.in_scope:
            return (
                self.answer.tier == "fallback"
                and not self.answer.citations
                and self.answer.faq_external_id is None
            )
        return bool(self.facts) and self.found == self.facts


def answer_body(answer: Answer) -> str:
    """What the answer says, without the sources block and the disclaimer (their titles and
    URLs would match short key facts such as a year)."""
    if answer.tier != "documents":
        return answer.answer
    for heading in ("\n\nNguồn:", "\n\nSources:"):
        if heading in answer.answer:
            return answer.answer.split(heading, 1)[0]
    return answer.answer


def score(row: dict[str, Any], answer: Answer) -> Outcome:
    body = norm(answer_body(answer))
    found = sum(norm(fact) in body for fact in row["key_facts"])
    return Outcome(row, answer, found)


def with_t_doc(parts: AnswererParts, t_doc: float, t_faq: float | None) -> AnswererParts:
    update: dict[str, Any] = {"t_doc": t_doc}
    if t_faq is not None:
        update["t_faq"] = t_faq
    answer = parts.settings.answer.model_copy(update=update)
    return replace(parts, settings=parts.settings.model_copy(update={"answer": answer}))


def summary(outcomes: Sequence[Outcome]) -> dict[str, float]:
    scope = [o for o in outcomes if o.in_scope and o.facts]
    oos = [o for o in outcomes if not o.in_scope]
    return {
        "answered": sum(o.answer.tier != "fallback" for o in scope) / max(len(scope), 1),
        "facts_all": sum(o.right for o in scope) / max(len(scope), 1),
        "facts_mean": statistics.fmean(o.found / o.facts for o in scope) if scope else 0.0,
        "oos_fallback": sum(o.right for o in oos) / max(len(oos), 1),
        "right": sum(o.right for o in outcomes if (o.in_scope and o.facts) or not o.in_scope),
        "faq": sum(o.answer.tier == "faq" for o in outcomes),
        "documents": sum(o.answer.tier == "documents" for o in outcomes),
        "fallback": sum(o.answer.tier == "fallback" for o in outcomes),
    }


async def run_kb(
    kb: KnowledgeBase,
    t_docs: Sequence[float],
    t_faq: float | None,
    top_k: int | None,
    sentences: int | None,
    keyword: str | None = None,
) -> tuple[Settings, dict[float, list[Outcome]]]:
    rows = read_jsonl(kb.questions)
    with tempfile.TemporaryDirectory() as tmp:
        text = TextSettings()
        if kb.guard_override:
            path = Path(tmp) / "guard.yaml"
            path.write_text(kb.guard_override, encoding="utf-8")
            text = TextSettings(guard_vocabulary_file=path)
        settings = bench_settings(Path(tmp))
        answer_update: dict[str, Any] = {}
        if top_k is not None:
            answer_update["top_k"] = top_k
        if sentences is not None:
            answer_update["extractive_sentences"] = sentences
        search = settings.search
        if keyword is not None:
            search = search.model_copy(update={"keyword": keyword})
        settings = settings.model_copy(
            update={
                "text": text,
                "search": search,
                "answer": settings.answer.model_copy(update=answer_update),
            }
        )
        parts = bench_parts(settings)
        indexer = Indexer(parts.embedder, parts.processor, settings.embed_batch_size)
        by_t: dict[float, list[Outcome]] = {}
        async with bench_database() as (_, sessionmaker):
            if kb.docs.suffix == ".jsonl":
                await load_alqac_corpus(sessionmaker, indexer, kb.docs)
            else:
                await load_uit_corpus(sessionmaker, indexer, kb.docs)
            if kb.faq is not None:
                async with sessionmaker.begin() as session:
                    for draft in read_faq_file(kb.faq):
                        await upsert_faq(session, indexer, draft)
            for t_doc in t_docs:
                answerer = Answerer(with_t_doc(parts, t_doc, t_faq), sessionmaker)
                by_t[t_doc] = [score(r, await answerer.answer(r["question"])) for r in rows]
    return settings, by_t


def choose_t_doc(sweeps: Sequence[dict[float, list[Outcome]]]) -> float:
    """The t_doc with the most questions right over the knowledge bases, the count averaged with
    both neighbours in the sweep (one question flipping must not decide it, so the two ends are
    not candidates); ties: more fallbacks (declining beats quoting the wrong thing), then
    the lower threshold."""
    ts = sorted(sweeps[0])

    def total(t: float, key: str) -> float:
        return sum(summary(by_t[t])[key] for by_t in sweeps)

    inner = range(1, len(ts) - 1) if len(ts) >= 3 else range(len(ts))

    def rank(i: int) -> tuple[float, float, float]:
        window = ts[max(0, i - 1) : i + 2]
        right = sum(total(t, "right") for t in window) / len(window)
        return round(right, 6), total(ts[i], "fallback"), -ts[i]

    return ts[max(inner, key=rank)]


def report_kb(kb: KnowledgeBase, by_t: dict[float, list[Outcome]], default_t: float) -> float:
    print(f"\n### {kb.name}: t_doc sweep\n")
    header = [
        "t_doc",
        "in-scope answered",
        "key facts: all",
        "key facts: mean",
        "oos → fallback",
        "right / n",
        "faq",
        "documents",
        "fallback",
    ]
    rows = []
    n = len(next(iter(by_t.values())))
    for t, outcomes in sorted(by_t.items()):
        s = summary(outcomes)
        mark = " (default)" if abs(t - default_t) < 1e-9 else ""
        rows.append(
            [
                f"{t:.3f}{mark}",
                s["answered"],
                s["facts_all"],
                s["facts_mean"],
                s["oos_fallback"] if any(not o.in_scope for o in outcomes) else "–",
                f"{s['right']:.0f} / {n}",
                f"{s['faq']:.0f}",
                f"{s['documents']:.0f}",
                f"{s['fallback']:.0f}",
            ]
        )
    print(metric_table(header, rows))
    if len(by_t) < 3:
        return default_t
    best = choose_t_doc([by_t])
    print(f"\nmost questions right (averaged with the neighbours) at t_doc = {best:.3f}")
    return best


def report_combined(sweeps: dict[str, dict[float, list[Outcome]]]) -> None:
    print("\n### All knowledge bases: questions right per t_doc\n")
    names = list(sweeps)
    rows = []
    for t in sorted(next(iter(sweeps.values()))):
        rights = [summary(sweeps[name][t])["right"] for name in names]
        oos = [summary(sweeps[name][t])["oos_fallback"] for name in names]
        rows.append([f"{t:.3f}", *(f"{r:.0f}" for r in rights), f"{sum(rights):.0f}", *oos])
    print(
        metric_table(
            [
                "t_doc",
                *(f"right {n}" for n in names),
                "right total",
                *(f"oos → fallback {n}" for n in names),
            ],
            rows,
        )
    )
    best = choose_t_doc(list(sweeps.values()))
    print(f"\nsuggested t_doc over {', '.join(names)}: {best:.3f}")


def report_detail(kb: KnowledgeBase, outcomes: Sequence[Outcome], t_doc: float) -> None:
    print(f"\n### {kb.name} at t_doc = {t_doc:.3f}\n")
    types = sorted({o.row["type"] for o in outcomes})
    rows = []
    for typ in [*types, "all"]:
        sel = [o for o in outcomes if typ in ("all", o.row["type"])]
        tiers = Counter(o.answer.tier for o in sel)
        scope = [o for o in sel if o.in_scope and o.facts]
        oos = [o for o in sel if not o.in_scope]
        rows.append(
            [
                typ,
                len(sel),
                tiers["faq"],
                tiers["documents"],
                tiers["fallback"],
                f"{sum(o.right for o in scope) / len(scope):.3f}" if scope else "–",
                f"{statistics.fmean(o.found / o.facts for o in scope):.3f}" if scope else "–",
                f"{sum(o.right for o in oos) / len(oos):.3f}" if oos else "–",
            ]
        )
    print(
        metric_table(
            [
                "type",
                "n",
                "faq",
                "documents",
                "fallback",
                "key facts: all",
                "key facts: mean",
                "oos → fallback",
            ],
            rows,
        )
    )
    print()
    rows = []
    for tier in ("faq", "documents", "fallback"):
        scope = [o for o in outcomes if o.in_scope and o.facts and o.answer.tier == tier]
        if scope:
            rows.append(
                [
                    tier,
                    len(scope),
                    sum(o.right for o in scope) / len(scope),
                    statistics.fmean(o.found / o.facts for o in scope),
                ]
            )
    print(metric_table(["tier (in-scope)", "n", "key facts: all", "key facts: mean"], rows))

    print("\nwrong answers (id | type | tier | found/facts | missing | question):")
    for o in outcomes:
        if o.right or (o.in_scope and not o.facts):
            continue
        body = norm(answer_body(o.answer))
        missing = [f for f in o.row["key_facts"] if norm(f) not in body]
        cited = ", ".join(Path(c.source).name for c in o.answer.citations)
        print(
            f"  {o.row['id']} | {o.row['type']} | {o.answer.tier}"
            f"{' ' + (o.answer.faq_external_id or '') if o.answer.tier == 'faq' else ''} | "
            f"{o.found}/{o.facts} | {missing} | {o.row['question']}"
        )
        gold = ", ".join(s["source"] for s in o.row.get("sources") or [])
        print(f"      cited: {cited or '-'}; gold: {gold or '-'}; {o.answer.reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb", default="uit,demo")
    parser.add_argument("--t-doc-low", type=float, default=0.78)
    parser.add_argument("--t-doc-high", type=float, default=0.90)
    parser.add_argument("--t-doc-step", type=float, default=0.01)
    parser.add_argument("--t-doc", type=float, default=None, help="detail at; default built-in")
    parser.add_argument("--t-faq", type=float, default=None, help="default: the built-in value")
    parser.add_argument("--top-k", type=int, default=None)
    parser.add_argument("--sentences", type=int, default=None)
    parser.add_argument("--keyword", choices=["fts", "bm25"], default=None, help="hybrid's keyword")
    args = parser.parse_args()
    quiet_logs()
    kbs = [k.strip() for k in args.kb.split(",") if k.strip()]
    report = Report("answer_quality" + ("" if kbs == ["uit", "demo"] else "_" + "_".join(kbs)))
    report.print_header()
    builtin = BUILTIN[family(bench_settings(Path(tempfile.gettempdir())).embedder)]
    detail_t = args.t_doc if args.t_doc is not None else builtin["t_doc"]
    t_faq = args.t_faq if args.t_faq is not None else builtin["t_faq"]
    t_docs = sorted({*sweep_values(args.t_doc_low, args.t_doc_high, args.t_doc_step), detail_t})
    sweeps: dict[str, dict[float, list[Outcome]]] = {}
    for name in kbs:
        kb = KBS[name]
        settings, by_t = asyncio.run(
            run_kb(kb, t_docs, args.t_faq, args.top_k, args.sentences, args.keyword)
        )
        print(
            f"\n{kb.name}: {len(by_t[detail_t])} questions; t_faq {t_faq:.3f}; "
            f"top_k {settings.answer.top_k}; extractive_sentences "
            f"{settings.answer.extractive_sentences}; search {settings.search.mode}/"
            f"{settings.search.keyword}"
        )
        best = report_kb(kb, by_t, detail_t)
        report_detail(kb, by_t[detail_t], detail_t)
        sweeps[kb.name] = by_t
        report.data[kb.name] = {
            "t_faq": t_faq,
            "best_t_doc": best,
            "sweep": {f"{t:.3f}": summary(o) for t, o in sorted(by_t.items())},
        }
    if len(sweeps) > 1:
        report_combined(sweeps)
    report.finish()


if __name__ == "__main__":
    main()
