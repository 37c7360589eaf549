"""What `tuvan eval calibrate` reports and chooses: tier 1's coverage at each risk target on
the operator's FAQ (its threshold is the fitted scorer's, calibrated on that FAQ by itself:
retrieval.faq.calibration), and t_doc swept over the answers of the documents tier; the lines
that report them and the JSON data written with their plots."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.parts import AnswererParts
from bot.evaluation.data import Question
from bot.evaluation.metrics import Choice, FaqRates, choose_threshold, sweep
from bot.evaluation.questions import Knowledge, answer_all, load_knowledge
from bot.evaluation.workspace import throwaway_database
from bot.knowledge.jobs import Progress
from retrieval.index.state import save_thresholds


@dataclass(frozen=True)
class DocPoint:
    threshold: float
    precision: float  # of the answers from documents, the share that is right
    coverage: float  # of the in-scope questions with key facts, the share answered right there
    answered: int


async def calibrate_t_doc(
    parts: AnswererParts,
    questions: Sequence[Question],
    knowledge: Knowledge,
    *,
    required_precision: float,
    low: float = 0.80,
    high: float = 0.95,
    step: float = 0.01,
    server_url: str | None = None,
    progress: Callable[[str, int], Progress] | None = None,
) -> tuple[Choice, list[DocPoint]]:
    """Sweep ``t_doc`` and keep the one with the most right answers from documents while the
    documents tier stays at ``required_precision``; an out-of-scope question answered from
    documents counts against precision. FAQ answers are left out (tier 1 decides those)."""
    thresholds = sweep(low, high, step)
    scored = [q for q in questions if q.out_of_scope or q.key_facts]
    in_scope = sum(not q.out_of_scope for q in scored)
    points: list[DocPoint] = []
    async with throwaway_database(server_url) as workspace:
        await load_knowledge(workspace, parts, knowledge, None)
        tick = progress("t_doc sweep", len(thresholds) * len(scored)) if progress else None
        for t in thresholds:
            answer = parts.settings.answer.model_copy(update={"t_doc": t})
            swept = replace(parts, settings=parts.settings.model_copy(update={"answer": answer}))
            outcomes = await answer_all(workspace, swept, scored, None, tick)
            docs = [o for o in outcomes if o.answer.tier == "documents"]
            right = sum(o.right for o in docs)
            points.append(
                DocPoint(
                    t,
                    right / len(docs) if docs else 1.0,
                    right / in_scope if in_scope else 0.0,
                    len(docs),
                )
            )
    choice = choose_threshold(
        [(p.threshold, p.precision, p.coverage) for p in points], required_precision
    )
    return choice, points


@dataclass(frozen=True)
class Calibration:
    """What `tuvan eval calibrate` found: tier 1's rates at each risk target and, when a
    questions file was given, t_doc with its curve."""

    embedder: str
    faq: Sequence[tuple[float, float, FaqRates]]  # (risk target, threshold, rates)
    doc: Choice | None = None
    doc_precision: float | None = None
    doc_points: Sequence[DocPoint] = ()

    @property
    def chosen(self) -> dict[str, float]:
        """The thresholds that met their precision, by setting name."""
        if self.doc is not None and self.doc.met:
            return {"t_doc": self.doc.threshold}
        return {}

    def lines(self) -> list[str]:
        """One line per risk target, then t_doc's choice or why none was chosen."""
        lines = [
            f"risk {risk:g}: threshold {t:.3f} on this FAQ, precision {r.precision:.3f}, "
            f"coverage {r.coverage:.3f}, false accepts {r.false_accept:.3f}"
            for risk, t, r in self.faq
        ]
        d = self.doc
        if d is not None and d.met:
            lines.append(
                f"t_doc {d.threshold:.3f}: precision {d.precision:.3f}, "
                f"coverage {d.coverage:.3f} (required precision {self.doc_precision})"
            )
        elif d is not None:
            lines.append(
                f"t_doc: no threshold reaches precision {self.doc_precision}; the best is "
                f"{d.threshold:.3f} (precision {d.precision:.3f}, coverage "
                f"{d.coverage:.3f})."
            )
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "embedder": self.embedder,
            "faq": [{"risk": r, "threshold": t, **rates.as_dict()} for r, t, rates in self.faq],
            "t_doc": (
                {
                    "required_precision": self.doc_precision,
                    **vars(self.doc),
                    "curve": [vars(p) for p in self.doc_points],
                }
                if self.doc
                else None
            ),
        }


async def store_thresholds(
    sessionmaker: async_sessionmaker[AsyncSession], chosen: dict[str, float]
) -> None:
    """Keep the chosen thresholds in the live index, for the current embedder."""
    async with sessionmaker.begin() as session:
        await save_thresholds(session, chosen)
