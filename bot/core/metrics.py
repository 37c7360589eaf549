"""Process metrics in the Prometheus text format (``GET /metrics``).

Counters and summaries kept in this process (each ``serve``/``worker`` process is scraped on its
own, as Prometheus expects), plus gauges read from the database at scrape time: the queue depths
are shared state, the same from every process.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Mapping

_HELP = {
    "tuvan_webhook_requests_total": ("counter", "Webhook requests by channel and outcome."),
    "tuvan_inbound_stored_total": ("counter", "Inbound events stored (first delivery)."),
    "tuvan_inbound_duplicates_total": ("counter", "Inbound events delivered again and ignored."),
    "tuvan_inbound_skipped_total": (
        "counter",
        "Events of an authentic webhook body that could not be read (no sender...): skipped.",
    ),
    "tuvan_inbound_quarantined_total": (
        "counter",
        "Authentic events kept in quarantine instead of stored (skipped or refused by the DB).",
    ),
    "tuvan_inbound_repaired_total": (
        "counter",
        "Inbound events stored after a safe repair (a NUL or an unpaired surrogate removed).",
    ),
    "tuvan_answers_total": ("counter", "Answers by channel and tier."),
    "tuvan_feedback_total": (
        "counter",
        "Students' votes on answers, by channel and value (up, down, refused: not their answer).",
    ),
    "tuvan_messages_skipped_total": ("counter", "Questions not answered (staff answering)."),
    "tuvan_messages_failed_total": (
        "counter",
        "Messages given up after max_attempts claims, by direction and reason "
        "(error: the last attempt failed; abandoned: its claimer died or hung).",
    ),
    "tuvan_sends_total": ("counter", "Replies handed to a platform, by result."),
    "tuvan_answer_seconds": ("summary", "Time from claiming a question to its stored reply."),
    "tuvan_webhook_seconds": ("summary", "Time to verify, store and acknowledge a webhook."),
    "tuvan_queue_depth": (
        "gauge",
        "Messages waiting, by queue (inbox: to answer; outbox: to send).",
    ),
}

Labels = tuple[tuple[str, str], ...]


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, dict[Labels, float]] = defaultdict(dict)
        self._sums: dict[str, dict[Labels, tuple[int, float]]] = defaultdict(dict)

    def inc(self, name: str, amount: float = 1.0, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        with self._lock:
            series = self._counters[name]
            series[key] = series.get(key, 0.0) + amount

    def observe(self, name: str, seconds: float, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        with self._lock:
            count, total = self._sums[name].get(key, (0, 0.0))
            self._sums[name][key] = (count + 1, total + seconds)

    def reset(self) -> None:
        with self._lock:
            self._counters.clear()
            self._sums.clear()

    def render(self, gauges: Mapping[str, Mapping[Labels, float]] | None = None) -> str:
        lines: list[str] = []
        with self._lock:
            families: dict[str, list[str]] = defaultdict(list)
            for name, series in self._counters.items():
                for labels, value in sorted(series.items()):
                    families[name].append(f"{name}{_labels(labels)} {value:g}")
            for name, sums in self._sums.items():
                for labels, (count, total) in sorted(sums.items()):
                    families[name].append(f"{name}_count{_labels(labels)} {count}")
                    families[name].append(f"{name}_sum{_labels(labels)} {total:.6f}")
        for name, gauge in (gauges or {}).items():
            for labels, level in sorted(gauge.items()):
                families[name].append(f"{name}{_labels(labels)} {level:g}")
        for name in sorted(families):
            kind, text = _HELP.get(name, ("untyped", name))
            lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}", *families[name]]
        return "\n".join(lines) + "\n"


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels) + "}"


def _escape(value: str) -> str:
    """Label values escape backslash, double quote and newline (the exposition format)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


METRICS = Metrics()
