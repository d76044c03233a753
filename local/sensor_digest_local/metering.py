"""Counts the DynamoDB requests the handlers make, by path, from botocore's parameter hook."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from sensor_digest import layout


class RequestMeter:
    """``ingest`` = writes of day items and markers; ``summary`` = writes of summary items."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def install(self, session: Any) -> None:
        session.events.register("before-parameter-build.dynamodb", self._count)

    def _count(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        operation = model.name
        if operation not in ("TransactWriteItems", "UpdateItem", "PutItem"):
            return
        key = params.get("Key") or params.get("Item") or {}
        path = "summary" if layout.is_summary(key) else "ingest"
        with self._lock:
            self.counts[path] += 1
            self.counts[f"{path}:{operation}"] += 1

    def reset(self) -> None:
        with self._lock:
            self.counts.clear()
