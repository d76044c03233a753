"""Where a rejected message goes: the dead-letter queue, with its reason and its origin.

``DeadLetterSink`` keeps rejected messages: the original body, with the reason in the ``error``
attribute and the message's origin in ``sensor-digest.source_message_id`` and
``sensor-digest.source_sent_timestamp`` (``dead_letter_format.py``). They go in ``SendMessageBatch``
requests (ten at most, 1 MiB at most), one after another while the invocation has time
(``deadline``, ``clock``): a flood of poison costs a tenth of the requests, and whatever is left when
time runs out is a batch item failure, so SQS brings it back later.

``FifoDeadLetterSink``: a FIFO dead-letter queue also needs a message group and a deduplication
id: the rejected message's own group, and its SQS message id, so that the same message rejected
again on a redelivery within SQS's five-minute window is kept once.

The sinks are the functions' one SQS boundary: a ``ClientError`` or transport error of
``SendMessageBatch`` is caught here and logged, and that batch's messages are not kept (batch item
failures, which SQS delivers again), never raised: a dead letter that cannot be kept must not fail
the batch's other messages, counted or not.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from sensor_digest.dead_letter_format import (
    EMPTY_BODY,
    SQS_MAX_MESSAGE_BYTES,
    dead_letter_attributes,
    fifo_id,
    send_batches,
    sqs_text,
)
from sensor_digest.ingest.records import InboundMessage
from sensor_digest.logs import LOG

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient


FIFO_GROUP_OF_STRANGERS = "no-message-group"


@dataclass(frozen=True)
class Rejection:
    """A message that breaks the contract, and why: it is kept in the dead-letter queue."""

    message: InboundMessage
    reason: str


class DeadLetters(Protocol):
    def send(self, rejections: Sequence[Rejection], deadline: float | None = None) -> set[str]: ...


class DeadLetterSink:
    """A standard dead-letter queue's sink (see the module)."""

    def __init__(self, *, queue_url: str, client: SQSClient, clock: Callable[[], float] = time.monotonic) -> None:
        self._queue_url = queue_url
        self._client = client
        self._clock = clock

    def send(self, rejections: Sequence[Rejection], deadline: float | None = None) -> set[str]:
        """The message ids now kept; the others could not be (SQS refused, or no time was left)."""
        entries, by_entry = [], {}
        for i, rejection in enumerate(rejections):
            try:
                entries.append(self.entry(str(i), rejection))
            except Exception:  # a record no SQS queue delivers (a hand-made event): a batch item failure, never raised
                LOG.exception("dead letter could not be built", message_id=rejection.message.message_id)
                continue
            by_entry[str(i)] = rejection.message.message_id
        kept: set[str] = set()
        for batch in send_batches(entries):
            if deadline is not None and self._clock() >= deadline:
                LOG.warning("no time left to keep rejected messages; they will be redelivered", left=len(batch))
                break
            try:
                response = self._client.send_message_batch(QueueUrl=self._queue_url, Entries=batch)  # type: ignore[arg-type]
            except (ClientError, BotoCoreError):
                LOG.exception("dead-letter batch failed", message_ids=[by_entry[e["Id"]] for e in batch])
                continue
            kept.update(by_entry[ok["Id"]] for ok in response.get("Successful", []))
            for refused in response.get("Failed", []):
                LOG.error("dead-letter send refused", message_id=by_entry[refused["Id"]], code=refused.get("Code"))
        return kept

    def entry(self, entry_id: str, rejection: Rejection) -> dict[str, Any]:
        """The ``SendMessageBatch`` entry of one rejected message."""
        message = rejection.message
        return {
            "Id": entry_id,
            "MessageBody": sqs_text(message.body, SQS_MAX_MESSAGE_BYTES)
            if isinstance(message.body, str) and message.body
            else EMPTY_BODY,
            "MessageAttributes": dead_letter_attributes(rejection.reason, message.kept_origin()),
        }


class FifoDeadLetterSink(DeadLetterSink):
    """A FIFO dead-letter queue's sink: each entry in its message's group, deduplicated by its id."""

    def entry(self, entry_id: str, rejection: Rejection) -> dict[str, Any]:
        message = rejection.message
        return {
            **super().entry(entry_id, rejection),
            "MessageGroupId": fifo_id(message.group_id) or FIFO_GROUP_OF_STRANGERS,
            "MessageDeduplicationId": fifo_id(message.message_id)
            or hashlib.sha256(message.message_id.encode()).hexdigest(),
        }
