"""The fitted decisions file: scorers and their operating points, validated when read.

``retrieval/data/decisions.json`` is written by `tuvan eval fit` (bot.evaluation.fitting) and
read here once per process. A decision missing from the file is None: its caller falls back to
the safe side (tier 1 then answers only phrasings asked word for word; tier 2 quotes as before
the scorers existed, and reads every message alone).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from bot.core.errors import ConfigError
from retrieval.decisions.scorer import MonotoneScorer

DECISIONS_FILE = Path(__file__).resolve().parent.parent / "data" / "decisions.json"
VERSION = 1


@dataclass(frozen=True)
class OperatingPoint:
    """Where a decision accepts, for one risk target (the share of accepted answers that may
    be wrong). ``threshold`` is a probability; for tier 1 the FAQ's own calibration may raise it
    (``quantile``, a level of the scores its entries get when asked with their own entry taken
    away, up to 2: ``retrieval.faq.calibration.Calibration.threshold``)."""

    risk: float
    threshold: float
    quantile: float | None = None


@dataclass(frozen=True)
class Decision:
    scorer: MonotoneScorer
    points: tuple[OperatingPoint, ...]

    def point(self, risk: float) -> OperatingPoint:
        """The operating point for a risk target: the most permissive one fitted for a risk no
        higher than it, else the strictest there is."""
        fitting = [p for p in self.points if p.risk <= risk + 1e-12]
        if fitting:
            return max(fitting, key=lambda p: p.risk)
        return min(self.points, key=lambda p: p.risk)


@dataclass(frozen=True)
class Decisions:
    faq: Decision | None = None
    documents: Decision | None = None
    context: Decision | None = None
    about: Mapping[str, Any] = field(default_factory=dict)  # provenance, left-out figures


def _decision(name: str, data: Any) -> Decision | None:
    if data is None:
        return None
    try:
        points = tuple(
            OperatingPoint(
                float(p["risk"]),
                float(p["threshold"]),
                float(p["quantile"]) if p.get("quantile") is not None else None,
            )
            for p in data["points"]
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(f"decisions file, {name}: {exc}") from exc
    if not points:
        raise ConfigError(f"decisions file, {name}: no operating points")
    if any(not (0 < p.risk < 1 and 0 <= p.threshold <= 1) for p in points):
        raise ConfigError(f"decisions file, {name}: a risk or threshold out of range")
    if any(p.quantile is not None and not 0 <= p.quantile <= 2 for p in points):
        raise ConfigError(f"decisions file, {name}: a calibration level outside 0-2")
    return Decision(MonotoneScorer.from_json(data.get("scorer") or {}), points)


def parse_decisions(data: Mapping[str, Any]) -> Decisions:
    if data.get("version") != VERSION:
        raise ConfigError(f"decisions file: version {data.get('version')!r}, expected {VERSION}")
    return Decisions(
        faq=_decision("faq", data.get("faq")),
        documents=_decision("documents", data.get("documents")),
        context=_decision("context", data.get("context")),
        about=dict(data.get("about") or {}),
    )


@lru_cache(maxsize=4)
def load_decisions(path: Path | None = None) -> Decisions:
    """The decisions file (the bundled one unless ``path``); no file: no fitted decision."""
    target = path or DECISIONS_FILE
    try:
        raw = json.loads(target.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Decisions()
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{target}: cannot read the decisions file ({exc})") from exc
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{target}: not a decisions file")
    return parse_decisions(raw)


def decision_to_json(decision: Decision) -> dict[str, Any]:
    return {
        "scorer": decision.scorer.to_json(),
        "points": [
            {"risk": p.risk, "threshold": p.threshold, "quantile": p.quantile}
            for p in decision.points
        ],
    }
