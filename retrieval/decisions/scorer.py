"""A logistic scorer that can only move one way in each feature.

Each feature is declared ``up`` (more is likelier right: a higher similarity) or down (more is
likelier wrong: a conflict). An up feature enters through hinges ``min(x - k, 0)`` at a few knots
and itself, each with a weight >= 0: a concave, non-decreasing curve, so a feature far below
what right answers show drags the score down (like a rule's threshold) while more of it above
never lowers it. A down feature enters linearly with a weight <= 0. The sum goes through the
logistic function: the probability that the candidate is right.

Why this shape: fitted on some schools' data and used at another's, a scorer must not learn
that a *higher* similarity is worse because two features moved together in the training sets
(plain logistic regression did, on the development sets); the signs are what we know, the
sizes are what the data says. Fitted with L-BFGS-B under the sign bounds, an L2 penalty, and
each set weighted alike whatever its size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bot.core.errors import ConfigError

KNOT_QUANTILES = (0.05, 0.275, 0.5)  # of the right examples' values: where hinges bend
L2 = 0.3

FloatArray = np.ndarray[Any, np.dtype[np.float64]]


@dataclass(frozen=True)
class MonotoneScorer:
    features: tuple[str, ...]
    up: frozenset[str]
    knots: Mapping[str, tuple[float, ...]]
    scale: tuple[float, ...]  # of each basis column
    weights: tuple[float, ...]
    bias: float

    def __post_init__(self) -> None:
        columns = sum(len(self.knots.get(f, ())) + 1 for f in self.features)
        if len(self.scale) != columns or len(self.weights) != columns:
            raise ConfigError(
                f"scorer: {columns} basis columns for {len(self.features)} features, "
                f"but {len(self.scale)} scales and {len(self.weights)} weights"
            )
        if not self.up <= set(self.features) or set(self.knots) - self.up:
            raise ConfigError("scorer: knots and up features must name features it has")

    def probabilities(self, rows: FloatArray) -> FloatArray:
        """P(right) of each row (features in ``features`` order)."""
        z = _basis(np.asarray(rows, dtype=np.float64), self.features, self.knots)
        s = (z / np.asarray(self.scale)) @ np.asarray(self.weights) + self.bias
        out: FloatArray = 1.0 / (1.0 + np.exp(-s))
        return out

    def probability(self, values: Sequence[float]) -> float:
        return float(self.probabilities(np.asarray([values], dtype=np.float64))[0])

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "up": sorted(self.up),
            "knots": {k: list(v) for k, v in self.knots.items()},
            "scale": list(self.scale),
            "weights": list(self.weights),
            "bias": self.bias,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MonotoneScorer:
        try:
            return cls(
                features=tuple(str(f) for f in data["features"]),
                up=frozenset(str(f) for f in data["up"]),
                knots={str(k): tuple(float(x) for x in v) for k, v in data["knots"].items()},
                scale=tuple(float(x) for x in data["scale"]),
                weights=tuple(float(x) for x in data["weights"]),
                bias=float(data["bias"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(f"scorer: {exc}") from exc

    def contributions(self, values: Sequence[float]) -> dict[str, float]:
        """What each feature adds to the log-odds, for explaining a decision."""
        row = np.asarray([values], dtype=np.float64)
        z = _basis(row, self.features, self.knots)[0] / np.asarray(self.scale)
        w = np.asarray(self.weights)
        out: dict[str, float] = {}
        at = 0
        for f in self.features:
            n = len(self.knots.get(f, ())) + 1
            out[f] = float(z[at : at + n] @ w[at : at + n])
            at += n
        return out


def _basis(
    rows: FloatArray, features: Sequence[str], knots: Mapping[str, Sequence[float]]
) -> FloatArray:
    columns: list[FloatArray] = []
    for i, f in enumerate(features):
        x = rows[:, i]
        columns.extend(np.minimum(x - k, 0.0) for k in knots.get(f, ()))
        columns.append(x)
    return np.stack(columns, axis=1)


def fit_scorer(
    rows: FloatArray,
    labels: FloatArray,
    groups: Sequence[str],
    features: Sequence[str],
    up: Sequence[str],
    *,
    l2: float = L2,
) -> MonotoneScorer:
    """Fit on ``rows`` (features in ``features`` order) and 0/1 ``labels``; ``groups`` names
    each row's set, and every set weighs the same in the loss."""
    rows = np.asarray(rows, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    names, counts = np.unique(np.asarray(groups), return_counts=True)
    per_set = dict(zip(names.tolist(), counts.tolist(), strict=True))
    weight = np.asarray([1.0 / per_set[g] for g in groups])
    weight *= len(weight) / weight.sum()
    ups = frozenset(up)
    right = rows[y > 0.5] if (y > 0.5).any() else rows
    knots = {
        f: tuple(float(q) for q in np.quantile(right[:, i], KNOT_QUANTILES))
        for i, f in enumerate(features)
        if f in ups
    }
    z = _basis(rows, features, knots)
    scale = z.std(axis=0) + 1e-9
    z = z / scale
    signs = [1 if f in ups else -1 for f in features for _ in range(len(knots.get(f, ())) + 1)]
    bounds = [(0.0, None) if s > 0 else (None, 0.0) for s in signs] + [(None, None)]
    design = np.hstack([z, np.ones((len(z), 1))])

    def loss(w: FloatArray) -> tuple[float, FloatArray]:
        s = design @ w
        p = 1.0 / (1.0 + np.exp(-s))
        nll = float((weight * (y * np.logaddexp(0, -s) + (1 - y) * np.logaddexp(0, s))).sum())
        grad = design.T @ (weight * (p - y))
        penalty = np.r_[w[:-1], 0.0]
        return nll + 0.5 * l2 * float(penalty @ penalty), grad + l2 * penalty

    # Imported to fit only: a process that only scores (every serve and worker) is spared it.
    from scipy.optimize import minimize

    result = minimize(loss, np.zeros(design.shape[1]), jac=True, method="L-BFGS-B", bounds=bounds)
    w = result.x
    return MonotoneScorer(
        features=tuple(features),
        up=ups,
        knots=knots,
        scale=tuple(float(x) for x in scale),
        weights=tuple(float(x) for x in w[:-1]),
        bias=float(w[-1]),
    )
