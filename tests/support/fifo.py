"""FIFO messages for the tests: each sensor one message group, sequence numbers as SQS gives them."""

from __future__ import annotations

import itertools
import json
from typing import Any

from sensor_digest_tools.lambda_runtime.events import QueuedMessage

# SQS's sequence numbers are large (20 digits and more) and only grow within a group; the tests
# start just below a power of ten so that they cross a change of digit count (the trap of
# comparing numbers as unpadded strings).
FIRST_SEQUENCE = 10**20 - 3


class Sequencer:
    """Gives the next sequence number, as one FIFO queue does (one counter serves every group)."""

    def __init__(self, start: int = FIRST_SEQUENCE) -> None:
        self._next = itertools.count(start)

    def message(
        self, sensor_id: int, day: str = "2024-05-01", count: int = 1, *, group: str | None = None, **fields: Any
    ) -> QueuedMessage:
        number = next(self._next)
        body = {"sensor_id": sensor_id, "timestamp": f"{day}T12:00:00Z", "count": count, **fields}
        return QueuedMessage(
            body=json.dumps(body),
            group_id=str(sensor_id) if group is None else group,
            deduplication_id=f"dedup-{number}",
            sequence_number=str(number),
        )
