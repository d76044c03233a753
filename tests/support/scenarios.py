"""The ingest issue's scenario: many messages, each delivered one to three times, shuffled batches."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sensor_digest_tools.lambda_runtime.events import FakeContext, QueuedMessage, sqs_event
from sensor_digest_tools.local.traffic import reports

DAYS = ["2024-05-01", "2024-05-02", "2024-05-03"]


@dataclass
class Scenario:
    messages: list[QueuedMessage]
    deliveries: list[QueuedMessage]
    truth: Counter[tuple[int, str]]


def generate(n: int, sensors: int, days: list[str] = DAYS, seed: int = 20241122) -> Scenario:
    rng = random.Random(seed)
    picks = [(rng.randrange(sensors), rng.choice(days), rng.randint(1, 3)) for _ in range(n)]
    traffic = reports(picks, rng=rng, event_prefix="ev")
    messages, truth = [QueuedMessage(body=body) for body in traffic.bodies], traffic.truth
    deliveries = [m for m in messages for _ in range(rng.randint(1, 3))]
    rng.shuffle(deliveries)
    return Scenario(messages=messages, deliveries=deliveries, truth=truth)


def deliver(
    handler: Callable[[dict[str, Any], Any], dict[str, Any]],
    deliveries: list[QueuedMessage],
    seed: int = 7,
    max_batch: int = 100,
) -> int:
    """Feed shuffled batches of up to ``max_batch``; redeliver what the handler lists. Returns failures."""
    rng = random.Random(seed)
    failures = 0
    queue = list(deliveries)
    while queue:
        size = rng.randint(1, max_batch)
        batch, queue = queue[:size], queue[size:]
        response = handler(sqs_event(batch), FakeContext())
        failed_ids = {f["itemIdentifier"] for f in response["batchItemFailures"]}
        failures += len(failed_ids)
        queue += [m for m in batch if m.message_id in failed_ids]
    return failures
