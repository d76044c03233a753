"""Counts the DynamoDB requests a session makes, and estimates the write units they cost.

Registered on botocore's ``before-parameter-build`` hook of a session, so it sees every request of
every client made from it. ``requests`` counts each operation; ``counts`` counts the writes by path
(``ingest``: day items, markers, profiles; ``summary``: summary items), for the demo's figures.

Write units of a single-item write that succeeds are what the engine reports (the meter asks for
``ReturnConsumedCapacity``; DynamoDB Local charges the larger of the item before and after, by
item size, as DynamoDB does). DynamoDB Local does not report what DynamoDB would consume for
transactions (a flat 4 units), nor anything for a failed condition, so those come from item sizes
and the documented rules (``sensor_digest.store.sizes``): one unit per started KB, twice inside a transaction; a
write whose condition fails (or whose transaction is cancelled) is counted as charged, so the
figure is an upper bound.

Read units are computed from the request alone (``read_units``): DynamoDB charges a read of an item
that does not exist as it charges one that does, half a unit per key eventually consistent and a
whole one strongly consistent, per started 4 KB (every item the pipeline reads by key is far
under 4 KB), two per item in ``TransactGetItems``; a ``Query`` or ``Scan`` is charged what the
engine reports (it asks for ``ReturnConsumedCapacity``).
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from typing import Any

from sensor_digest.store import schema
from sensor_digest.store.sizes import item_bytes, value_bytes, write_units

WRITES = ("TransactWriteItems", "UpdateItem", "PutItem")
SINGLE_WRITES = ("PutItem", "UpdateItem", "DeleteItem")
REPORTED_READS = ("Query", "Scan")
_ESTIMATE = "sensor_digest_meter_estimate"
_TRANSACTION = "sensor_digest_meter_transaction"
# why a cancelled transaction was charged (``RequestMeter.cancelled_units``)
DAY_ITEM_STEP = "day item step"  # step 1 on a missing day item, or an insert that lost the race
DUPLICATE_MARKER = "duplicate marker"
CONFLICT = "conflict"
OTHER = "other"


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
        self.cancelled_units: Counter[str] = Counter()  # charged units of cancelled transactions, by cause
        self.read_units = 0.0
        self._lock = threading.Lock()

    def install(self, session: Any) -> None:
        session.events.register("before-parameter-build.dynamodb", self._count)
        session.events.register("after-call.dynamodb", self._reported)

    def _count(self, params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        op = model.name
        units = 0
        if op == "PutItem":
            units = write_units(item_bytes(params["Item"]))
        elif op in ("UpdateItem", "DeleteItem"):
            units = write_units(_update_bytes(params) if op == "UpdateItem" else item_bytes(params["Key"]))
        elif op == "TransactWriteItems":
            markers = []
            for action in params["TransactItems"]:
                (kind, body), *_ = action.items()
                size = item_bytes(body["Item"]) if kind == "Put" else _update_bytes(body) if kind == "Update" else 0
                units += write_units(size, transactional=True)
                markers.append(schema.LEDGER_KEY in (body.get("Key") or body.get("Item") or {}))
            context[_TRANSACTION] = (units, markers)
        if op in SINGLE_WRITES or op in REPORTED_READS:
            params.setdefault("ReturnConsumedCapacity", "TOTAL")
        if op in SINGLE_WRITES:
            context[_ESTIMATE] = units
        reads = read_units(op, params)
        written = params.get("Key") or params.get("Item") or {}
        path = "summary" if schema.is_summary(written) or schema.is_legacy_summary(written) else "ingest"
        with self._lock:
            self.requests[op] += 1
            self.write_units += units
            self.read_units += reads
            if op in WRITES:
                self.counts[path] += 1
                self.counts[f"{path}:{op}"] += 1

    def _reported(self, parsed: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        """A single-item write that succeeded: the engine's own figure replaces the estimate. A
        cancelled transaction: its charged units are put down to their cause."""
        transaction = context.pop(_TRANSACTION, None)
        if transaction is not None and "Error" in parsed:
            units, markers = transaction
            codes = [r.get("Code") for r in parsed.get("CancellationReasons") or []]
            cause = OTHER
            if "TransactionConflict" in codes:
                cause = CONFLICT
            elif any(c == "ConditionalCheckFailed" and not m for c, m in zip(codes, markers, strict=False)):
                cause = DAY_ITEM_STEP
            elif "ConditionalCheckFailed" in codes:
                cause = DUPLICATE_MARKER
            with self._lock:
                self.cancelled_units[cause] += units
            return
        estimate = context.pop(_ESTIMATE, None)
        reported = (parsed.get("ConsumedCapacity") or {}).get("CapacityUnits")
        if model.name in REPORTED_READS and reported is not None:
            with self._lock:
                self.read_units += reported
            return
        if estimate is None or reported is None or "Error" in parsed:
            return
        with self._lock:
            self.write_units += math.ceil(reported) - estimate

    def snapshot(self) -> tuple[int, int]:
        """(requests of every kind, write units) so far."""
        with self._lock:
            return sum(self.requests.values()), self.write_units

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.counts.clear()
            self.cancelled_units.clear()
            self.write_units = 0
            self.read_units = 0.0


def read_units(operation: str, params: dict[str, Any]) -> float:
    """The read units a ``GetItem``, ``BatchGetItem`` or ``TransactGetItems`` is charged (items under
    4 KB, found or not); 0 for anything else."""
    if operation == "GetItem":
        return 1.0 if params.get("ConsistentRead") else 0.5
    if operation == "BatchGetItem":
        return sum(
            len(request["Keys"]) * (1.0 if request.get("ConsistentRead") else 0.5)
            for request in params["RequestItems"].values()
        )
    if operation == "TransactGetItems":
        return 2.0 * len(params["TransactItems"])
    return 0.0
