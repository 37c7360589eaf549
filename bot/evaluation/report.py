"""The files an evaluation leaves in ``--out``: ``report.json``, ``report.md`` and PNG plots.

Plots use matplotlib's Agg back-end (no display, no fonts to fetch); numbers are rounded to four
places in the JSON so that two runs on the same data and model compare equal.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bot.core.errors import DatasetError


def prepare_out(out: Path) -> Path:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatasetError(f"cannot create {out}: {exc.strerror or exc}") from exc
    return out


def rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4) if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v) for v in value]
    return value


def write_json(out: Path, data: Mapping[str, Any]) -> Path:
    path = out / "report.json"
    path.write_text(json.dumps(rounded(data), ensure_ascii=False, indent=2) + "\n", "utf-8")
    return path


def write_markdown(out: Path, text: str) -> Path:
    path = out / "report.md"
    path.write_text(text.rstrip() + "\n", encoding="utf-8")
    return path


def cell(value: object) -> str:
    """Rates with three decimals (one question of 72 is 0.014); text with pipes escaped."""
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def bar_plot(
    path: Path,
    title: str,
    groups: Mapping[str, Mapping[str, float]],
    *,
    ylabel: str = "",
    ylim: tuple[float, float] | None = (0.0, 1.0),
) -> Path:
    """Grouped bars: one group per outer key (a mode, a tier), one bar per inner key."""
    plt = _pyplot()
    names = list(groups)
    series = list(dict.fromkeys(k for g in groups.values() for k in g))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(names) * max(1, len(series)) / 2), 4))
    width = 0.8 / max(1, len(series))
    for i, key in enumerate(series):
        xs = [n + i * width for n in range(len(names))]
        ax.bar(xs, [groups[name].get(key, 0.0) for name in names], width, label=key)
    ax.set_xticks([n + width * (len(series) - 1) / 2 for n in range(len(names))], names)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    if ylim:
        ax.set_ylim(*ylim)
    if len(series) > 1:
        ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def curve_plot(
    path: Path,
    title: str,
    curves: Mapping[str, Sequence[tuple[float, float]]],
    *,
    xlabel: str,
    ylabel: str,
    marks: Mapping[str, tuple[float, float]] | None = None,
) -> Path:
    """Lines of (x, y) points, one per name; ``marks`` labels chosen points."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for name, points in curves.items():
        ax.plot([p[0] for p in points], [p[1] for p in points], marker=".", label=name)
    for label, (x, y) in (marks or {}).items():
        ax.scatter([x], [y], zorder=3, color="black")
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(6, -12), fontsize="small")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_xlim(0.0, 1.02)
    ax.set_ylim(0.0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write_report(
    out: Path, data: Mapping[str, Any], markdown: str, plots: Callable[[Path], object]
) -> None:
    """``report.json``, ``report.md`` and the plots ``plots(out)`` draws, in ``out``."""
    prepare_out(out)
    write_json(out, data)
    write_markdown(out, markdown)
    plots(out)
