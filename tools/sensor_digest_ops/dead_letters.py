"""The dead-letter queue, read as people need it: list (messages stay), drain (removed), redrive.

Each message is read back as a ``DeadLetter``: its body and the reason ingest wrote in the
``error`` attribute (none for a message that SQS moved there after ``maxReceiveCount`` receives).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sensor_digest.dead_letters import REASON_ATTRIBUTE, SOURCE_ID_ATTRIBUTE
from sensor_digest_ops.producer import fifo_fields, is_fifo


@dataclass(frozen=True)
class DeadLetter:
    message_id: str
    body: str
    error: str | None
    source_message_id: str
    receipt_handle: str

    @classmethod
    def from_message(cls, message: dict[str, Any]) -> DeadLetter:
        attributes = message.get("MessageAttributes") or {}
        return cls(
            message_id=message["MessageId"],
            body=message["Body"],
            error=attributes.get(REASON_ATTRIBUTE, {}).get("StringValue"),
            source_message_id=attributes.get(SOURCE_ID_ATTRIBUTE, {}).get("StringValue") or message["MessageId"],
            receipt_handle=message["ReceiptHandle"],
        )


def _receive(sqs: Any, url: str, limit: int) -> Iterator[tuple[DeadLetter, bool]]:
    """Each message once (up to ``limit``), with whether it was seen before in this pass."""
    seen: set[str] = set()
    while len(seen) < limit:
        got = sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=min(10, limit - len(seen)),
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
            VisibilityTimeout=30,
            WaitTimeSeconds=0,
        ).get("Messages", [])
        if not got:
            return
        fresh = False
        for message in got:
            letter = DeadLetter.from_message(message)
            repeat = letter.message_id in seen
            fresh = fresh or not repeat
            seen.add(letter.message_id)
            yield letter, repeat
        if not fresh:
            return


def list_dead_letters(sqs: Any, url: str, *, limit: int = 10_000) -> list[DeadLetter]:
    """The queue's messages; they stay in it (made visible again once all are read: a FIFO queue
    would hand the same group's first messages back at once otherwise). On a FIFO queue a receive
    returns no message of a group while an earlier one is in flight, so past the first ten of a
    group (SQS's most per receive) a listing cannot see them; ``drain`` and ``redrive`` can."""
    out: list[DeadLetter] = []
    try:
        for letter, repeat in _receive(sqs, url, limit):
            if not repeat:
                out.append(letter)
    finally:
        for letter in out:
            sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=letter.receipt_handle, VisibilityTimeout=0)
    return out


def drain_dead_letters(sqs: Any, url: str, *, limit: int = 10_000) -> list[DeadLetter]:
    """The queue's messages, deleted from it as they are read."""
    out: list[DeadLetter] = []
    for letter, repeat in _receive(sqs, url, limit):
        sqs.delete_message(QueueUrl=url, ReceiptHandle=letter.receipt_handle)
        if not repeat:
            out.append(letter)
    return out


def redrive(sqs: Any, source: str, destination: str, *, limit: int = 10_000) -> int:
    """Move messages back to ``destination``: each is deleted from ``source`` only once re-sent."""
    moved = 0
    while moved < limit:
        got = sqs.receive_message(
            QueueUrl=source,
            MaxNumberOfMessages=min(10, limit - moved),
            VisibilityTimeout=60,
            WaitTimeSeconds=0,
            AttributeNames=["MessageGroupId"],
        ).get("Messages", [])
        if not got:
            return moved
        for message in got:
            ordering = {}
            if is_fifo(destination):  # back in its group; a new deduplication id: it was never counted
                group = message.get("Attributes", {}).get("MessageGroupId")
                ordering = {
                    "MessageGroupId": group or fifo_fields(message["Body"], message["MessageId"])["MessageGroupId"],
                    "MessageDeduplicationId": message["MessageId"],
                }
            sqs.send_message(QueueUrl=destination, MessageBody=message["Body"], **ordering)
            sqs.delete_message(QueueUrl=source, ReceiptHandle=message["ReceiptHandle"])
            moved += 1
    return moved
