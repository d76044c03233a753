"""Small helpers the tests share: messages, events, reading the tables back."""

from __future__ import annotations

import json
from typing import Any

from sensor_digest_local.events import FakeContext, QueuedMessage, sqs_event

__all__ = ["FakeContext", "QueuedMessage", "day_counts", "message", "scan_all", "sqs_event"]


def message(sensor_id: Any, timestamp: Any = "2024-05-01T12:00:00Z", **fields: Any) -> QueuedMessage:
    body = {"sensor_id": sensor_id, "timestamp": timestamp, **fields}
    return QueuedMessage(body=json.dumps(body))


def scan_all(client: Any, table: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for page in client.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        items.extend(page["Items"])
    return items


def day_counts(client: Any, table: str) -> dict[tuple[int, str], int]:
    """Every day item as {(sensor, day): DataCount}."""
    out = {}
    for item in scan_all(client, table):
        if "DataCount" in item:
            out[(int(item["SensorId"]["N"]), item["Date"]["S"])] = int(item["DataCount"]["N"])
    return out
