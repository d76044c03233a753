"""What a set of reports adds to its day item, whatever the mode (``Tally``), and its readings'
statistics as a day item keeps them and as they are read back (``readings_of_item``).

A statistic of one reading name's values in one hour is a field of ``HourStats``, declared there
once with ``statistic``: how two hours' values of it merge (``Merge``), the name the read API
answers it by, and its value for a single reading. The rest follows from that declaration: the
tally, the stored list ``[count, *statistics]`` (``hour_value``), its strict reader, what a writer
knows of a stored hour (``day_view.ReadingsView``), the update that adds to it
(``day_writes.py``: added, or set where it moves outwards, by its ``Merge``), that update's cost
within DynamoDB's limits (``expressions.within_limits``) and the read API's answer
(``api/readings.py``). A new statistic is a new field here (and its check in ``HourStats.possible``,
if what values allow can be checked), its meaning in docs/contract.md and docs/readings.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from decimal import Context, Decimal, localcontext
from enum import Enum
from functools import reduce
from typing import Any, Protocol

from sensor_digest.errors import MalformedItem
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

CHECKS = Context(prec=200)
"""Room for a count times a 38-digit sum of squares, and a 38-digit sum squared, without rounding."""


class Merge(Enum):
    """How two hours' values of a statistic make the merged hour's, and so how a write adds to a
    stored one: ``SUM`` added to it; ``LEAST`` and ``GREATEST`` set only where the tally's lies beyond
    it, on condition that it still does (they only move outwards)."""

    SUM = "sum"
    LEAST = "least"
    GREATEST = "greatest"

    def of(self, a: Decimal, b: Decimal) -> Decimal:
        if self is Merge.SUM:
            return a + b
        return min(a, b) if self is Merge.LEAST else max(a, b)


def _same(value: Decimal) -> Decimal:
    return value


def statistic(merge: Merge, answer: str, one: Callable[[Decimal], Decimal] = _same) -> Any:
    """A field of ``HourStats``: how it merges, the read API's name for it, its value for one reading."""
    return field(metadata={"merge": merge, "answer": answer, "one": one})


@dataclass(frozen=True)
class HourStats:
    """One reading name's values in one hour: how many, then each statistic of them, in the order a
    day item's list keeps them (``[count, sum, minimum, maximum]``)."""

    count: int
    total: Decimal = statistic(Merge.SUM, "sum")
    low: Decimal = statistic(Merge.LEAST, "min")
    high: Decimal = statistic(Merge.GREATEST, "max")

    @classmethod
    def one(cls, value: Decimal) -> HourStats:
        """The statistics of a single reading."""
        with localcontext(EXACT):
            return cls(1, *(s.one(value) for s in STATISTICS))

    def merged(self, other: HourStats) -> HourStats:
        with localcontext(EXACT):
            merged = (s.merge.of(getattr(self, s.name), getattr(other, s.name)) for s in STATISTICS)
            return HourStats(self.count + other.count, *merged)

    def add(self, value: Decimal) -> HourStats:
        return self.merged(HourStats.one(value))

    def values(self) -> tuple[Decimal, ...]:
        """The statistics, in the stored list's order after the count."""
        return tuple(getattr(self, s.name) for s in STATISTICS)

    def possible(self) -> bool:
        """Whether some ``count`` values have these statistics (a list that could not was written by hand)."""
        with localcontext(CHECKS):
            return (
                self.count >= 1
                and self.low <= self.high
                and self.count * self.low <= self.total <= self.count * self.high
            )


@dataclass(frozen=True)
class Statistic:
    """A statistic as ``statistic`` declared it: its field, its place in the stored list (the count
    is 0), how it merges, the read API's name, its value for one reading."""

    name: str
    position: int
    merge: Merge
    answer: str
    one: Callable[[Decimal], Decimal]


STATISTICS: tuple[Statistic, ...] = tuple(
    Statistic(f.name, i, f.metadata["merge"], f.metadata["answer"], f.metadata["one"])
    for i, f in enumerate(fields(HourStats)[1:], start=1)
)
COUNTED = Statistic("count", 0, Merge.SUM, "count", lambda value: Decimal(1))
"""The count as a stored list's element 0: added like a sum."""


@dataclass(frozen=True)
class ReadingTally:
    """One reading name's statistics: by hour (``HH``), and the day's sum of their squares."""

    hours: Mapping[str, HourStats]
    squares: Decimal

    def day(self) -> HourStats:
        """The day's statistics: its hours', merged."""
        return reduce(HourStats.merged, self.hours.values())


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
                    stats[report.hour] = seen.add(value) if seen else HourStats.one(value)
                    squares[name] = squares.get(name, Decimal(0)) + value * value
        return cls.of_parts(hours, by_name, squares)

    @classmethod
    def of_parts(
        cls, hours: Mapping[str, int], by_name: Mapping[str, Mapping[str, HourStats]], squares: Mapping[str, Decimal]
    ) -> Tally:
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


# -- as a day item keeps them -----------------------------------------------------------------------


def number(value: Decimal | int) -> dict[str, str]:
    """A number as DynamoDB keeps it, in plain digits (no exponent)."""
    return {"N": format(value, "f") if isinstance(value, Decimal) else str(value)}


def hour_value(stats: HourStats) -> dict[str, Any]:
    """An hour's statistics as a day item keeps them: its one value when it holds one, else the list
    ``[count, *statistics]`` (a single value is its own sum, minimum and maximum: 6 bytes where the
    list takes about 20, and most hours of a busy sensor hold one or two readings)."""
    if stats.count == 1:
        return number(stats.total)
    return {"L": [number(stats.count), *(number(v) for v in stats.values())]}


