"""The benchmark workloads, each with 5% of deliveries duplicated, and their truth.

W1-W3 are issue 6's; W4 (a hot sensor) is issue 14's; ``peer`` is the side-by-side comparison
with Powertools' idempotency (4,000 messages, 200 sensors, 10% duplicated). ``shape`` builds the
traffic shapes of the batch-size sweep, and ``seed_history`` gives every sensor of a workload a
year of day and summary items before it runs.

A duplicated delivery is what SQS's at-least-once delivery makes of a message whose delete was
lost or whose visibility timeout ran out: the same ``messageId`` again, later, with
``ApproximateReceiveCount`` 2.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from datetime import date, timedelta
from itertools import accumulate
from typing import Any

from sensor_digest.store import schema
from sensor_digest_tools.lambda_runtime.events import QueuedMessage
from sensor_digest_tools.local.traffic import reports

DAY = date(2024, 5, 31)  # the last day of a month: with a year of history, its month item is full
QUICK_MESSAGES = 500
"""Messages a workload of ``--quick`` (a smoke run) sends: its figures only show that each run works."""

TODAY, YESTERDAY = DAY.isoformat(), (DAY - timedelta(days=1)).isoformat()


@dataclass
class Workload:
    name: str
    description: str
    messages: list[QueuedMessage]
    deliveries: list[QueuedMessage]
    truth: Counter[tuple[int, str]]
    duplicate_rate: float = 0.05

    @property
    def repeated_ids(self) -> set[str]:
        """The messages delivered twice (a FIFO run repeats them as lost deletes)."""
        seen: set[str] = set()
        repeated: set[str] = set()
        for message in self.deliveries:
            (repeated if message.message_id in seen else seen).add(message.message_id)
        return repeated

    @property
    def sensors(self) -> set[int]:
        return {sensor for sensor, _ in self.truth}


def _build(
    name: str, description: str, picks: list[tuple[int, str]], seed: int, duplicate_rate: float = 0.05
) -> Workload:
    rng = random.Random(seed)
    traffic = reports(((sensor, day, rng.randint(1, 5)) for sensor, day in picks), rng=rng, event_prefix=name)
    messages, truth = [QueuedMessage(body=body) for body in traffic.bodies], traffic.truth
    slots = [(float(i), m) for i, m in enumerate(messages)]
    for i in rng.sample(range(len(messages)), k=round(len(messages) * duplicate_rate)):  # delivered again, later
        slots.append((rng.uniform(i + 0.5, len(messages)), replace(messages[i], receive_count=2)))
    deliveries = [m for _, m in sorted(slots, key=lambda slot: slot[0])]
    return Workload(name, description, messages, deliveries, truth, duplicate_rate)


def _today_mostly(rng: random.Random, sensor: int) -> tuple[int, str]:
    return sensor, YESTERDAY if rng.random() < 0.02 else TODAY


def realtime(n: int, seed: int = 1) -> Workload:
    rng = random.Random(seed)
    picks = [_today_mostly(rng, rng.randrange(200)) for _ in range(n)]
    return _build("W1", f"real time: {n:,} messages, 200 sensors, one day (2% late)", picks, seed)


def skewed(n: int, seed: int = 2) -> Workload:
    rng = random.Random(seed)
    weights = list(accumulate(1 / (k**1.2) for k in range(1, 1001)))
    picks = [_today_mostly(rng, s) for s in rng.choices(range(1000), cum_weights=weights, k=n)]
    return _build("W2", f"skewed: {n:,} messages, Zipf(1.2) over 1,000 sensors", picks, seed)


def backfill(n: int, seed: int = 3) -> Workload:
    rng = random.Random(seed)
    days = [(DAY - timedelta(days=d)).isoformat() for d in range(30)]
    picks = [(rng.randrange(200), rng.choice(days)) for _ in range(n)]
    return _build("W3", f"backfill: {n:,} messages, 200 sensors, 30 days", picks, seed)


def hot_sensor(n: int, seed: int = 4) -> Workload:
    """Half of all traffic on one sensor-day, spread through the queue, so every concurrent
    invocation writes to that one day item; the other half as W1."""
    rng = random.Random(seed)
    picks = [(0, TODAY) if rng.random() < 0.5 else _today_mostly(rng, 1 + rng.randrange(200)) for _ in range(n)]
    return _build("W4", f"hot sensor: {n:,} messages, half on one sensor-day, the rest as W1", picks, seed)


def peer(n: int = 4_000, seed: int = 7) -> Workload:
    """The comparison with Powertools' idempotency: ``n`` messages over 200 sensors, one day, 10% of
    them delivered twice."""
    rng = random.Random(seed)
    picks = [(rng.randrange(200), TODAY) for _ in range(n)]
    return _build("P", f"peer: {n:,} messages, 200 sensors, one day", picks, seed, duplicate_rate=0.10)


def fleet(n: int = 4_000, seed: int = 8, sensors: int = 50_000) -> Workload:
    """A large fleet: ``n`` messages over ``sensors`` sensors that each report every few minutes, one
    day, 10% of them delivered twice: a batch holds about one report per sensor-day (the sweep's
    "many sensors, rarely" shape, with the peer comparison's redeliveries)."""
    rng = random.Random(seed)
    picks = [(rng.randrange(sensors), TODAY) for _ in range(n)]
    return _build("F", f"large fleet: {n:,} messages, {sensors:,} sensors, one day", picks, seed, duplicate_rate=0.10)


WORKLOADS = {"W1": realtime, "W2": skewed, "W3": backfill, "W4": hot_sensor, "F": fleet}

READINGS = (
    ("temperature", 150, 300, 1),
    ("humidity", 300, 900, 1),
    ("pressure", 9800, 10300, 1),
    ("voltage", 330, 420, 2),
)
"""What the readings variants measure: name, least and greatest value in units of the last decimal,
and its decimals (a thermometer's 21.4, a hygrometer's 45.2, a barometer's 1013.2, a cell's 3.71)."""


def with_readings(workload: Workload, names: int, seed: int = 9) -> Workload:
    """``workload`` with the first ``names`` of ``READINGS`` in every report (``W1+r1`` and the like):
    the same reports, days and hours, so its figures compare with the workload's own."""
    rng = random.Random(seed)

    def read(body: str) -> str:
        report = json.loads(body)
        report["readings"] = {
            name: round(rng.randint(low, high) / 10**decimals, decimals)
            for name, low, high, decimals in READINGS[:names]
        }
        return json.dumps(report)

    bodies = {m.message_id: read(m.body) for m in workload.messages}
    messages = [replace(m, body=bodies[m.message_id]) for m in workload.messages]
    deliveries = [replace(m, body=bodies[m.message_id]) for m in workload.deliveries]
    return replace(
        workload,
        name=f"{workload.name}+r{names}",
        description=f"{workload.description}, {names} reading(s) a report",
        messages=messages,
        deliveries=deliveries,
    )


def shape(sensors: int, n: int, seed: int = 5) -> Workload:
    """The sweep's traffic: ``n`` messages spread evenly over ``sensors`` sensors, one day (2% late)."""
    rng = random.Random(seed)
    picks = [_today_mostly(rng, rng.randrange(sensors)) for _ in range(n)]
    return _build(f"S{sensors}", f"{sensors:,} sensors", picks, seed)


def seed_history(
    client: Any, table: str, sensors: set[int], days: int = 365, seed: int = 6
) -> Counter[tuple[int, str]]:
    """A year of history before ``DAY`` for each sensor: its day items and its month summary
    items, written directly (not metered as the workload's). Returns the day counts it wrote,
    which the workload's own counts come on top of."""
    rng = random.Random(seed)
    counts: Counter[tuple[int, str]] = Counter()
    for sensor in sorted(sensors):
        for back in range(1, days + 1):
            counts[(sensor, (DAY - timedelta(days=back)).isoformat())] = rng.randint(50, 5_000_000)
    _seed(client, table, counts)
    return counts


def warm_up(days: set[tuple[int, str]], count: int = 1000) -> tuple[list[QueuedMessage], Counter[tuple[int, str]]]:
    """Reports that put each of ``days`` under way before a run: one per sensor-day (``count`` data
    points at 00:00:01, its own event id), for the run's own strategy to count first, so that each
    day item is what that strategy leaves on a day under way (the compact ledger's with its first
    identity, the per-message ledger's with its marker). Returns them and the counts they add.

    The sweep measures the steady cost of a batch size; a day's first writes (and the race of two
    invocations inserting the same new day item) are W1's to show."""
    counts: Counter[tuple[int, str]] = Counter({key: count for key in days})
    bodies = [
        json.dumps({"sensor_id": s, "timestamp": f"{d}T00:00:01Z", "count": count, "event_id": f"warm-{s}-{d}"})
        for s, d in sorted(days)
    ]
    return [QueuedMessage(body=body) for body in bodies], counts


def seed_summaries(client: Any, table: str, counts: Counter[tuple[int, str]]) -> None:
    """The month summary items that hold these day counts, written directly (the summary path of a
    day under way has them)."""
    months: dict[tuple[int, str], dict[str, int]] = defaultdict(dict)
    for (sensor, day), n in counts.items():
        months[(sensor, schema.month_of(day))][day] = n
    _write(client, table, [schema.summary_item(s, m, daily) for (s, m), daily in sorted(months.items())])


def _seed(client: Any, table: str, counts: Counter[tuple[int, str]]) -> None:
    """Day items of these counts (as the version before the compact ledger wrote them) and the
    month summary items that hold them, written directly."""
    _write(client, table, [schema.day_item(sensor, day, n) for (sensor, day), n in sorted(counts.items())])
    seed_summaries(client, table, counts)


def _write(client: Any, table: str, items: list[dict[str, Any]]) -> None:
    for first in range(0, len(items), 25):
        request = {table: [{"PutRequest": {"Item": item}} for item in items[first : first + 25]]}
        while request:
            request = client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
