"""Charts as inline SVG, computed here and drawn by ``templates/charts.html``.

This module does the arithmetic only (scales, stacked bars, polylines, tick labels) and returns
plain shapes; the Jinja macro writes the SVG elements, so every label goes through the same
autoescaping as the rest of the page and no markup is ever built from strings. No script and no
``style`` attribute is used: the admin's CSP allows neither. Every chart is followed by a table
of the same numbers, for screen readers and for copying.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

WIDTH = 720
HEIGHT = 240
LEFT, RIGHT, TOP, BOTTOM = 52, 12, 12, 40
MAX_X_LABELS = 10
TICKS = 4  # gridlines above zero, at most

# Distinguishable on white and for the common colour-vision deficiencies (Okabe-Ito).
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#000000")


@dataclass(frozen=True)
class Series:
    name: str  # shown in the legend (already translated)
    values: Sequence[float | None]  # one per label; None: no value (a gap in a line)
    color: str


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    color: str
    title: str  # the tooltip: "<series> <label>: <value>"


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    title: str


@dataclass(frozen=True)
class Line:
    color: str
    segments: list[str]  # SVG polyline "points" values; a missing value breaks the line
    points: list[Point]


@dataclass(frozen=True)
class Tick:
    at: float  # y for the value axis, x for the label axis
    label: str


@dataclass(frozen=True)
class Chart:
    title: str
    width: int = WIDTH
    height: int = HEIGHT
    bars: list[Bar] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    legend: list[tuple[str, str]] = field(default_factory=list)  # (name, color)

    @property
    def plot_left(self) -> int:
        return LEFT

    @property
    def plot_right(self) -> int:
        return self.width - RIGHT

    @property
    def plot_bottom(self) -> int:
        return self.height - BOTTOM


def nice_step(top: float, *, whole: bool = False) -> float:
    """The gridline step for values up to ``top``: the smallest 1, 2 or 5 × 10^k giving at
    most ``TICKS`` steps; at least 1 for counts (``whole``), which have no half messages."""
    raw = max(top, 1e-9) / TICKS
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw - 1e-12)
    return float(max(step, 1)) if whole else float(step)


def format_number(value: float) -> str:
    if abs(value - round(value)) < 1e-9:
        return str(round(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _y_axis(top_value: float, unit: str, *, whole: bool) -> tuple[float, list[Tick]]:
    """The axis maximum (a whole number of steps) and its labelled gridlines."""
    step = nice_step(top_value, whole=whole)
    steps = max(1, math.ceil(top_value / step - 1e-9))
    ceiling = step * steps
    plot = HEIGHT - TOP - BOTTOM
    ticks = [
        Tick(TOP + plot - plot * i / steps, format_number(step * i) + unit)
        for i in range(steps + 1)
    ]
    return ceiling, ticks


def _x_positions(count: int, width: int) -> tuple[float, list[float]]:
    """The slot width and the centre of each of ``count`` slots across the plot."""
    slot = (width - LEFT - RIGHT) / max(count, 1)
    return slot, [LEFT + slot * (i + 0.5) for i in range(count)]


def _x_ticks(labels: Sequence[str], centres: list[float]) -> list[Tick]:
    every = max(1, math.ceil(len(labels) / MAX_X_LABELS))
    return [Tick(centres[i], labels[i]) for i in range(0, len(labels), every)]


def _scale(value: float, ceiling: float) -> float:
    plot = HEIGHT - TOP - BOTTOM
    return plot * min(value, ceiling) / ceiling


def stacked_bars(
    title: str, labels: Sequence[str], series: Sequence[Series], *, unit: str = ""
) -> Chart:
    """One bar per label, each series stacked on the ones before it."""
    totals = [sum(s.values[i] or 0 for s in series) for i in range(len(labels))]
    ceiling, y_ticks = _y_axis(max(totals, default=0), unit, whole=True)
    slot, centres = _x_positions(len(labels), WIDTH)
    width = max(1.0, slot * 0.7)
    bars = []
    for i, label in enumerate(labels):
        base = float(HEIGHT - BOTTOM)
        for s in series:
            value = s.values[i] or 0
            if value <= 0:
                continue
            height = _scale(value, ceiling)
            base -= height
            tip = f"{s.name} {label}: {format_number(value)}{unit}"
            bars.append(Bar(centres[i] - width / 2, base, width, height, s.color, tip))
    return Chart(
        title=title,
        bars=bars,
        y_ticks=y_ticks,
        x_ticks=_x_ticks(labels, centres),
        legend=[(s.name, s.color) for s in series],
    )


def line_chart(
    title: str, labels: Sequence[str], series: Sequence[Series], *, unit: str = ""
) -> Chart:
    """One line per series; a label without a value breaks the line there."""
    values = [v for s in series for v in s.values if v is not None]
    ceiling, y_ticks = _y_axis(max(values, default=0), unit, whole=False)
    _, centres = _x_positions(len(labels), WIDTH)
    lines = []
    for s in series:
        segments: list[str] = []
        current: list[str] = []
        points = []
        for i, value in enumerate(s.values):
            if value is None:
                if current:
                    segments.append(" ".join(current))
                current = []
                continue
            x, y = centres[i], HEIGHT - BOTTOM - _scale(value, ceiling)
            current.append(f"{x:.1f},{y:.1f}")
            points.append(Point(x, y, f"{s.name} {labels[i]}: {format_number(value)}{unit}"))
        if current:
            segments.append(" ".join(current))
        lines.append(Line(s.color, segments, points))
    return Chart(
        title=title,
        lines=lines,
        y_ticks=y_ticks,
        x_ticks=_x_ticks(labels, centres),
        legend=[(s.name, s.color) for s in series],
    )
