"""Counts the DynamoDB requests a session makes, and estimates the write units they cost.

Registered on botocore's ``before-parameter-build`` hook of a session, so it sees every request of
every client made from it. ``requests`` counts each operation; ``counts`` counts the writes by path
(``ingest``: day items, markers, profiles; ``summary``: summary items), for the demo's figures.

DynamoDB Local does not report what real DynamoDB would consume for transactions, so write units
come from item sizes and the documented rules (``sizing``): a write costs one unit per started KB,
twice inside a transaction; a write whose condition fails (or whose transaction is cancelled) is
charged all the same, so every request is counted as sent.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from sensor_digest import layout
from sensor_digest_emulators.sizing import item_bytes, value_bytes, write_units

WRITES = ("TransactWriteItems", "UpdateItem", "PutItem")


def _update_bytes(update: dict[str, Any]) -> int:
    """The written item of an UpdateItem: its key plus the values it sets (small items here)."""
    names = update.get("ExpressionAttributeNames", {})
    values = update.get("ExpressionAttributeValues", {})
    return (
        item_bytes(update["Key"])
        + sum(len(n.encode()) for n in names.values())
        + sum(value_bytes(v) for v in values.values())
    )


class RequestMeter:
    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self.counts: Counter[str] = Counter()
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
        written = params.get("Key") or params.get("Item") or {}
        path = "summary" if layout.is_summary(written) or layout.is_legacy_summary(written) else "ingest"
        with self._lock:
            self.requests[op] += 1
            self.write_units += units
            if op in WRITES:
                self.counts[path] += 1
                self.counts[f"{path}:{op}"] += 1

    def snapshot(self) -> tuple[int, int]:
        """(requests of every kind, write units) so far."""
        with self._lock:
            return sum(self.requests.values()), self.write_units

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.counts.clear()
            self.write_units = 0
