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
- A day item without ``DataCount`` (an empty one: a write that counted nothing there) holds no
  report, and neither does any item that is no day item: the check reads past them.
- A registered sensor with no report at all has never reported: its silence is counted from its
  registration (the profile's ``RegisteredAt``), so a sensor registered minutes ago is not silent.
  A profile written before registration times were kept has none: such a sensor is silent at once,
  with no last hour and no figure of hours (``None``), as before.

Every reader says a silence in one phrasing (``wording``: the command line, the page and the docs):
``last report in hour 2024-05-01 19:00\u201320:00 Europe/Paris, silent 3 h, threshold 2 h`` (an en
dash between the hour's start and end).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any

MIN_HOURS = 1
MAX_HOURS = 720
"""A threshold is 1 to 720 hours (30 days)."""

HOUR = timedelta(hours=1)
EN_DASH = "\u2013"  # between an hour's start and end: 19:00-20:00 with the dash of ranges
REGISTERED_AT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


def check_hours(value: object, what: str = "silence threshold") -> int:
    """A threshold in hours: an integer from ``MIN_HOURS`` to ``MAX_HOURS``; ``ValueError`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_HOURS <= value <= MAX_HOURS:
        raise ValueError(f"{what} must be a whole number of hours from {MIN_HOURS} to {MAX_HOURS}, got {value!r}")
    return value


@dataclass(frozen=True)
class Silent:
    """A registered sensor silent past its threshold (the contract's ``GET /silence`` entry, with
    the zone of its hours and its registration time beside)."""

    sensor_id: int
    last_report_hour: str | None  # ``YYYY-MM-DDTHH`` in the sensor's zone; None: never reported
    silent_hours: int | None  # whole hours since the end of that hour (or its registration); None: unknown
    threshold_hours: int
    timezone: str = "UTC"  # the zone of ``last_report_hour``: the sensor's registered one, else the digest's
    registered_at: str | None = None  # ``YYYY-MM-DDTHH:MM:SSZ``; None: registered before times were kept

    def as_json(self) -> dict[str, Any]:
        """The ``GET /silence`` entry: every field, by its name, in this order."""
        return asdict(self)


def wording(entry: Mapping[str, Any]) -> str:
    """A ``GET /silence`` entry in the one phrasing every reader uses (the page's ``silenceText``
    says the same): ``last report in hour 2024-05-01 19:00\u201320:00 Europe/Paris, silent 3 h,
    threshold 2 h``; ``never reported, registered 2024-05-01 09:12 UTC, silent 30 h, threshold 6 h``;
    ``never reported, registered before registration times were kept, threshold 6 h``."""
    threshold = f"threshold {entry['threshold_hours']} h"
    last, registered = entry.get("last_report_hour"), entry.get("registered_at")
    if last is not None:
        day, hour = str(last).split("T")
        span = f"{hour}:00{EN_DASH}{int(hour) + 1:02d}:00"
        return (
            f"last report in hour {day} {span} {entry.get('timezone')}, silent {entry['silent_hours']} h, {threshold}"
        )
    if registered is None or entry.get("silent_hours") is None:
        return f"never reported, registered before registration times were kept, {threshold}"
    when = f"{str(registered)[:10]} {str(registered)[11:16]} UTC"
    return f"never reported, registered {when}, silent {entry['silent_hours']} h, {threshold}"


def registration_time(text: object) -> datetime | None:
    """A profile's ``RegisteredAt`` (``YYYY-MM-DDTHH:MM:SSZ``) as an instant; ``None`` when it is
    absent or no such time (a profile written before registration times were kept, or by hand)."""
    if not isinstance(text, str) or REGISTERED_AT.fullmatch(text) is None:
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def registration_text(when: datetime) -> str:
    """An instant as a profile's ``RegisteredAt`` stores it: UTC, to the second."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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
    registered: datetime | None = None,
) -> Silent | None:
    """The sensor's silence, if it is silent past ``threshold`` (``None``: not silent, or no
    threshold): from the end of its last report hour, else from its registration, else (a profile
    without a registration time) at once, of hours unknown."""
    if threshold is None:
        return None
    last = last_report_hour(days)
    since = None if registered is None else registration_text(registered)
    if last is None:
        if registered is None:
            return Silent(sensor_id, None, None, threshold, str(zone), since)
        silent = max(0, (now.astimezone(UTC) - registered) // HOUR)
        return Silent(sensor_id, None, silent, threshold, str(zone), since) if silent >= threshold else None
    silent = hours_since(last, now, zone)
    return Silent(sensor_id, last, silent, threshold, str(zone), since) if silent >= threshold else None
