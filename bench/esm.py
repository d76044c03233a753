"""Lambda's SQS event source on a backlog, as the benchmark needs it.

Every strategy is a Lambda handler; ``drain`` feeds it a queue that is already full, as the event
source mapping would: batches of ``batch_size`` records, at most ``concurrency`` invocations at
once (the mapping's ``MaximumConcurrency``), each with a context whose remaining time counts down
from the function's timeout. A message the batch response lists goes back to the queue at once
and is counted: on SQS it would wait the whole visibility timeout first. (The local runtime's
``sensor_digest_emulators.sqs_event_source`` keeps SQS itself, visibility and all; a benchmark
wants the handler's own speed, not the queue's.)
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sensor_digest_emulators.lambda_events import FakeContext

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


@dataclass
class Drained:
    invocations: int = 0
    listed: int = 0  # records a batch response listed: each would wait the visibility timeout on SQS
    seconds: float = 0.0
    invocation_seconds: list[float] = field(default_factory=list)

    @property
    def slowest_invocation(self) -> float:
        return max(self.invocation_seconds, default=0.0)


def drain(
    handler: Handler, records: list[dict[str, Any]], *, batch_size: int, concurrency: int, timeout_s: int
) -> Drained:
    queue = deque(records)
    state = threading.Condition()
    stats = Drained()
    in_flight = 0

    def invoker() -> None:
        nonlocal in_flight
        while True:
            with state:
                while not queue and in_flight:
                    state.wait()
                if not queue:
                    return
                batch = [queue.popleft() for _ in range(min(batch_size, len(queue)))]
                in_flight += 1
            started = time.perf_counter()
            try:
                response = handler({"Records": batch}, FakeContext(timeout_ms=timeout_s * 1000))
                failed = {f["itemIdentifier"] for f in response.get("batchItemFailures", [])}
            except Exception:  # Lambda retries a batch whose handler raised, whole
                failed = {r["messageId"] for r in batch}
            elapsed = time.perf_counter() - started
            with state:
                queue.extend(r for r in batch if r["messageId"] in failed)
                stats.invocations += 1
                stats.listed += sum(r["messageId"] in failed for r in batch)
                stats.invocation_seconds.append(elapsed)
                in_flight -= 1
                state.notify_all()

    started = time.perf_counter()
    threads = [threading.Thread(target=invoker, name=f"invocation-{i}") for i in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stats.seconds = time.perf_counter() - started
    return stats
