"""Lambda's SQS event source on a backlog, as the benchmark needs it.

Every strategy is a Lambda handler; ``drain`` feeds it a queue that is already full, as the event
source mapping would: batches of ``batch_size`` records, at most ``concurrency`` invocations at
once (the mapping's ``MaximumConcurrency``), each with a context whose remaining time counts down
from the function's timeout. A message the batch response lists goes back to the queue at once
and is counted: on SQS it would wait the whole visibility timeout first. Each time it comes back
its ``ApproximateReceiveCount`` is one higher, as SQS counts it. (The local runtime's
``sensor_digest_tools.lambda_runtime.sqs_event_source`` keeps SQS itself, visibility and all; a benchmark
wants the handler's own speed, not the queue's.)
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from sensor_digest_tools.aws.sqs_broker import FIRST_SEQUENCE_NUMBER
from sensor_digest_tools.lambda_runtime.events import FIFO_QUEUE_ARN, FakeContext, QueuedMessage, sqs_record
from sensor_digest_tools.ops.producer import fifo_fields

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


def _drive(
    handler: Handler,
    *,
    take: Callable[[], list[dict[str, Any]]],
    settle: Callable[[list[dict[str, Any]], set[str]], None],
    concurrency: int,
    timeout_s: int,
) -> Drained:
    """Up to ``concurrency`` invocations at once until the queue model is empty and nothing is in
    flight. ``take`` hands out the next batch (empty: none ready) and ``settle`` gets it back with
    the ids the response listed; both run under one lock."""
    state = threading.Condition()
    stats = Drained()
    in_flight = 0

    def invoker() -> None:
        nonlocal in_flight
        while True:
            with state:
                while not (batch := take()) and in_flight:
                    state.wait()
                if not batch:
                    return
                in_flight += 1
            started = time.perf_counter()
            try:
                response = handler({"Records": batch}, FakeContext(timeout_ms=timeout_s * 1000))
                failed = {f["itemIdentifier"] for f in response.get("batchItemFailures", [])}
            except Exception:  # Lambda retries a batch whose handler raised, whole
                failed = {r["messageId"] for r in batch}
            elapsed = time.perf_counter() - started
            with state:
                settle(batch, failed)
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


def drain(
    handler: Handler, records: list[dict[str, Any]], *, batch_size: int, concurrency: int, timeout_s: int
) -> Drained:
    queue = deque(records)

    def take() -> list[dict[str, Any]]:
        return [queue.popleft() for _ in range(min(batch_size, len(queue)))]

    def settle(batch: list[dict[str, Any]], failed: set[str]) -> None:
        queue.extend(received_again(r) for r in batch if r["messageId"] in failed)

    return _drive(handler, take=take, settle=settle, concurrency=concurrency, timeout_s=timeout_s)


def fifo_records(
    messages: list[QueuedMessage], *, queue_arn: str = FIFO_QUEUE_ARN, first: int = FIRST_SEQUENCE_NUMBER
) -> list[dict[str, Any]]:
    """The workload's messages as a FIFO queue's records: each in its sensor's group, its event id
    as deduplication id, numbered in send order from ``first`` (a queue's numbers only grow: a
    second feed of one queue starts past the first's)."""
    out = []
    for number, message in enumerate(messages, start=first):
        fields = fifo_fields(message.body, message.message_id)
        fifo = replace(
            message,
            group_id=fields["MessageGroupId"],
            deduplication_id=fields["MessageDeduplicationId"],
            sequence_number=str(number),
        )
        out.append(sqs_record(fifo, queue_arn))
    return out


def drain_fifo(
    handler: Handler,
    records: list[dict[str, Any]],
    *,
    lost_deletes: set[str],
    batch_size: int,
    concurrency: int,
    timeout_s: int,
) -> Drained:
    """``drain`` for a FIFO queue: a batch takes as many messages of one group as it can, in order,
    then the next group's (the oldest first), skipping groups with a message in flight; a listed
    message goes back to the head of its group (Lambda lists a group's tail), and so does a message
    in ``lost_deletes`` once (its delete was lost: SQS delivers it again before its group goes on)."""
    groups: dict[str, deque[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault(_group(record), deque()).append(record)
    position = {r["messageId"]: i for i, r in enumerate(records)}  # send order: the oldest group first
    busy: set[str] = set()
    lost = set(lost_deletes)

    def take() -> list[dict[str, Any]]:
        batch: list[dict[str, Any]] = []
        ready = sorted((position[q[0]["messageId"]], g) for g, q in groups.items() if q and g not in busy)
        for _, group in ready:
            queue = groups[group]
            while queue and len(batch) < batch_size:
                batch.append(queue.popleft())
            busy.add(group)
            if len(batch) >= batch_size:
                break
        return batch

    def settle(batch: list[dict[str, Any]], failed: set[str]) -> None:
        back = [r for r in batch if r["messageId"] in failed or r["messageId"] in lost]
        lost.difference_update(r["messageId"] for r in back)
        for record in reversed(back):  # to the head of its group, in order
            groups[_group(record)].appendleft(received_again(record))
        busy.difference_update(_group(r) for r in batch)

    return _drive(handler, take=take, settle=settle, concurrency=concurrency, timeout_s=timeout_s)


def received_again(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` as SQS hands it out the next time: its receive count one higher."""
    attributes = record.get("attributes", {})
    count = int(attributes.get("ApproximateReceiveCount", "1")) + 1
    return {**record, "attributes": {**attributes, "ApproximateReceiveCount": str(count)}}


def _group(record: dict[str, Any]) -> str:
    return str(record["attributes"]["MessageGroupId"])
