"""Tier 1's evidence on an FAQ set: what the scorer is fitted on and judged by (1/4).

The FAQ goes into a throwaway database; every query is read, embedded and matched as the
answerer does it (``Lookup``: restored, expanded, its candidates from both rankers), as written
and again folded, and each candidate is weighed (``retrieval.faq.features``). The FAQ's own
calibration evidence is kept beside (each entry's question asked with that entry taken away).
None of this depends on a scorer, so one collection serves every fold of the leave-one-set-out
fit and every threshold of a sweep.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.answer.question import clean_question, is_question
from bot.answer.small_talk import small_talk
from bot.evaluation.data import FaqItem, FaqQuery
from bot.evaluation.workspace import load_faq, prepare_all, throwaway_database
from retrieval.faq.calibration import calibration_evidence
from retrieval.faq.candidates import coverage_terms
from retrieval.faq.decision import decide_faq
from retrieval.faq.features import weigh_candidates
from retrieval.faq.judge import make_judge
from retrieval.query import question_vector
from retrieval.text.folding import fold

FORMS = ("written", "folded")


@dataclass(frozen=True)
class Weighed:
    """One candidate of a query, weighed."""

    external_id: str | None
    values: tuple[float, ...]
    ruled_out: bool
    why: str = ""  # the guard's or the contrast's reason, for a ruled-out one
    faq_id: int = 0  # the entry's id in the evaluation's database (the calibration's key)


@dataclass(frozen=True)
class FaqExample:
    query: FaqQuery
    form: str
    asked: str  # the query as read (restored, shorthand written out)
    verbatim: str | None  # the entry taken word for word, if any
    weighed: tuple[Weighed, ...]

    def label(self, w: Weighed) -> float:
        return float(self.query.answered_by(w.external_id))


@dataclass(frozen=True)
class FaqSetEvidence:
    name: str
    examples: tuple[FaqExample, ...]
    calibration: tuple[tuple[tuple[int, tuple[float, ...]], ...], ...]

    def form(self, form: str) -> list[FaqExample]:
        return [e for e in self.examples if e.form == form]


async def collect_faq_evidence(
    parts: AnswererParts,
    name: str,
    items: Sequence[FaqItem],
    queries: Sequence[FaqQuery],
    *,
    forms: Sequence[str] = FORMS,
    server_url: str | None = None,
    on_query: Callable[[int], None] | None = None,
    enrich: bool = False,
) -> FaqSetEvidence:
    """Every query of ``queries`` (in each of ``forms``) weighed against ``items`` (with
    ``enrich``, and the phrasings `tuvan faq enrich` adds)."""
    examples: list[FaqExample] = []
    async with throwaway_database(server_url) as workspace:
        await load_faq(workspace, parts, items, enrich=enrich)
        answerer = Answerer(parts, workspace.sessionmaker)
        async with workspace.sessionmaker() as session:
            base = await answerer.judge(session)
        # The evidence is the scorer's input: weigh it with no scorer (the guard, the school's
        # names and contrasts are the FAQ's own).
        judge = make_judge(
            base.lexicon,
            parts.processor,
            parts.guard_in_use,
            None,
            parts.settings.answer.faq_risk,
            parts.settings.brand.own_names,
        )
        calibration = calibration_evidence(judge.lexicon, parts.processor, judge.guard)
        for form in forms:
            asked = [replace(q, query=fold(q.query)) if form == "folded" else q for q in queries]
            texts = [clean_question(q.query) for q in asked]
            # As the answerer: a message with nothing to search for, or small talk ("tạm biệt
            # nha"), never reaches tier 1.
            keep = [i for i, t in enumerate(texts) if is_question(t) and small_talk(t) is None]
            prepared, vectors = await prepare_all(workspace, parts, [texts[i] for i in keep])
            read = dict(zip(keep, zip(prepared, vectors, strict=True), strict=True))
            async with workspace.sessionmaker() as session:
                for i, query in enumerate(queries):
                    if i not in read:
                        examples.append(FaqExample(query, form, texts[i], None, ()))
                        continue
                    p, v = read[i]
                    vector = question_vector(p, v)
                    cands = await answerer.faq_candidates(session, p, vector, judge)
                    covering = coverage_terms(p.readable, parts.processor, judge.guard)
                    decided = decide_faq(p.dense, covering, cands, judge)
                    verbatim = (
                        decided.accepted.external_id
                        if decided.accepted is not None and decided.verdicts[0].code == "verbatim"
                        else None
                    )
                    evidence = weigh_candidates(
                        p.dense,
                        covering,
                        cands,
                        judge.lexicon,
                        judge.guard,
                        judge.lexicon.contrasts,
                    )
                    weighed = tuple(
                        Weighed(
                            e.candidate.external_id,
                            e.values,
                            e.ruled_out,
                            e.guard.reason if e.guard is not None and not e.guard.ok else "",
                            e.candidate.faq_id,
                        )
                        for e in evidence
                    )
                    examples.append(FaqExample(query, form, p.dense, verbatim, weighed))
                    if on_query is not None:
                        on_query(1)
    return FaqSetEvidence(name, tuple(examples), tuple(tuple(rows) for rows in calibration))


def decide_example(
    example: FaqExample, probabilities: np.ndarray, needs: Callable[[int], float]
) -> str | None:
    """What tier 1 answers for an example, given each weighed candidate's probability (in
    ``weighed`` order; ruled-out ones ignored) and what each entry needs (``FaqJudge.needs``):
    as ``decide_faq`` decides."""
    if example.verbatim is not None:
        return example.verbatim
    best: tuple[float, Weighed] | None = None
    for w, p in zip(example.weighed, probabilities, strict=True):
        if w.ruled_out:
            continue
        if best is None or p > best[0]:
            best = (float(p), w)
    if best is None or best[0] < needs(best[1].faq_id):
        return None
    return best[1].external_id
