"""Synthetic sensor traffic with its ground truth: valid reports, poison, and the expected counts."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta

from sensor_digest_local.queries import by_sensor

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


def generate(
    *, messages: int, sensors: int, days: int, poison_rate: float, seed: int, first_day: date | None = None
) -> Traffic:
    """``messages`` reports (a share of them poison) over ``sensors`` sensors and ``days`` days."""
    rng = random.Random(seed)
    start = first_day or date(2024, 5, 1)
    day_names = [(start + timedelta(days=d)).isoformat() for d in range(days)]
    traffic = Traffic(bodies=[], poison=set())
    for i in range(messages):
        if rng.random() < poison_rate:
            traffic.poison.add(i)
            traffic.bodies.append(rng.choice(POISON_BODIES))
            continue
        sensor, day, count = rng.randrange(sensors), rng.choice(day_names), rng.randint(1, 5)
        second = rng.randrange(86_400)
        stamp = f"{day}T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}Z"
        body = {"sensor_id": sensor, "timestamp": stamp, "count": count, "event_id": f"demo-{seed}-{i}"}
        traffic.bodies.append(json.dumps(body))
        traffic.truth[(sensor, day)] += count
    return traffic
