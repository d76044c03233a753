"""DynamoDB's transaction conflicts, which DynamoDB Local does not produce.

DynamoDB cancels a ``TransactWriteItems`` that touches an item another transaction in flight is
writing, with the reason ``TransactionConflict`` for that action, and rejects a single-item write
to such an item with ``TransactionConflictException``. DynamoDB Local serializes them instead, so
contention never shows. ``ConflictEmulator.install(session)`` restores it on botocore's hooks: a
transaction marks its items in flight from ``before-call`` to ``after-call``; a write that
touches a marked item meanwhile is answered with DynamoDB's error and never reaches the engine
(nothing is written, as on DynamoDB).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from botocore.awsrequest import AWSResponse

from sensor_digest.store import schema
from sensor_digest_tools.instruments.faults import error_response

KEY_ATTRIBUTES = {name for name, _, _ in schema.DIGEST_KEY_SCHEMA + schema.LEDGER_KEY_SCHEMA}
_CONTEXT_KEY = "sensor_digest_in_flight"
_PARAMS_KEY = "sensor_digest_conflict_params"


def _item_id(table: str, attributes: dict[str, Any]) -> str:
    key = {k: v for k, v in attributes.items() if k in KEY_ATTRIBUTES}
    return f"{table}/{json.dumps(key, sort_keys=True)}"


def _action_items(params: dict[str, Any]) -> Iterator[str]:
    for action in params.get("TransactItems", []):
        (_, body), *_ = action.items()
        yield _item_id(body["TableName"], body.get("Key") or body.get("Item") or {})


@dataclass
class ConflictEmulator:
    conflicts: int = 0  # every write refused: transactions cancelled and single-item writes rejected
    transaction_conflicts: int = 0  # of which transactions cancelled
    _in_flight: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def install(self, session: Any) -> None:
        events = session.events
        # ``before-call`` sees the serialized request; the API parameters are kept a step earlier.
        events.register("before-parameter-build.dynamodb", self._keep_params)
        events.register("before-call.dynamodb.TransactWriteItems", self._before_transaction)
        events.register("after-call.dynamodb.TransactWriteItems", self._after_transaction)
        events.register("after-call-error.dynamodb.TransactWriteItems", self._after_transaction)
        for operation in ("PutItem", "UpdateItem", "DeleteItem"):
            events.register(f"before-call.dynamodb.{operation}", self._before_single_write)

    @staticmethod
    def _keep_params(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context[_PARAMS_KEY] = dict(params)

    def _before_transaction(self, context: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]] | None:
        items = list(_action_items(context.get(_PARAMS_KEY, {})))
        with self._lock:
            busy = [item in self._in_flight for item in items]
            if any(busy):
                self.conflicts += 1
                self.transaction_conflicts += 1
                reasons = [
                    {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
                    if b
                    else {"Code": "None"}
                    for b in busy
                ]
                return error_response(
                    "TransactionCanceledException",
                    "Transaction cancelled (emulated conflict)",
                    CancellationReasons=reasons,
                )
            for item in items:
                self._in_flight[item] = self._in_flight.get(item, 0) + 1
        context[_CONTEXT_KEY] = items
        return None

    def _after_transaction(self, context: dict[str, Any], **_: Any) -> None:
        with self._lock:
            for item in context.pop(_CONTEXT_KEY, []):
                left = self._in_flight.get(item, 0) - 1
                if left > 0:
                    self._in_flight[item] = left
                else:
                    self._in_flight.pop(item, None)

    def _before_single_write(self, context: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]] | None:
        params = context.get(_PARAMS_KEY, {})
        item = _item_id(str(params.get("TableName", "")), params.get("Key") or params.get("Item") or {})
        with self._lock:
            if item not in self._in_flight:
                return None
            self.conflicts += 1
        return error_response("TransactionConflictException", "Transaction is ongoing for the item (emulated)")
