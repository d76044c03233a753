"""What a producer adds to a report on a FIFO queue (ordered mode): its group and deduplication id.

Each sensor is one message group (``MessageGroupId`` = the sensor id, as a decimal string), so SQS
keeps a sensor's reports in order and Lambda hands them over one batch at a time; the report's
``event_id`` is its ``MessageDeduplicationId``, so a producer retry within SQS's five-minute
window is dropped by SQS itself. ``send`` and the demo send through here; the producer
example of docs/producers.md does the same by hand.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sensor_digest.dead_letter_format import fifo_id


def is_fifo(queue_url: str) -> bool:
    """A FIFO queue's name, and only its, ends in ``.fifo``."""
    return queue_url.rstrip("/").endswith(".fifo")


def fifo_fields(body: str, fallback_id: str) -> dict[str, str]:
    """``MessageGroupId`` and ``MessageDeduplicationId`` of one report body. A body with no usable
    sensor id or event id (it will be rejected, or the producer gave no id) gets ``"unknown"`` as
    group and ``fallback_id`` as deduplication id; an event id SQS would not take as one (spaces,
    non-ASCII) is hashed."""
    try:
        fields: Any = json.loads(body)
    except ValueError:
        fields = None
    fields = fields if isinstance(fields, dict) else {}
    sensor, event_id = fields.get("sensor_id"), fields.get("event_id")
    group = str(sensor) if type(sensor) is int and sensor >= 0 else "unknown"
    if not isinstance(event_id, str) or not event_id:
        dedup = fallback_id
    elif fifo_id(event_id):
        dedup = event_id
    else:  # an event id with spaces or non-ASCII characters: the same report still maps to one id
        dedup = hashlib.sha256(event_id.encode()).hexdigest()
    return {"MessageGroupId": group, "MessageDeduplicationId": dedup}


def batch_entry(entry_id: str, body: str, *, fifo: bool, fallback_id: str) -> dict[str, str]:
    """One ``SendMessageBatch`` entry of a report: on a FIFO queue with its ``fifo_fields``."""
    return {"Id": entry_id, "MessageBody": body, **(fifo_fields(body, fallback_id) if fifo else {})}
