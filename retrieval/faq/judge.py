"""What tier 1 decides with for the FAQ as it is now: the fitted scorer, the threshold this FAQ
calibrates it to for the risk target, and the guard that knows the school's own names.

Made once per FAQ (the lexicon's signature), risk target and guard, per process; the
calibration runs in a worker thread the first time a question meets a changed FAQ.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.decisions.store import Decision, OperatingPoint
from retrieval.faq.calibration import Calibration, calibrate
from retrieval.faq.lexicon import FaqLexicon
from retrieval.guard.checks import NearMissGuard
from retrieval.text.terms import TextProcessor

log = logging.getLogger(__name__)

NO_SCORER = 1.01  # with no fitted scorer, nothing but a phrasing asked word for word is taken


@dataclass(frozen=True)
class FaqJudge:
    lexicon: FaqLexicon
    guard: NearMissGuard | None  # the school's own names read as nothing
    decision: Decision | None
    point: OperatingPoint | None
    threshold: float  # a candidate is accepted at this probability or more (and ``needs``)
    calibration: Calibration

    def needs(self, faq_id: int) -> float:
        """The probability entry ``faq_id`` must reach: the threshold, or more for an entry
        this FAQ shows taking questions not its own."""
        if self.point is None:
            return self.threshold
        return max(self.threshold, self.calibration.threshold(self.point, faq_id))


def make_judge(
    lexicon: FaqLexicon,
    processor: TextProcessor,
    guard: NearMissGuard | None,
    decision: Decision | None,
    risk: float,
    own_names: Sequence[str] = (),
) -> FaqJudge:
    """The judge of ``lexicon``'s FAQ: the guard told the school's names (those its FAQ and
    documents name throughout, and ``own_names``), the FAQ calibrated for ``risk``."""
    if guard is not None:
        texts = [
            *(f"{e.question}\n{e.answer}" for e in lexicon.entries.values()),
            *lexicon.headings,
        ]
        guard = guard.for_school(guard.own_institutions(texts), own_names)
    if decision is None:
        return FaqJudge(lexicon, guard, None, None, NO_SCORER, Calibration(()))
    point = decision.point(risk)
    calibration = calibrate(lexicon, processor, guard, decision.scorer)
    return FaqJudge(lexicon, guard, decision, point, calibration.threshold(point), calibration)


_judges: dict[tuple[str, str, float, int, tuple[str, ...]], FaqJudge] = {}
_lock = asyncio.Lock()


async def current_judge(
    lexicon: FaqLexicon,
    processor: TextProcessor,
    guard: NearMissGuard | None,
    decision: Decision | None,
    risk: float,
    own_names: Sequence[str] = (),
) -> FaqJudge:
    """The judge of ``lexicon`` (``current_lexicon``), made once per FAQ version."""
    url = lexicon.origin
    key = (url, lexicon.signature, risk, id(guard) ^ id(decision), tuple(own_names))
    async with _lock:
        judge = _judges.get(key)
        if judge is None or judge.lexicon is not lexicon:
            started = time.perf_counter()
            judge = await asyncio.to_thread(
                make_judge, lexicon, processor, guard, decision, risk, own_names
            )
            log.info(
                "faq calibration: %d entries, risk %g, threshold %.3f, %.1f s",
                len(lexicon.entries),
                risk,
                judge.threshold,
                time.perf_counter() - started,
            )
            stale = [k for k in _judges if k[0] == url]
            for k in stale:
                del _judges[k]
            _judges[key] = judge
        return judge
