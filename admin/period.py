"""The period a report page covers: the last 7, 30 or 90 days up to an end date (UTC days).

``?days=30&end=2026-11-29`` in the URL, so a report can be linked to and looked at again; the
end defaults to today and cannot be later than today.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from admin.i18n import add_strings
from bot.core.clock import utcnow

PERIODS = (7, 30, 90)
DEFAULT_DAYS = 30

add_strings(  # the words of templates/period.html, the selector every report page shows
    {
        "period.label": ("Khoảng thời gian", "Period"),
        "period.days": ("{n} ngày", "{n} days"),
        "period.end": ("Đến ngày", "Up to"),
        "period.show": ("Xem", "Show"),
        "period.range": ("Từ {first} đến {end} (UTC)", "From {first} to {end} (UTC)"),
    }
)


def today() -> date:
    return utcnow().date()


@dataclass(frozen=True)
class Period:
    days: int
    end: date  # the last day shown, inclusive

    @classmethod
    def from_query(cls, query: Mapping[str, str], default_days: int = DEFAULT_DAYS) -> Period:
        """Unknown values fall back to the defaults: a hand-edited URL still shows a report."""
        try:
            days = int(query.get("days", ""))
        except ValueError:
            days = default_days
        if days not in PERIODS:
            days = default_days
        latest = today()
        try:
            end = date.fromisoformat(query.get("end", "") or latest.isoformat())
        except ValueError:
            end = latest
        return cls(days, min(end, latest))

    @property
    def first(self) -> date:
        return self.end - timedelta(days=self.days - 1)

    @property
    def since(self) -> datetime:
        """The first instant of the period (midnight UTC of its first day)."""
        return datetime.combine(self.first, time(), UTC)

    @property
    def until(self) -> datetime:
        """The first instant after the period (exclusive)."""
        return datetime.combine(self.end + timedelta(days=1), time(), UTC)

    def dates(self) -> list[date]:
        return [self.first + timedelta(days=i) for i in range(self.days)]

    def query(self, **changes: str) -> dict[str, str]:
        """This period as URL parameters (the end left out when it is today)."""
        values = {"days": str(self.days), "end": "" if self.end == today() else str(self.end)}
        return {k: v for k, v in {**values, **changes}.items() if v != ""}
