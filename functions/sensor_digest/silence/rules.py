"""When a registered sensor is silent: pure decisions over what its day items' hours say.

A sensor is **silent** when no report of it has been counted for at least its threshold in whole
hours: its own (``SilenceHours`` in its profile) or else the stack's default (``SILENCE_HOURS``);
with neither, it is never silent. Hours are the wall-clock hours of the sensor's own day
(``HourCounts``): the last report hour is the latest hour with a count, on the latest day that has
one, and the silence is counted from the end of that hour to now. On an autumn daylight-saving day
the repeated hour ends at its second end (the later one: a silence is never overstated); the hour
skipped in spring holds no report.

- A day item written before hours were kept (no ``HourCounts``) says only that the sensor reported
  that day: its last hour is taken as ``23``, its end, so the silence is a lower bound.
- A registered sensor with no day item at all has never reported: it is silent, with no last hour
  and no figure of hours (``None``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any

MIN_HOURS = 1
MAX_HOURS = 720
"""A threshold is 1 to 720 hours (30 days)."""

HOUR = timedelta(hours=1)


def check_hours(value: object, what: str = "silence threshold") -> int:
    """A threshold in hours: an integer from ``MIN_HOURS`` to ``MAX_HOURS``; ``ValueError`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_HOURS <= value <= MAX_HOURS:
        raise ValueError(f"{what} must be a whole number of hours from {MIN_HOURS} to {MAX_HOURS}, got {value!r}")
    return value


@dataclass(frozen=True)
class Silent:
    """A registered sensor silent past its threshold (the shared contract's ``GET /silence`` entry)."""

    sensor_id: int
    last_report_hour: str | None  # ``YYYY-MM-DDTHH`` in the sensor's zone; None: never reported
    silent_hours: int | None  # whole hours since the end of that hour; None: never reported
    threshold_hours: int

    def as_json(self) -> dict[str, Any]:
        return {
            "sensor_id": self.sensor_id,
            "last_report_hour": self.last_report_hour,
            "silent_hours": self.silent_hours,
            "threshold_hours": self.threshold_hours,
        }


def local_days(now: datetime, zone: tzinfo) -> tuple[str, str]:
    """Today and yesterday (``YYYY-MM-DD``) in ``zone`` at the instant ``now``."""
    today = now.astimezone(zone).date()
    return today.isoformat(), (today - timedelta(days=1)).isoformat()


def last_report_hour(days: Sequence[tuple[str, Mapping[str, int] | None]]) -> str | None:
    """The last hour with a report, ``YYYY-MM-DDTHH``, from ``(day, hours)`` newest day first
    (``hours`` ``None``: a day item from before hours, taken as its last hour ``23``)."""
    for day, hours in days:
        if hours is None:
            return f"{day}T23"
        reported = [hour for hour, n in hours.items() if n > 0]
        if reported:
            return f"{day}T{max(reported)}"
    return None


def hours_since(last: str, now: datetime, zone: tzinfo) -> int:
    """Whole hours from the end of the wall-clock hour ``last`` (``YYYY-MM-DDTHH``) in ``zone`` to ``now``."""
    day, hour = last.split("T")
    wall = datetime.combine(date.fromisoformat(day), time(int(hour)))
    try:
        start = wall.replace(tzinfo=zone, fold=1).astimezone(UTC)
    except (OverflowError, ValueError):  # an hour at the calendar's ends (year 1, 9999): its zone no longer matters
        start = wall.replace(tzinfo=UTC)
    return max(0, (now.astimezone(UTC) - start) // HOUR - 1)


def silence_of(
    sensor_id: int,
    days: Sequence[tuple[str, Mapping[str, int] | None]],
    *,
    now: datetime,
    zone: tzinfo,
    threshold: int | None,
) -> Silent | None:
    """The sensor's silence, if it is silent past ``threshold`` (``None``: not silent, or no threshold)."""
    if threshold is None:
        return None
    last = last_report_hour(days)
    if last is None:
        return Silent(sensor_id, None, None, threshold)
    silent = hours_since(last, now, zone)
    return Silent(sensor_id, last, silent, threshold) if silent >= threshold else None
