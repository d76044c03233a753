"""A latency model of networked DynamoDB for DynamoDB Local: a fixed added delay per request kind.

DynamoDB Local answers from the same machine, so its timings measure this machine's CPU, not
what a service whose cost is a network round trip does with the same requests.
``LatencyModel.install(session)`` adds, to every DynamoDB request the session's clients send, a
delay of ``per_request[operation] + per_item[operation] * items`` (items: the actions of a
transaction, the keys of a ``BatchGetItem``). It is a **model**: the defaults are assumptions of
the order AWS documents (single-digit milliseconds for single-item requests inside a Region; a
transaction prepares and commits every item, two writes each, so it is modeled as about twice a
single write plus a share per action), never a measurement of AWS.

The delay is slept on botocore's ``before-call`` hook, registered last so that it runs inside
the conflict emulator's in-flight window (on DynamoDB a transaction holds its items for its own
duration). A request answered without reaching the engine (an emulated conflict or fault) is
delayed on ``after-call`` instead: it still cost a round trip.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

_SLEPT = "sensor_digest_latency_slept"
_ITEMS = "sensor_digest_latency_items"

# milliseconds; see the module's docstring and docs/benchmarks.md for their grounds
DEFAULT_PER_REQUEST_MS: Mapping[str, float] = {
    "GetItem": 4.0,
    "Query": 5.0,
    "PutItem": 5.0,
    "UpdateItem": 5.0,
    "DeleteItem": 5.0,
    "BatchGetItem": 6.0,
    "TransactWriteItems": 12.0,
}
DEFAULT_PER_ITEM_MS: Mapping[str, float] = {"BatchGetItem": 0.05, "TransactWriteItems": 0.5}
OTHER_REQUEST_MS = 5.0


def _items(params: Mapping[str, Any]) -> int:
    if "TransactItems" in params:
        return len(params["TransactItems"])
    if "RequestItems" in params:  # BatchGetItem: keys by table; BatchWriteItem: requests by table
        tables = params["RequestItems"].values()
        return sum(len(t["Keys"]) if isinstance(t, dict) else len(t) for t in tables)
    return 1


@dataclass
class LatencyModel:
    per_request_ms: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_PER_REQUEST_MS))
    per_item_ms: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_PER_ITEM_MS))
    added_seconds: float = 0.0
    sleep: Callable[[float], None] = time.sleep  # how a delay is spent (tests record it instead)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def delay(self, operation: str, items: int) -> float:
        """Seconds added to one request of ``operation`` carrying ``items`` items."""
        ms = self.per_request_ms.get(operation, OTHER_REQUEST_MS) + self.per_item_ms.get(operation, 0.0) * items
        return ms / 1000

    def install(self, session: Any) -> None:
        events = session.events
        events.register("before-parameter-build.dynamodb", self._count_items)
        events.register_last("before-call.dynamodb", self._before_call)
        events.register("after-call.dynamodb", self._after_call)

    @staticmethod
    def _count_items(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context[_ITEMS] = _items(params)

    def _wait(self, model: Any, context: dict[str, Any]) -> None:
        seconds = self.delay(model.name, context.get(_ITEMS, 1))
        context[_SLEPT] = True
        with self._lock:
            self.added_seconds += seconds
        self.sleep(seconds)

    def _before_call(self, model: Any, context: dict[str, Any], **_: Any) -> None:
        self._wait(model, context)

    def _after_call(self, model: Any, context: dict[str, Any], **_: Any) -> None:
        if not context.pop(_SLEPT, False):
            self._wait(model, context)
