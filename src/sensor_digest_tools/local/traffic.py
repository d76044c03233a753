"""Synthetic sensor traffic with its ground truth: valid reports, poison, and the expected counts."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta

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


@dataclass
class Traffic:
    bodies: list[str]
    poison: set[int]  # indexes into bodies
    truth: Counter[tuple[int, str]] = field(default_factory=Counter)

    @property
    def valid(self) -> int:
        return len(self.bodies) - len(self.poison)

    def summaries(self) -> dict[int, dict[str, int]]:
        return by_sensor(dict(self.truth))


def report_body(sensor_id: int, day: str, count: int, event_id: str, second: int) -> str:
    """A valid report of ``count`` data points at ``second`` (of the day, UTC) of ``day``."""
    stamp = f"{day}T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}Z"
    return json.dumps({"sensor_id": sensor_id, "timestamp": stamp, "count": count, "event_id": event_id})


def reports(picks: Iterable[tuple[int, str, int]], *, rng: random.Random, event_prefix: str) -> Traffic:
    """Valid reports for ``(sensor, day, count)`` picks, each at a random time of its day and with
    its own event id, and the truth they add up to: the one generator of the demo, the benchmark
    workloads and the test scenarios."""
    traffic = Traffic(bodies=[], poison=set())
    for i, (sensor, day, count) in enumerate(picks):
        traffic.bodies.append(report_body(sensor, day, count, f"{event_prefix}-{i}", rng.randrange(86_400)))
        traffic.truth[(sensor, day)] += count
    return traffic


def generate(
    *, messages: int, sensors: int, days: int, poison_rate: float, seed: int, first_day: date | None = None
) -> Traffic:
    """``messages`` reports (a share of them poison) over ``sensors`` sensors and ``days`` days."""
    rng = random.Random(seed)
    start = first_day or date(2024, 5, 1)
    day_names = [(start + timedelta(days=d)).isoformat() for d in range(days)]
    poison_at = {i for i in range(messages) if rng.random() < poison_rate}
    picks = [
        (rng.randrange(sensors), rng.choice(day_names), rng.randint(1, 5)) for _ in range(messages - len(poison_at))
    ]
    traffic = reports(picks, rng=rng, event_prefix=f"demo-{seed}")
    valid = iter(traffic.bodies)
    traffic.bodies = [rng.choice(POISON_BODIES) if i in poison_at else next(valid) for i in range(messages)]
    traffic.poison = poison_at
    return traffic
