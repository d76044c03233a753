"""Synthetic sensor traffic with its ground truth: valid reports, poison, the expected counts, and
with readings (``ReadingSpec``) each reading's expected statistics per sensor-day, in decimal."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal, localcontext

from sensor_digest.store.reads import by_sensor

POISON_BODIES = [
    "not json at all",
    '{"sensor_id": "seven"}',
    '{"sensor_id": 3, "count": 0}',
    '{"sensor_id": true}',
    '{"sensor_id": 3, "timestamp": "yesterday"}',
    '{"sensor_id": 3, "count": 2.5}',
    '{"sensor_id": -1}',
    '["sensor_id", 3]',
    '{"sensor_id": 3, "event_id": ""}',
    '{"count": 4}',
]


@dataclass(frozen=True)
class ReadingSpec:
    """A reading the traffic carries: its name, its least and greatest value in units of its last
    decimal, its decimals, and the share of reports that carry it."""

    name: str
    low: int
    high: int
    decimals: int
    share: float = 1.0

    def value(self, rng: random.Random) -> Decimal:
        return Decimal(rng.randint(self.low, self.high)).scaleb(-self.decimals)


DEMO_READINGS = (ReadingSpec("temperature", -150, 350, 1), ReadingSpec("humidity", 0, 1000, 1, share=0.5))
"""The demo's readings: a thermometer's -15.0 to 35.0 in every report, a hygrometer's 0.0 to 100.0 in
half of them (a name a report may lack)."""


@dataclass
class ReadingTruth:
    """One reading's values of one sensor-day, as the read API must answer them: count, sum,
    minimum and maximum exactly, mean and population standard deviation to 50 digits."""

    count: int = 0
    total: Decimal = Decimal(0)
    squares: Decimal = Decimal(0)
    low: Decimal | None = None
    high: Decimal | None = None

    def add(self, value: Decimal) -> None:
        self.count += 1
        self.total += value
        self.squares += value * value
        self.low = value if self.low is None else min(self.low, value)
        self.high = value if self.high is None else max(self.high, value)

    @property
    def mean(self) -> Decimal:
        with localcontext() as exact:
            exact.prec = 50
            return self.total / self.count

    @property
    def stddev(self) -> Decimal:
        with localcontext() as exact:
            exact.prec = 50
            return max(Decimal(0), self.squares / self.count - self.mean * self.mean).sqrt()


@dataclass
class Traffic:
    bodies: list[str]
    poison: set[int]  # indexes into bodies
    truth: Counter[tuple[int, str]] = field(default_factory=Counter)
    readings: dict[tuple[int, str, str], ReadingTruth] = field(default_factory=dict)  # (sensor, day, name)

    @property
    def valid(self) -> int:
        return len(self.bodies) - len(self.poison)

    def summaries(self) -> dict[int, dict[str, int]]:
        return by_sensor(dict(self.truth))


def report_body(
    sensor_id: int, day: str, count: int, event_id: str, second: int, readings: Sequence[tuple[str, Decimal]] = ()
) -> str:
    """A valid report of ``count`` data points at ``second`` (of the day, UTC) of ``day``, its readings'
    values written as the exact decimals they are (never through a float)."""
    stamp = f"{day}T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}Z"
    text = json.dumps({"sensor_id": sensor_id, "timestamp": stamp, "count": count, "event_id": event_id})
    if not readings:
        return text
    members = ", ".join(f"{json.dumps(name)}: {value:f}" for name, value in readings)
    return f'{text[:-1]}, "readings": {{{members}}}}}'


def reports(
    picks: Iterable[tuple[int, str, int]],
    *,
    rng: random.Random,
    event_prefix: str,
    readings: Sequence[ReadingSpec] = (),
) -> Traffic:
    """Valid reports for ``(sensor, day, count)`` picks, each at a random time of its day and with
    its own event id, each carrying ``readings`` (each in its share of reports, of random values), and
    the truth they add up to: the one generator of the demo, the benchmark workloads and the test
    scenarios."""
    traffic = Traffic(bodies=[], poison=set())
    for i, (sensor, day, count) in enumerate(picks):
        second = rng.randrange(86_400)
        values = [(spec.name, spec.value(rng)) for spec in readings if rng.random() < spec.share]
        traffic.bodies.append(report_body(sensor, day, count, f"{event_prefix}-{i}", second, values))
        traffic.truth[(sensor, day)] += count
        for name, value in values:
            traffic.readings.setdefault((sensor, day, name), ReadingTruth()).add(value)
    return traffic


def generate(
    *,
    messages: int,
    sensors: int,
    days: int,
    poison_rate: float,
    seed: int,
    first_day: date | None = None,
    readings: Sequence[ReadingSpec] = (),
) -> Traffic:
    """``messages`` reports (a share of them poison) over ``sensors`` sensors and ``days`` days, each
    valid one carrying ``readings``."""
    rng = random.Random(seed)
    start = first_day or date(2024, 5, 1)
    day_names = [(start + timedelta(days=d)).isoformat() for d in range(days)]
    poison_at = {i for i in range(messages) if rng.random() < poison_rate}
    picks = [
        (rng.randrange(sensors), rng.choice(day_names), rng.randint(1, 5)) for _ in range(messages - len(poison_at))
    ]
    traffic = reports(picks, rng=rng, event_prefix=f"demo-{seed}", readings=readings)
    valid = iter(traffic.bodies)
    traffic.bodies = [rng.choice(POISON_BODIES) if i in poison_at else next(valid) for i in range(messages)]
    traffic.poison = poison_at
    return traffic