def name_map(reading: ReadingTally) -> dict[str, Any]:
    """A reading name's whole map in a day item (``schema.READINGS``): the day's sum of squares, and
    each hour's statistics (``hour_value``) under its ``HH``."""
    kept = {hour: hour_value(stats) for hour, stats in reading.hours.items()}
    return {"M": {schema.READING_SQUARES: number(reading.squares), **kept}}


# -- as they are read back --------------------------------------------------------------------------


def readings_of_item(item: Mapping[str, Any]) -> dict[str, ReadingTally]:
    """A day item's readings' statistics by name (``{}`` when it has none); ``MalformedItem`` naming
    ``Readings`` (or ``ReadingsCover``) when they are not as ingest writes them (a map written by
    hand). Each name's map holds the day's sum of squares (``q``) and each hour's statistics under
    its ``HH``: one value, or the list ``[count, *statistics]`` of at least 2 values."""
    if schema.READINGS not in item:
        return {}
    try:
        kept: dict[str, ReadingTally] = {}
        for name, value in sorted(schema.attribute_of(item, schema.READINGS, "M").items()):
            stats = schema.attribute_of({name: value}, name, "M", within=item)
            hours = {hour: _hour_of(stats, hour, item) for hour in sorted(stats) if hour != schema.READING_SQUARES}
            if not hours:
                raise MalformedItem(f"{schema.describe(item)}: {schema.READINGS} {name!r} holds no hour")
            kept[name] = ReadingTally(hours, schema.decimal_of(stats, schema.READING_SQUARES, within=item))
            _check_squares(kept[name], name, item)
    except MalformedItem as bad:
        raise MalformedItem(str(bad), schema.READINGS) from None
    _check_cover(kept, item)
    return kept


def _hour_of(stats: Mapping[str, Any], hour: str, item: Mapping[str, Any]) -> HourStats:
    where = f"{schema.describe(item)}: {schema.READINGS}"
    if not schema.is_hour(hour):
        raise MalformedItem(f"{where} key {hour!r} is no hour 00-23 and not {schema.READING_SQUARES!r}")
    entry = stats[hour]
    if isinstance(entry, Mapping) and "N" in entry:
        return HourStats.one(schema.decimal_of(stats, hour, within=item))
    listed = schema.attribute_of(stats, hour, "L", within=item)
    if not (isinstance(listed, list) and len(listed) == 1 + len(STATISTICS)):
        layout = ", ".join(["count", *(s.answer for s in STATISTICS)])
        raise MalformedItem(f"{where} hour {hour!r} is no [{layout}]")
    count = schema.number_of({"n": listed[0]}, "n", within=item)
    read = HourStats(count, *(schema.decimal_of({"v": v}, "v", within=item) for v in listed[1:]))
    if count < 2 or not read.possible():
        raise MalformedItem(f"{where} hour {hour!r} holds no statistics")
    return read


def _check_cover(kept: Mapping[str, ReadingTally], item: Mapping[str, Any]) -> None:
    """``ReadingsCover`` counts the reports its readings' writers counted: a whole number, at least
    each name's values (a report holds one value of a name), at most the day's ``DataCount`` (each
    write adds to both)."""
    if schema.READINGS_COVER not in item:
        return
    cover = schema.number_of(item, schema.READINGS_COVER)
    if schema.DATA_COUNT in item and cover > schema.number_of(item, schema.DATA_COUNT):
        raise MalformedItem(
            f"{schema.describe(item)}: {schema.READINGS_COVER} {cover} is more than its {schema.DATA_COUNT}",
            schema.READINGS_COVER,
        )
    most = max((sum(h.count for h in reading.hours.values()) for reading in kept.values()), default=0)
    if cover < most:
        raise MalformedItem(
            f"{schema.describe(item)}: {schema.READINGS_COVER} {cover} is fewer than the {most} values a name holds",
            schema.READINGS_COVER,
        )


def _check_squares(kept: ReadingTally, name: str, item: Mapping[str, Any]) -> None:
    """A day's sum of squares lies between its sum squared over its count (no values give less: one
    below would answer a negative variance) and each hour's count times the larger square of its
    minimum and maximum (no values give more): either way it was written by hand."""
    with localcontext(CHECKS):
        day = kept.day()
        most = sum((h.count * max(h.low * h.low, h.high * h.high) for h in kept.hours.values()), Decimal(0))
        allowed = day.total * day.total <= day.count * kept.squares and kept.squares <= most
    if not allowed:
        raise MalformedItem(
            f"{schema.describe(item)}: {schema.READINGS} {name!r}: its sum of squares is not one its values allow"
        )


def readings_past_digits(item: Mapping[str, Any], reports: Iterable[Report]) -> list[str]:
    """The reading names whose statistics in ``item`` (readable, as ingest writes them) would need more
    than DynamoDB's 38 digits once ``reports``' values are added: an hour's statistic (a sum), or the
    day's sum of squares (DynamoDB refuses such a write as invalid)."""
    kept = readings_of_item(item)
    added = Tally.of(reports).readings
    past = []
    with localcontext(CHECKS):
        for name, reading in added.items():
            stored = kept.get(name)
            if stored is None:
                continue
            merged = [stored.hours[h].merged(stats) for h, stats in reading.hours.items() if h in stored.hours]
            numbers = [stored.squares + reading.squares, *(v for stats in merged for v in stats.values())]
            if not all(schema.fits_dynamodb(n) for n in numbers):
                past.append(name)
    return past
