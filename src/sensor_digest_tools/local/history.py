"""A synthetic history file with its truth: a fleet's past reports as JSON lines or CSV, in the order an
export gives them (by sensor then time, by time across the fleet, or none), some poison rows, and the
counts and hours per sensor-day they add up to; with readings (``traffic.ReadingSpec``), each reading's
statistics per sensor-day too, in decimal. The history demo, the import's benchmark and its tests
write theirs with ``write_history``."""

from __future__ import annotations

import csv
import io
import json
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Literal

from sensor_digest_tools.local.traffic import POISON_BODIES, ReadingSpec, ReadingTruth

Order = Literal["sorted", "time", "random"]
"""``sorted``: by sensor, then time (an export ordered by sensor and time); ``time``: by time across
the fleet (an export in time order); ``random``: no order at all."""
COLUMNS = ("sensor_id", "timestamp", "count", "event_id")
READINGS_PREFIX = "readings."  # a CSV file's column of a reading: readings.<name> (docs/import.md#formats)
POISON_CSV = ("seven,2024-01-01T00:00:00Z,1,p", "3,,1,p", "3,2024-01-01T00:00:00Z,0,p", "-1,2024-01-01,1,p", "3,x")


@dataclass
class HistoryTruth:
    """What a history file adds up to: data points per sensor-day and per hour of it, its rows, and
    each reading's statistics per sensor-day (``(sensor, day, name)``, as ``traffic.Traffic`` keeps them)."""

    counts: Counter[tuple[int, str]] = field(default_factory=Counter)
    hours: dict[tuple[int, str], Counter[str]] = field(default_factory=dict)
    readings: dict[tuple[int, str, str], ReadingTruth] = field(default_factory=dict)
    rows: int = 0
    valid: int = 0
    poison: int = 0

    def add(self, report: Report) -> None:
        key = (report.sensor, report.day)
        self.counts[key] += report.count
        self.hours.setdefault(key, Counter())[report.timestamp[11:13]] += report.count
        for name, value in report.readings:
            self.readings.setdefault((*key, name), ReadingTruth()).add(value)
        self.valid += 1


@dataclass(frozen=True)
class Report:
    sensor: int
    day: str
    second: int
    count: int
    event_id: str
    readings: tuple[tuple[str, Decimal], ...] = ()

    @property
    def timestamp(self) -> str:
        s = self.second
        return f"{self.day}T{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}Z"


def _reports(
    sensors: int, days: int, per_day: int, first_day: date, rng: random.Random, readings: Sequence[ReadingSpec]
) -> Iterator[Report]:
    """By sensor, then time: ``per_day`` reports a sensor-day, spread over the day, each carrying
    ``readings`` (each in its share of reports, of random values)."""
    for sensor in range(1, sensors + 1):
        for d in range(days):
            day = (first_day + timedelta(days=d)).isoformat()
            seconds = sorted(rng.randrange(86_400) for _ in range(per_day))
            for i, second in enumerate(seconds):
                count = rng.randint(1, 3)
                values = tuple((spec.name, spec.value(rng)) for spec in readings if rng.random() < spec.share)
                yield Report(sensor, day, second, count, f"h{sensor}-{day}-{i}", values)


def _line(report: Report, fmt: str, readings: Sequence[ReadingSpec], event_ids: bool = True) -> str:
    """The report as a line of the file: its values as the exact decimals they are (never a float); its
    ``event_id`` unless ``event_ids`` is false."""
    event_id = report.event_id if event_ids else ""
    if fmt == "csv":
        out = io.StringIO()
        values = dict(report.readings)
        cells = [f"{values[spec.name]:f}" if spec.name in values else "" for spec in readings]
        csv.writer(out, lineterminator="\n").writerow([report.sensor, report.timestamp, report.count, event_id, *cells])
        return out.getvalue()
    body = {"sensor_id": report.sensor, "timestamp": report.timestamp, "count": report.count}
    text = json.dumps({**body, "event_id": event_id} if event_id else body)
    if not report.readings:
        return text + "\n"
    members = ", ".join(f"{json.dumps(name)}: {value:f}" for name, value in report.readings)
    return f'{text[:-1]}, "readings": {{{members}}}}}\n'


def write_history(
    path: Path,
    *,
    sensors: int,
    days: int,
    per_day: int,
    order: Order = "sorted",
    fmt: str = "jsonl",
    poison: int = 0,
    seed: int = 7,
    first_day: date = date(2023, 1, 1),
    readings: Sequence[ReadingSpec] = (),
    event_ids: bool = True,
) -> HistoryTruth:
    """Write a history of ``sensors`` x ``days`` x ``per_day`` reports to ``path`` in ``order``, with
    ``poison`` rows the import must reject spread through it, each report carrying ``readings`` (a CSV
    file: a ``readings.<name>`` column each, empty where a report lacks it) and, unless ``event_ids``
    is false, its ``event_id``; the truth it adds up to. ``sorted`` streams (any size); ``time`` and
    ``random`` hold the reports in memory to order them."""
    rng = random.Random(seed)
    truth = HistoryTruth()
    reports = _reports(sensors, days, per_day, first_day, rng, readings)
    if order == "time":
        reports = iter(sorted(reports, key=lambda r: (r.day, r.second, r.sensor)))
    elif order == "random":
        listed = list(reports)
        rng.shuffle(listed)
        reports = iter(listed)
    total = sensors * days * per_day
    poison_at = set(rng.sample(range(total + poison), poison)) if poison else set()
    bad = POISON_CSV if fmt == "csv" else (*POISON_BODIES, '{"sensor_id": 3, "count": 1}')
    with path.open("w", encoding="utf-8", newline="") as out:
        if fmt == "csv":
            out.write(",".join((*COLUMNS, *(f"{READINGS_PREFIX}{spec.name}" for spec in readings))) + "\n")
        for position in range(total + poison):
            truth.rows += 1
            if position in poison_at:
                out.write(rng.choice(bad) + "\n")
                truth.poison += 1
                continue
            report = next(reports)
            out.write(_line(report, fmt, readings, event_ids))
            truth.add(report)
    return truth
