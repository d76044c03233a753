"""Messages and events the tests share: report bodies, and Lambda's SQS event and context."""

from __future__ import annotations

import json
from typing import Any

from sensor_digest_tools.lambda_runtime.events import FakeContext, QueuedMessage, sqs_event

__all__ = ["FakeContext", "QueuedMessage", "body_of", "message", "sqs_event"]


def message(sensor_id: Any, timestamp: Any = "2024-05-01T12:00:00Z", **fields: Any) -> QueuedMessage:
    body = {"sensor_id": sensor_id, "timestamp": timestamp, **fields}
    return QueuedMessage(body=json.dumps(body))


def body_of(sensor_id: int, day: str, **extra: Any) -> str:
    return json.dumps({"sensor_id": sensor_id, "timestamp": f"{day}T12:00:00Z", **extra})
