"""A synthetic history file with its truth: a fleet's past reports as JSON lines or CSV, in the order an
export gives them (by sensor then time, by time across the fleet, or none), some poison rows, and the
counts and hours per sensor-day they add up to. The history demo, the import's benchmark and its
tests write theirs with ``write_history``."""

from __future__ import annotations

import csv
import io
import json
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Literal

from sensor_digest_tools.local.traffic import POISON_BODIES

Order = Literal["sorted", "time", "random"]
"""``sorted``: by sensor, then time (an export ordered by sensor and time); ``time``: by time across
the fleet (an export in time order); ``random``: no order at all."""
COLUMNS = ("sensor_id", "timestamp", "count", "event_id")
POISON_CSV = ("seven,2024-01-01T00:00:00Z,1,p", "3,,1,p", "3,2024-01-01T00:00:00Z,0,p", "-1,2024-01-01,1,p", "3,x")


@dataclass
class HistoryTruth:
    """What a history file adds up to: data points per sensor-day and per hour of it, its rows."""

    counts: Counter[tuple[int, str]] = field(default_factory=Counter)
    hours: dict[tuple[int, str], Counter[str]] = field(default_factory=dict)
    rows: int = 0
    valid: int = 0
    poison: int = 0

    def add(self, sensor: int, day: str, hour: str, count: int) -> None:
        self.counts[(sensor, day)] += count
        self.hours.setdefault((sensor, day), Counter())[hour] += count
        self.valid += 1


@dataclass(frozen=True)
class Report:
    sensor: int
    day: str
    second: int
    count: int
    event_id: str

    @property
    def timestamp(self) -> str:
        s = self.second
        return f"{self.day}T{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}Z"


def _reports(sensors: int, days: int, per_day: int, first_day: date, rng: random.Random) -> Iterator[Report]:
    """By sensor, then time: ``per_day`` reports a sensor-day, spread over the day."""
    for sensor in range(1, sensors + 1):
        for d in range(days):
            day = (first_day + timedelta(days=d)).isoformat()
            seconds = sorted(rng.randrange(86_400) for _ in range(per_day))
            for i, second in enumerate(seconds):
                yield Report(sensor, day, second, rng.randint(1, 3), f"h{sensor}-{day}-{i}")


def _line(report: Report, fmt: str, event_ids: bool = True) -> str:
    event_id = report.event_id if event_ids else ""
    if fmt == "csv":
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerow([report.sensor, report.timestamp, report.count, event_id])
        return out.getvalue()
    body = {"sensor_id": report.sensor, "timestamp": report.timestamp, "count": report.count}
    return json.dumps({**body, "event_id": event_id} if event_id else body) + "\n"


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
    event_ids: bool = True,
) -> HistoryTruth:
    """Write a history of ``sensors`` x ``days`` x ``per_day`` reports to ``path`` in ``order``, with
    ``poison`` rows the import must reject spread through it (rows without ``event_id`` unless
    ``event_ids``); the truth it adds up to. ``sorted``
    streams (any size); ``time`` and ``random`` hold the reports in memory to order them."""
    rng = random.Random(seed)
    truth = HistoryTruth()
    reports = _reports(sensors, days, per_day, first_day, rng)
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
            out.write(",".join(COLUMNS) + "\n")
        for position in range(total + poison):
            truth.rows += 1
            if position in poison_at:
                out.write(rng.choice(bad) + "\n")
                truth.poison += 1
                continue
            report = next(reports)
            out.write(_line(report, fmt, event_ids))
            truth.add(report.sensor, report.day, report.timestamp[11:13], report.count)
    return truth
