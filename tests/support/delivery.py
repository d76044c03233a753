"""SQS + Lambda as a redelivery loop: what a listed failure or a crashed invocation comes back as."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sensor_digest_tools.lambda_runtime.events import FakeContext, QueuedMessage, sqs_event
from tests.support.faults import Crash


@dataclass
class Delivery:
    """What a redelivery loop saw."""

    invocations: int = 0  # of the handler
    crashes: int = 0  # invocations that raised: their batch comes back whole
    failures_listed: int = 0  # records the responses listed
    deliveries: int = 0  # records handed over, redeliveries included


def deliver_until_drained(
    handler: Callable[[dict[str, Any], Any], dict[str, Any]],
    deliveries: list[QueuedMessage],
    *,
    seed: int = 3,
    max_batch: int = 100,
    max_rounds: int = 10_000,
) -> Delivery:
    """SQS + Lambda as a loop: shuffled batches; listed failures and crashed batches come back."""
    rng = random.Random(seed)
    seen = Delivery()
    queue = list(deliveries)
    while queue and seen.invocations < max_rounds:
        size = rng.randint(1, max_batch)
        batch, queue = queue[:size], queue[size:]
        seen.invocations += 1
        seen.deliveries += len(batch)
        try:
            response = handler(sqs_event(batch), FakeContext())
        except Crash:
            seen.crashes += 1
            queue += batch  # the invocation died: SQS redelivers the whole batch
            rng.shuffle(queue)
            continue
        failed = {f["itemIdentifier"] for f in response["batchItemFailures"]}
        seen.failures_listed += len(failed)
        queue += [m for m in batch if m.message_id in failed]
    assert not queue, "the queue did not drain"
    return seen
