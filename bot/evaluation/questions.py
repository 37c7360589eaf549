"""``tuvan eval questions``: retrieval at k, tiers, key facts and out-of-scope handling.

The knowledge is loaded into a throwaway database either as pre-cut passages (``--chunks``,
indexed as they are, so chunk-level numbers compare with other systems on the same passages) or
from a folder through tuvan's own pipeline (``--corpus``). Each retrieval mode ranks the chunks
of every in-scope question; the ranking is scored at the levels the question set supports:

    chunk      a retrieved chunk's id against ``relevant_ids`` (``--chunks`` only)
    document   the file a chunk came from against the ``sources`` file names
    page       (file, page) against the sources that give a page

Then the full answerer (the configured mode and thresholds, and the FAQ when ``--faq`` is given)
answers every question once, for the tier distribution, the key facts and the out-of-scope rows
(summed up by ``answer_summaries``). ``calibration`` sweeps t_doc on the same machinery.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.answer.replies import Answer, answer_body
from bot.core.errors import RetrievalError
from bot.core.types import ChunkerMode, SearchMode
from bot.evaluation.data import FaqItem, Passage, Question
from bot.evaluation.judge import Judge
from bot.evaluation.metrics import (
    DEFAULT_KS,
    facts_found,
    first_ranks,
    mean_metrics,
    ranking_metrics,
)
from bot.evaluation.workspace import (
    Workspace,
    load_corpus,
    load_faq,
    load_passages,
    prepare_all,
    throwaway_database,
)
from bot.knowledge.jobs import Progress
from retrieval.query import search_query
from retrieval.search.graph import build_communities
from retrieval.search.hits import Hit
from retrieval.text.folding import fold

MODES: tuple[SearchMode, ...] = (
    "dense",
    "keyword",
    "bm25",
    "hybrid",
    "hybrid+rerank",
    "summary",
    "hybrid+graph",
)
LEVELS = ("chunk", "document", "page")


@dataclass(frozen=True)
class Knowledge:
    """What to load: a folder for tuvan's pipeline, or pre-cut passages; and an optional FAQ.

    ``chunker`` (a folder only) overrides the chunker setting; ``context_header`` False embeds
    and keyword-indexes chunks without their "title › headings" line.
    """

    corpus: Path | None = None
    passages: Sequence[Passage] | None = None
    faq: Sequence[FaqItem] | None = None
    chunker: ChunkerMode | None = None
    context_header: bool = True

    @property
    def levels(self) -> tuple[str, ...]:
        return LEVELS if self.passages is not None else ("document", "page")


def relevant_units(q: Question, level: str) -> set[Hashable]:
    if level == "chunk":
        return set(q.relevant_ids)
    if level == "document":
        return {s.source for s in q.sources}
    return {(s.source, s.page) for s in q.sources if s.page is not None}


def hit_unit(hit: Hit, level: str) -> Hashable:
    if level == "chunk":
        return hit.external_id
    name = Path(hit.source).name
    return name if level == "document" else (name, hit.page)


@dataclass
class ModeResult:
    mode: str
    # level -> question id -> metrics of that question
    per_question: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    # question id -> the first units retrieved at the first scored level (error analysis)
    top_units: dict[str, list[str]] = field(default_factory=dict)
    search_ms: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class AnswerOutcome:
    question: Question
    answer: Answer
    found: int  # key facts found in the answer's body
    judged: bool | None = None  # the judge's verdict, when a judge ran

    @property
    def complete(self) -> bool:
        return bool(self.question.key_facts) and self.found == len(self.question.key_facts)

    @property
    def right(self) -> bool:
        """Out of scope: the fallback, no FAQ and no citation. In scope: every key fact."""
        if self.question.out_of_scope:
            return (
                self.answer.tier == "fallback"
                and not self.answer.citations
                and self.answer.faq_external_id is None
            )
        return self.complete


@dataclass
class QuestionsEvaluation:
    embedder: str
    questions: list[Question]
    levels: list[str]  # the levels this set and this knowledge can be scored at
    ks: tuple[int, ...]
    modes: dict[str, ModeResult]
    outcomes: list[AnswerOutcome]
    answer_mode: str
    thresholds: dict[str, Any]
    loaded: dict[str, Any]
    judge: str | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    # --unaccented: the same questions asked again without diacritics (folded), same knowledge.
    unaccented: QuestionsEvaluation | None = None

    def metrics(self, mode: str, level: str, qtype: str | None = None) -> dict[str, float]:
        rows = [
            m
            for qid, m in self.modes[mode].per_question.get(level, {}).items()
            if qtype is None or self._types[qid] == qtype
        ]
        return mean_metrics(rows)

    @property
    def _types(self) -> dict[str, str]:
        return {q.id: q.type for q in self.questions}


def _scored_levels(questions: Sequence[Question], knowledge: Knowledge) -> list[str]:
    in_scope = [q for q in questions if not q.out_of_scope]
    return [level for level in knowledge.levels if any(relevant_units(q, level) for q in in_scope)]


async def load_knowledge(
    workspace: Workspace, parts: AnswererParts, knowledge: Knowledge, progress: Progress | None
) -> dict[str, Any]:
    loaded: dict[str, Any] = {}
    header = knowledge.context_header
    if knowledge.passages is not None:
        if knowledge.chunker is not None:
            raise RetrievalError("a chunker applies to a corpus folder, not to pre-cut passages")
        loaded["passages"] = await load_passages(
            workspace, parts, knowledge.passages, on_chunks=progress, context_header=header
        )
    elif knowledge.corpus is not None:
        chunker = knowledge.chunker or parts.settings.ingest.chunker
        chunks, skipped = await load_corpus(
            workspace,
            parts,
            knowledge.corpus,
            on_chunks=progress,
            chunker=chunker,
            context_header=header,
        )
        loaded.update(chunks=chunks, skipped=[{"file": f, "reason": r} for f, r in skipped])
        loaded["chunker"] = chunker
    else:
        raise ValueError("give a corpus folder or passages")
    if not header:
        loaded["context_header"] = "off"
    if knowledge.faq:
        await load_faq(workspace, parts, knowledge.faq)
        loaded["faq_entries"] = len(knowledge.faq)
    return loaded


async def rank_questions(
    workspace: Workspace,
    parts: AnswererParts,
    questions: Sequence[Question],
    modes: Sequence[str],
    levels: Sequence[str],
    ks: Sequence[int],
    progress: Progress | None,
) -> dict[str, ModeResult]:
    scope = [q for q in questions if not q.out_of_scope]
    prepared, vectors = await prepare_all(workspace, parts, [q.question for q in scope])
    results: dict[str, ModeResult] = {}
    # Units are de-duplicated (several chunks of one file are one document): ask for enough
    # chunks that k distinct units can exist at every level.
    limit = max(50, 5 * max(ks))
    for mode in modes:
        result = ModeResult(mode)
        async with workspace.sessionmaker() as session:
            for q, query, q_vectors in zip(scope, prepared, vectors, strict=True):
                started = time.perf_counter()
                hits = await search_query(
                    session,
                    query,
                    q_vectors,
                    parts.settings.search,
                    limit=limit,
                    mode=mode,  # type: ignore[arg-type]
                    reranker=parts.reranker,
                )
                result.search_ms.append((time.perf_counter() - started) * 1000)
                for level in levels:
                    relevant = relevant_units(q, level)
                    if not relevant:
                        continue
                    ranked = first_ranks(hit_unit(h, level) for h in hits)
                    result.per_question.setdefault(level, {})[q.id] = ranking_metrics(
                        ranked, relevant, ks
                    )
                    result.top_units.setdefault(q.id, [str(u) for u in ranked[:3]])
                if progress:
                    progress(1)
        results[mode] = result
    return results


async def answer_all(
    workspace: Workspace,
    parts: AnswererParts,
    questions: Sequence[Question],
    judge: Judge | None,
    progress: Progress | None,
) -> list[AnswerOutcome]:
    answerer = Answerer(parts, workspace.sessionmaker)
    outcomes = []
    for q in questions:
        answer = await answerer.answer(q.question)
        found = facts_found(answer_body(answer), q.key_facts)
        verdict = None
        if judge is not None and not q.out_of_scope and q.answer:
            verdict = await judge.correct(q.question, q.answer, answer_body(answer))
        outcomes.append(AnswerOutcome(q, answer, found, verdict))
        if progress:
            progress(1)
    return outcomes


def check_modes(parts: AnswererParts, modes: Sequence[str]) -> None:
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise RetrievalError(f"unknown mode {unknown[0]!r}; use one of {', '.join(MODES)}")
    if "hybrid+rerank" in modes and parts.reranker is None:
        raise RetrievalError(
            "mode hybrid+rerank needs a cross-encoder: set TUVAN_SEARCH__RERANKER_PATH"
        )


async def evaluate_questions(
    parts: AnswererParts,
    questions: Sequence[Question],
    knowledge: Knowledge,
    *,
    modes: Sequence[str],
    ks: Sequence[int] = DEFAULT_KS,
    server_url: str | None = None,
    judge: Judge | None = None,
    progress: Callable[[str, int], Progress] | None = None,
    unaccented: bool = False,
) -> QuestionsEvaluation:
    """Load ``knowledge`` into a throwaway database, rank and answer ``questions`` (and, with
    ``unaccented``, the same questions again without diacritics).

    ``progress(label, total)`` returns the callback a stage reports its steps to.
    """
    check_modes(parts, modes)
    ks = tuple(sorted(set(ks)))
    levels = _scored_levels(questions, knowledge)

    def bar(label: str, total: int) -> Progress | None:
        return progress(label, total) if progress else None

    seconds: dict[str, float] = {}
    forms = {"written": list(questions)}
    if unaccented:
        forms["unaccented"] = [replace(q, question=fold(q.question)) for q in questions]
    ranked: dict[str, dict[str, ModeResult]] = {}
    outcomes: dict[str, list[AnswerOutcome]] = {}
    async with throwaway_database(server_url) as workspace:
        started = time.perf_counter()
        total = len(knowledge.passages) if knowledge.passages is not None else 0
        loaded = await load_knowledge(workspace, parts, knowledge, bar("indexing", total))
        if "hybrid+graph" in (*modes, parts.settings.search.mode):
            async with workspace.sessionmaker.begin() as session:
                graph = await build_communities(session, parts.settings.search.graph)
            loaded["graph"] = graph.describe()
        seconds["indexing"] = time.perf_counter() - started
        scope = sum(not q.out_of_scope for q in questions)
        for form, asked in forms.items():
            suffix = "" if form == "written" else f" ({form})"
            started = time.perf_counter()
            ranked[form] = await rank_questions(
                workspace,
                parts,
                asked,
                modes,
                levels,
                ks,
                bar(f"ranking{suffix}", scope * len(modes)),
            )
            seconds[f"ranking{suffix}"] = time.perf_counter() - started
            started = time.perf_counter()
            outcomes[form] = await answer_all(
                workspace, parts, asked, judge, bar(f"answering{suffix}", len(asked))
            )
            seconds[f"answering{suffix}"] = time.perf_counter() - started
        async with workspace.sessionmaker() as session:
            thresholds = await Answerer(parts, workspace.sessionmaker).thresholds(session)

    def evaluation(form: str) -> QuestionsEvaluation:
        return QuestionsEvaluation(
            embedder=parts.embedder.name,
            questions=forms[form],
            levels=levels,
            ks=ks,
            modes=ranked[form],
            outcomes=outcomes[form],
            answer_mode=parts.settings.search.mode,
            thresholds={
                "faq_risk": parts.settings.answer.faq_risk,
                "t_doc": thresholds.t_doc,
                "from": thresholds.origin,
            },
            loaded=loaded,
            judge=judge.describe() if judge else None,
            seconds=seconds,
        )

    result = evaluation("written")
    if unaccented:
        result.unaccented = evaluation("unaccented")
    return result
