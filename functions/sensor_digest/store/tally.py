"""What a set of reports adds to its day item, whatever the mode (``Tally``): their count, their
counts by hour of the day (``HourCounts``), and their readings' statistics by name and hour
(``HourStats``, ``ReadingTally``); and those statistics as a day item keeps them (``number``,
``hour_value``, ``name_map``). A statistic of the reports added to the day item goes here, and
nowhere else.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Context, Decimal, localcontext
from typing import Any, Protocol

from sensor_digest.store import schema


class Report(Protocol):
    """What a tally reads of a counted report."""

    @property
    def count(self) -> int: ...

    @property
    def hour(self) -> str: ...

    @property
    def readings(self) -> tuple[tuple[str, Decimal], ...]: ...


EXACT = Context(prec=80)
"""The arithmetic of readings: exact for every value the message rules admit (15 significant digits,
squares of 30, sums of a write's at most a few hundred)."""


@dataclass(frozen=True)
class HourStats:
    """One reading name's values in one hour: how many, their sum, the least and the greatest."""

    count: int
    total: Decimal
    low: Decimal
    high: Decimal

    def add(self, value: Decimal) -> HourStats:
        return HourStats(self.count + 1, self.total + value, min(self.low, value), max(self.high, value))


@dataclass(frozen=True)
class ReadingTally:
    """One reading name's share of a tally: its values by hour, and the day's sum of their squares."""

    hours: Mapping[str, HourStats]
    squares: Decimal


@dataclass(frozen=True)
class Tally:
    """What a set of reports adds to its day item: their count, their counts by hour of the day
    (``HH``), and their readings' statistics by name."""

    count: int = 0
    hours: Mapping[str, int] = field(default_factory=dict)
    readings: Mapping[str, ReadingTally] = field(default_factory=dict)

    @classmethod
    def of(cls, reports: Iterable[Report]) -> Tally:
        hours: Counter[str] = Counter()
        by_name: dict[str, dict[str, HourStats]] = {}
        squares: dict[str, Decimal] = {}
        with localcontext(EXACT):
            for report in reports:
                hours[report.hour] += report.count
                for name, value in report.readings:
                    stats = by_name.setdefault(name, {})
                    seen = stats.get(report.hour)
                    stats[report.hour] = seen.add(value) if seen else HourStats(1, value, value, value)
                    squares[name] = squares.get(name, Decimal(0)) + value * value
        readings = {
            name: ReadingTally(dict(sorted(stats.items())), squares[name]) for name, stats in sorted(by_name.items())
        }
        return cls(sum(hours.values()), dict(sorted(hours.items())), readings)

    def item(self) -> schema.Item:
        """The tally as the attributes of a new day item."""
        item: schema.Item = {
            schema.DATA_COUNT: {"N": str(self.count)},
            schema.HOUR_COUNTS: {"M": {hour: {"N": str(n)} for hour, n in self.hours.items()}},
            schema.READINGS_COVER: {"N": str(self.count)},
        }
        if self.readings:
            item[schema.READINGS] = {"M": {name: name_map(r) for name, r in self.readings.items()}}
        return item


def number(value: Decimal | int) -> dict[str, str]:
    """A number as DynamoDB keeps it, in plain digits (no exponent)."""
    return {"N": format(value, "f") if isinstance(value, Decimal) else str(value)}


def hour_value(stats: HourStats) -> dict[str, Any]:
    """An hour's statistics as a day item keeps them: its one value when it holds one, else the list
    ``[count, sum, minimum, maximum]`` (a single value is its own sum, minimum and maximum: 6 bytes
    where the list takes about 20, and most hours of a busy sensor hold one or two readings)."""
    if stats.count == 1:
        return number(stats.total)
    return {"L": [number(stats.count), number(stats.total), number(stats.low), number(stats.high)]}


def name_map(reading: ReadingTally) -> dict[str, Any]:
    """A reading name's whole map in a day item (``schema.READINGS``): the day's sum of squares, and
    each hour's statistics (``hour_value``) under its ``HH``."""
    kept = {hour: hour_value(stats) for hour, stats in reading.hours.items()}
    return {"M": {schema.READING_SQUARES: number(reading.squares), **kept}}
