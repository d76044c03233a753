"""Lambda's SQS event source, emulated against a real SQS API (moto's server locally).

What it keeps of Lambda's poller: batches of up to ``batch_size`` gathered for at most
``batching_window`` seconds, messages invisible while a batch runs, the partial batch response
honoured (listed failures are not deleted, so SQS redelivers them after the visibility timeout
with a higher receive count, and moves them to the dead-letter queue past ``maxReceiveCount``),
a batch whose handler raised retried whole, and at-least-once delivery: with probability
``duplicate_rate`` a processed message's delete is lost, so SQS delivers it again.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from sensor_digest_tools.lambda_runtime.events import FakeContext, received_sqs_event
from sensor_digest_tools.lambda_runtime.invoke import Handler


@dataclass
class SqsSourceStats:
    """What the SQS event source did, as Lambda's poller would have."""

    batches: int = 0  # invocations of the handler
    deliveries: int = 0  # records handed over, redeliveries included
    redeliveries: int = 0  # of them, records received before (a listed failure, a lost delete)
    duplicates_injected: int = 0  # deletes the source "lost" on purpose (duplicate_rate)
    failures_listed: int = 0  # records a batch response listed for redelivery
    handler_errors: int = 0  # invocations that raised: the whole batch comes back
    done_at: dict[str, float] = field(default_factory=dict)  # messageId -> when a batch reported it done


@dataclass(eq=False, kw_only=True)
class SqsEventSource:
    sqs: Any
    queue_url: str
    handler: Handler
    batch_size: int = 100
    batching_window: float = 0.2
    duplicate_rate: float = 0.0
    seed: int = 0
    queue_arn: str = field(init=False)
    stats: SqsSourceStats = field(init=False, default_factory=SqsSourceStats)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        attributes = self.sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["QueueArn"])["Attributes"]
        self.queue_arn = attributes["QueueArn"]
        self._region = self.queue_arn.split(":")[3]

    def _gather(self) -> list[dict[str, Any]]:
        batch: list[dict[str, Any]] = []
        deadline: float | None = None
        while len(batch) < self.batch_size:
            got = self.sqs.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=min(10, self.batch_size - len(batch)),
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
                WaitTimeSeconds=0,
            ).get("Messages", [])
            now = time.monotonic()
            if got:
                batch.extend(got)
                deadline = deadline or now + self.batching_window
            elif not batch:
                return []
            if deadline is not None and now >= deadline:
                break
            if not got:
                time.sleep(min(0.02, max(0.0, (deadline or now) - now)))
        return batch

    def poll_once(self) -> int:
        """Gather one batch, invoke the handler, settle the batch. Returns the batch size."""
        batch = self._gather()
        if not batch:
            return 0
        self.stats.batches += 1
        self.stats.deliveries += len(batch)
        self.stats.redeliveries += sum(int(m["Attributes"].get("ApproximateReceiveCount", "1")) > 1 for m in batch)
        event = received_sqs_event(batch, self.queue_arn, self._region)
        try:
            response = self.handler(event, FakeContext())
        except Exception:  # Lambda retries the whole batch after the visibility timeout
            self.stats.handler_errors += 1
            return len(batch)
        failed = {f["itemIdentifier"] for f in response.get("batchItemFailures", [])}
        self.stats.failures_listed += len(failed)
        now = time.monotonic()
        to_delete = []
        for message in batch:
            if message["MessageId"] in failed:
                continue
            self.stats.done_at.setdefault(message["MessageId"], now)
            first_delivery = message["Attributes"].get("ApproximateReceiveCount") == "1"
            if first_delivery and self._rng.random() < self.duplicate_rate:
                self.stats.duplicates_injected += 1  # the delete is lost: SQS will deliver it again
                continue
            to_delete.append(message)
        for start in range(0, len(to_delete), 10):
            chunk = to_delete[start : start + 10]
            self.sqs.delete_message_batch(
                QueueUrl=self.queue_url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(chunk)],
            )
        return len(batch)

    def in_queue(self) -> int:
        """Messages visible or in flight (SQS's approximate counters; exact on moto)."""
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=self.queue_url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])
