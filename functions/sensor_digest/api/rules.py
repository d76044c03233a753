"""What the read API accepts: sensor ids, days, months, ranges and page sizes, each refused with a
one-line reason (``BadRequest``, answered 400).

The limits, chosen so that one request is one ``Query`` of at most a few hundred small items:

- a range of days holds at most ``MAX_DAYS`` (366: a leap year, from any day to the same day a
  year later minus one), a range of months at most ``MAX_MONTHS`` (24);
- a page holds at most ``MAX_DAYS`` day items, ``MAX_MONTHS`` summary items, or ``MAX_SENSORS``
  profiles (``limit`` asks for fewer); a page stops early when DynamoDB's 1 MB per ``Query`` does,
  so a client follows ``next_token`` until there is none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from sensor_digest.errors import BadRequest
from sensor_digest.store import schema

MAX_SENSOR_ID = 2**53 - 1
MAX_DAYS = 366
MAX_MONTHS = 24
MAX_SENSORS = 100
SENSOR_ID = re.compile(r"[0-9]{1,16}")  # ASCII digits (``\d`` takes any script's); 2^53-1 has 16
LIMIT = re.compile(r"[0-9]{1,4}")


def is_sensor_id(text: object) -> bool:
    """Whether ``text`` is a sensor id: a non-negative integer of at most 2^53 - 1, in ASCII digits
    (as a path gives it, and as DynamoDB keeps a ``SensorId`` that is one)."""
    return isinstance(text, str) and SENSOR_ID.fullmatch(text) is not None and int(text) <= MAX_SENSOR_ID


def sensor_id(text: str) -> int:
    """A sensor id from the path (``is_sensor_id``)."""
    if not is_sensor_id(text):
        raise BadRequest(f"sensor id must be an integer from 0 to {MAX_SENSOR_ID}, got {_shown(text)}")
    return int(text)


def limit(text: str | None, most: int) -> int:
    """``limit``: how many items a page may hold, 1 to ``most`` (``most`` when absent)."""
    if text is None:
        return most
    if LIMIT.fullmatch(text) is None or not 1 <= int(text) <= most:
        raise BadRequest(f"limit must be an integer from 1 to {most}, got {_shown(text)}")
    return int(text)


@dataclass(frozen=True)
class Range:
    """An inclusive range of days (``YYYY-MM-DD``) or months (``YYYY-MM``), as the request gave it."""

    first: str
    last: str


def day_range(first: str | None, last: str | None) -> Range:
    """``from`` and ``to``: real calendar days, ``from`` not after ``to``, at most ``MAX_DAYS`` days."""
    start, end = _day(first, "from"), _day(last, "to")
    if start > end:
        raise BadRequest(f"from {first} is after to {last}")
    if (end - start).days + 1 > MAX_DAYS:
        raise BadRequest(f"from {first} to {last} is {(end - start).days + 1} days; at most {MAX_DAYS} at a time")
    return Range(str(first), str(last))


def month_range(first: str | None, last: str | None) -> Range:
    """``from`` and ``to``: months ``YYYY-MM``, ``from`` not after ``to``, at most ``MAX_MONTHS`` months."""
    start, end = _month(first, "from"), _month(last, "to")
    if start > end:
        raise BadRequest(f"from {first} is after to {last}")
    if end - start + 1 > MAX_MONTHS:
        raise BadRequest(f"from {first} to {last} is {end - start + 1} months; at most {MAX_MONTHS} at a time")
    return Range(str(first), str(last))


def day(text: str | None, name: str = "day") -> str:
    """``day``: a real calendar day ``YYYY-MM-DD`` (``GET /sensors/{id}/hours``)."""
    return _day(text, name).isoformat()


def _day(text: str | None, name: str) -> date:
    if text is None:
        raise BadRequest(f"{name} is required: a day YYYY-MM-DD")
    if not schema.is_day(text):
        raise BadRequest(f"{name} must be a day YYYY-MM-DD, got {_shown(text)}")
    return date.fromisoformat(text)


def _month(text: str | None, name: str) -> int:
    """A month as a count of months since year 0, for differences."""
    if text is None:
        raise BadRequest(f"{name} is required: a month YYYY-MM")
    if not schema.is_month(text):
        raise BadRequest(f"{name} must be a month YYYY-MM, got {_shown(text)}")
    return int(text[:4]) * 12 + int(text[5:]) - 1


def _shown(text: str, most: int = 40) -> str:
    """What the client sent, quoted as a JSON-safe Python literal and clipped (errors repeat input)."""
    clipped = text if len(text) <= most else text[:most] + "..."
    return ascii(clipped)
