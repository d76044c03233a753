"""Reliability fixtures: the real handlers on DynamoDB Local with the fault layer inside their client."""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.lambda_runtime.events import FakeContext, QueuedMessage, sqs_event
from tests.faults import Crash, FaultySession
from tests.integration.conftest import (  # noqa: F401 - fixtures
    DeadLetters,
    dead_letters,
    ingest_handler,
    ingest_settings,
)

FAULT_KINDS = ("throttle", "timeout_after", "conflict", "crash")


@dataclass
class FaultPlan:
    """Faults a share of write calls at random, with the mix of ``kinds``; switchable at run time."""

    rate: float = 0.0
    kinds: tuple[str, ...] = FAULT_KINDS
    seed: int = 1
    enabled: bool = True
    injected: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def __call__(self, operation: str, kwargs: dict[str, Any]) -> str | None:
        with self._lock:
            if not self.enabled or self._rng.random() >= self.rate:
                return None
            kind = self._rng.choice(self.kinds)
            self.injected[kind] += 1
            return kind


@pytest.fixture
def faults() -> FaultPlan:
    """The fault plan of the ingest service's DynamoDB client (rate 0 until a test sets it)."""
    return FaultPlan()


@pytest.fixture
def ingest_session(session: LocalSession, faults: FaultPlan) -> FaultySession:
    """The ingest service's DynamoDB client, wrapped in the fault layer."""
    return FaultySession(inner=session, rule=faults)


@dataclass
class Delivery:
    """What a redelivery loop saw."""

    invocations: int = 0
    crashes: int = 0
    failures_listed: int = 0
    deliveries: int = 0


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


@pytest.fixture
def dlq(dead_letters: DeadLetters) -> Iterator[DeadLetters]:  # noqa: F811
    yield dead_letters
