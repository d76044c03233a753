"""The benchmark workloads (issue 6), each with 5% of deliveries duplicated, and their truth."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta
from itertools import accumulate

from sensor_digest_emulators.lambda_events import QueuedMessage
from sensor_digest_local.traffic import reports

DAY = date(2024, 5, 1)


@dataclass
class Workload:
    name: str
    description: str
    messages: list[QueuedMessage]
    deliveries: list[QueuedMessage]
    truth: Counter[tuple[int, str]]
    batch_size: int = 1000


def _build(name: str, description: str, picks: list[tuple[int, str]], seed: int) -> Workload:
    rng = random.Random(seed)
    traffic = reports(((sensor, day, rng.randint(1, 5)) for sensor, day in picks), rng=rng, event_prefix=name)
    messages, truth = [QueuedMessage(body=body) for body in traffic.bodies], traffic.truth
    slots = [(float(i), m) for i, m in enumerate(messages)]
    for i in rng.sample(range(len(messages)), k=len(messages) // 20):  # 5% delivered again, later
        slots.append((rng.uniform(i + 0.5, len(messages)), messages[i]))
    deliveries = [m for _, m in sorted(slots, key=lambda slot: slot[0])]
    return Workload(name, description, messages, deliveries, truth)


def realtime(n: int, seed: int = 1) -> Workload:
    rng = random.Random(seed)
    today, yesterday = DAY.isoformat(), (DAY - timedelta(days=1)).isoformat()
    picks = [(rng.randrange(200), yesterday if rng.random() < 0.02 else today) for _ in range(n)]
    return _build("W1", f"real time: {n:,} messages, 200 sensors, one day (2% late)", picks, seed)


def skewed(n: int, seed: int = 2) -> Workload:
    rng = random.Random(seed)
    weights = list(accumulate(1 / (k**1.2) for k in range(1, 1001)))
    today, yesterday = DAY.isoformat(), (DAY - timedelta(days=1)).isoformat()
    sensors = rng.choices(range(1000), cum_weights=weights, k=n)
    picks = [(s, yesterday if rng.random() < 0.02 else today) for s in sensors]
    return _build("W2", f"skewed: {n:,} messages, Zipf(1.2) over 1,000 sensors", picks, seed)


def backfill(n: int, seed: int = 3) -> Workload:
    rng = random.Random(seed)
    days = [(DAY - timedelta(days=d)).isoformat() for d in range(30)]
    picks = [(rng.randrange(200), rng.choice(days)) for _ in range(n)]
    return _build("W3", f"backfill: {n:,} messages, 200 sensors, 30 days", picks, seed)
