"""Small helpers the tests share: messages, events, reading the tables back."""

from __future__ import annotations

import json
from typing import Any

from sensor_digest.store.reads import by_sensor, day_counts, scan_all, summaries
from sensor_digest_tools.lambda_runtime.events import FakeContext, QueuedMessage, sqs_event

__all__ = ["FakeContext", "QueuedMessage", "by_sensor", "day_counts", "message", "scan_all", "sqs_event", "summaries"]


def message(sensor_id: Any, timestamp: Any = "2024-05-01T12:00:00Z", **fields: Any) -> QueuedMessage:
    body = {"sensor_id": sensor_id, "timestamp": timestamp, **fields}
    return QueuedMessage(body=json.dumps(body))
