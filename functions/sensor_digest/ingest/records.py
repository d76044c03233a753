"""What ingest reads of an SQS record (Lambda's event shape)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sensor_digest.dead_letter_format import BadOrigin, Origin


@dataclass(frozen=True)
class InboundMessage:
    """The parts of an SQS record that ingest reads."""

    message_id: str
    body: Any
    sent_timestamp: str | None = None
    # a FIFO queue's record only
    sequence_number: str | None = None
    group_id: str | None = None
    source: str = ""  # the queue's ARN (eventSourceARN)
    message_attributes: Mapping[str, Any] = field(default_factory=dict)
    receive_count: int = 1  # ApproximateReceiveCount: how often SQS has handed it out, this time included

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> InboundMessage:
        attributes = record.get("attributes")
        attributes = attributes if isinstance(attributes, dict) else {}
        message_attributes = record.get("messageAttributes")
        return cls(
            message_id=str(record.get("messageId", "")),
            body=record.get("body"),
            sent_timestamp=_text(attributes.get("SentTimestamp")),
            sequence_number=_text(attributes.get("SequenceNumber")),
            group_id=_text(attributes.get("MessageGroupId")),
            source=str(record.get("eventSourceARN") or ""),
            message_attributes=message_attributes if isinstance(message_attributes, dict) else {},
            receive_count=_count(attributes.get("ApproximateReceiveCount")),
        )

    def origin(self) -> Origin:
        """Its identity and send time (``Origin.of``); ``BadOrigin`` if its origin attributes are not."""
        return Origin.of(self.message_id, self.sent_timestamp, self.message_attributes)

    def kept_origin(self) -> Origin:
        """The origin its dead letter carries: the stamped one, or its own where that is not valid."""
        try:
            return self.origin()
        except BadOrigin:
            return Origin(self.message_id, self.sent_timestamp)

    @property
    def group(self) -> str:
        """The ordering group of a FIFO record (a record without one is a group of its own)."""
        return self.group_id if isinstance(self.group_id, str) else f"<no group: {self.message_id}>"


def _text(value: Any) -> str | None:
    """An attribute as SQS gives it (a string); anything else, which no SQS record carries, is absent."""
    return value if isinstance(value, str) else None


def _count(value: Any) -> int:
    """A receive count as SQS gives it (decimal text); 1 for anything else."""
    text = _text(value)
    return int(text) if text is not None and text.isascii() and text.isdigit() and len(text) < 10 else 1
