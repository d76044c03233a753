"""Lambda's DynamoDB Streams event source, emulated on the local table's real stream.

Records are read through the ``dynamodbstreams`` API, filtered with the same pattern the stack
deploys (``sensor_digest.stream_filter.DAY_ITEM_FILTER``), handed over in batches of up to
``batch_size``; when the handler reports a failure, the emulator checkpoints at that record
and retries from it (records before it are done), up to ``max_retries`` times, after which the
batch goes to the on-failure destination (a list here), as Lambda does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from sensor_digest.stream_filter import DAY_ITEM_FILTER, matches_filter
from sensor_digest_tools.lambda_runtime.events import FakeContext, stream_event
from sensor_digest_tools.lambda_runtime.invoke import Handler


@dataclass
class StreamSourceStats:
    """What the stream event source did, as Lambda's poller would have."""

    records_read: int = 0  # from the stream, every shard
    records_filtered_out: int = 0  # by the stack's filter, never handed over
    batches: int = 0  # invocations of the handler
    retries: int = 0  # batches handed over again from a checkpoint or whole
    handler_errors: int = 0  # invocations that raised
    sent_to_on_failure: int = 0  # records given up after the retries (the on-failure queue)
    cycles: list[tuple[float, float]] = field(default_factory=list)  # (poll started, all handled)


@dataclass(eq=False, kw_only=True)
class StreamEventSource:
    reader: Any
    handler: Handler
    batch_size: int = 100
    max_retries: int = 10
    retry_delay: float = 0.05
    pattern: dict[str, Any] = field(default_factory=lambda: DAY_ITEM_FILTER)
    on_failure: list[dict[str, Any]] = field(init=False, default_factory=list)
    stats: StreamSourceStats = field(init=False, default_factory=StreamSourceStats)
    _pending: list[dict[str, Any]] = field(init=False, default_factory=list, repr=False)

    def poll_once(self) -> int:
        """Read what is new, hand it over batch by batch. Returns the records handled."""
        started = time.monotonic()
        records = self.reader.poll()
        self.stats.records_read += len(records)
        selected = [r for r in records if matches_filter(r, self.pattern)]
        self.stats.records_filtered_out += len(records) - len(selected)
        self._pending.extend(selected)
        handled = 0
        attempts = 0
        while self._pending:
            batch = self._pending[: self.batch_size]
            done = self._invoke(batch)
            if done == len(batch):
                self._pending = self._pending[done:]
                handled += done
                attempts = 0
                continue
            self._pending = self._pending[done:]  # checkpoint: records before the failure are done
            handled += done
            attempts += 1
            self.stats.retries += 1
            if attempts > self.max_retries:
                failed = self._pending[: self.batch_size]
                self.on_failure.append({"records": len(failed), "first": failed[0]["dynamodb"]["SequenceNumber"]})
                self.stats.sent_to_on_failure += len(failed)
                self._pending = self._pending[len(failed) :]
                attempts = 0
                continue
            time.sleep(self.retry_delay * attempts)
        self.stats.cycles.append((started, time.monotonic()))
        return handled

    def _invoke(self, batch: list[dict[str, Any]]) -> int:
        """How many leading records of the batch are done."""
        self.stats.batches += 1
        try:
            response = self.handler(stream_event(batch, self.reader.stream_arn), FakeContext())
        except Exception:
            self.stats.handler_errors += 1
            return 0
        failures = response.get("batchItemFailures", [])
        if not failures:
            return len(batch)
        sequence = failures[0].get("itemIdentifier")
        for index, record in enumerate(batch):
            if record["dynamodb"]["SequenceNumber"] == sequence:
                return index
        return 0  # an identifier that is not in the batch: Lambda retries the whole batch

    @property
    def pending(self) -> int:
        return len(self._pending)
