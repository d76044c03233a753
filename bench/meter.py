"""Counts DynamoDB requests and estimates write units from the requests themselves.

DynamoDB Local does not report what real DynamoDB would consume for transactions, so write
units come from item sizes and the documented rules (``sensor_digest.sizing``): a write costs
one unit per started KB, twice inside a transaction; a write whose condition fails (or whose
transaction is cancelled) is charged all the same, so every request is counted as sent.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from sensor_digest.sizing import item_bytes, value_bytes, write_units


def _update_bytes(update: dict[str, Any]) -> int:
    """The written item of an UpdateItem: its key plus the values it sets (small items here)."""
    names = update.get("ExpressionAttributeNames", {})
    values = update.get("ExpressionAttributeValues", {})
    return (
        item_bytes(update["Key"])
        + sum(len(n.encode()) for n in names.values())
        + sum(value_bytes(v) for v in values.values())
    )


class Meter:
    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self.write_units = 0
        self._lock = threading.Lock()

    def install(self, session: Any) -> None:
        session.events.register("before-parameter-build.dynamodb", self._count)

    def _count(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        op = model.name
        units = 0
        if op == "PutItem":
            units = write_units(item_bytes(params["Item"]))
        elif op in ("UpdateItem", "DeleteItem"):
            units = write_units(_update_bytes(params) if op == "UpdateItem" else item_bytes(params["Key"]))
        elif op == "TransactWriteItems":
            for action in params["TransactItems"]:
                (kind, body), *_ = action.items()
                size = item_bytes(body["Item"]) if kind == "Put" else _update_bytes(body) if kind == "Update" else 0
                units += write_units(size, transactional=True)
        with self._lock:
            self.requests[op] += 1
            self.write_units += units

    def snapshot(self) -> tuple[int, int]:
        with self._lock:
            return sum(self.requests.values()), self.write_units


class PeakRss:
    """Samples the process's resident memory every 20 ms while a strategy runs."""

    def __init__(self) -> None:
        self.start = self.peak = self._rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    @staticmethod
    def _rss() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self._rss())

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss())
