"""Decisions taken after search, as fitted scorers (1/4): accept an FAQ entry, answer from the
documents or abstain, read a message with its conversation or alone.

Each is a ``MonotoneScorer`` over features its module chooses, fitted by `tuvan eval fit` on
every development set and stored, with its operating points, in ``retrieval/data/decisions.json``
(``load_decisions``). Nothing here is tuned by hand: the file is written by the fitting script
and says which sets, which commit and which left-out figures it came from.
"""

from retrieval.decisions.scorer import MonotoneScorer, fit_scorer
from retrieval.decisions.store import Decisions, OperatingPoint, load_decisions

__all__ = ["Decisions", "MonotoneScorer", "OperatingPoint", "fit_scorer", "load_decisions"]
