"""A test-only fault layer around the boto3 DynamoDB client the handlers use.

Engines cannot be made to throttle or time out on demand, so this wrapper injects the faults
that DynamoDB produces in production, at the call boundary, with the exact error shapes
botocore raises:

- ``throttle``: a ``ProvisionedThroughputExceededException`` before the call (nothing written);
- ``conflict``: a ``TransactionCanceledException`` whose reasons say ``TransactionConflict``, or,
  for a single-item write, the ``TransactionConflictException`` DynamoDB answers when a transaction
  holds the item (nothing written);
- ``cancel:<Code>@<i>``: a ``TransactionCanceledException`` whose action ``i`` has reason ``<Code>``
  (``ThrottlingError``, ``TransactionConflict``...) and the others ``None`` (nothing written);
- ``timeout_after``: the call runs (and commits, if DynamoDB accepts it), then a
  ``ReadTimeoutError`` hides the answer: the ambiguous case where the caller cannot know
  whether the write happened;
- ``invalid``: a ``ValidationException`` before the call (an error no retry cures);
- ``crash``: a ``Crash`` (not a botocore error) escapes, as if the process died mid-batch.

``FaultPlan`` (the instruments', shared with the local runtime) is a rule that faults a share of write
calls at random; the reliability suite gives it every kind (``FAULT_KINDS``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from botocore import xform_name
from botocore.exceptions import ClientError, ReadTimeoutError

from sensor_digest_tools.instruments.faults import THROTTLED, FaultPlan
from sensor_digest_tools.instruments.faults import WRITE_OPERATIONS as API_WRITE_OPERATIONS

Rule = Callable[[str, dict[str, Any]], str | None]
"""Given (operation name, call kwargs), the fault to inject or ``None``."""

WRITE_OPERATIONS = tuple(xform_name(operation) for operation in API_WRITE_OPERATIONS)
"""The write calls, as a boto3 client names them: the instruments' operations (API spelling) in snake_case."""

FAULT_KINDS = ("throttle", "timeout_after", "conflict", "crash")


class Crash(BaseException):
    """Escapes every ``except Exception``: models a process dying in the middle of a batch."""


def throttling_error(operation: str) -> ClientError:
    code, message = THROTTLED
    return ClientError({"Error": {"Code": code, "Message": message}}, operation)


def conflict_error(kwargs: dict[str, Any]) -> ClientError:
    return cancelled_error(kwargs, "TransactionConflict", 0)


def cancelled_error(kwargs: dict[str, Any], code: str, index: int) -> ClientError:
    """A cancelled ``TransactWriteItems`` in DynamoDB's shape: action ``index`` has reason ``code``."""
    actions = kwargs.get("TransactItems", [{}])
    reasons = [{"Code": "None"} for _ in actions]
    reasons[index] = {"Code": code, "Message": f"{code} (injected)"}
    return ClientError(
        {
            "Error": {"Code": "TransactionCanceledException", "Message": "Transaction cancelled (injected)"},
            "CancellationReasons": reasons,
        },
        "TransactWriteItems",
    )


@dataclass
class FaultyClient:
    """Delegates to ``inner``; write calls consult ``rule`` first. Counts what it did."""

    inner: Any
    rule: Rule
    calls: dict[str, int] = field(default_factory=dict)
    injected: dict[str, int] = field(default_factory=dict)
    operations: tuple[str, ...] = WRITE_OPERATIONS
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if name not in self.operations:
            return target

        def call(**kwargs: Any) -> Any:
            fault = self.rule(name, kwargs)
            with self._lock:
                self.calls[name] = self.calls.get(name, 0) + 1
                if fault:
                    self.injected[fault] = self.injected.get(fault, 0) + 1
            if fault == "throttle":
                raise throttling_error(name)
            if fault == "conflict" and name == "transact_write_items":
                raise conflict_error(kwargs)
            if fault == "conflict" and name in ("put_item", "update_item", "delete_item"):
                raise ClientError(
                    {"Error": {"Code": "TransactionConflictException", "Message": "Transaction is ongoing (injected)"}},
                    name,
                )
            if fault and fault.startswith("cancel:") and name == "transact_write_items":
                code, _, index = fault.removeprefix("cancel:").partition("@")
                raise cancelled_error(kwargs, code, int(index or 0))
            if fault == "invalid":
                raise ClientError({"Error": {"Code": "ValidationException", "Message": "injected"}}, name)
            if fault == "crash":
                raise Crash(name)
            try:
                result = target(**kwargs)
            except ClientError:
                if fault == "timeout_after":  # a timeout hides whatever DynamoDB answered
                    raise ReadTimeoutError(endpoint_url="http://dynamodb.local (injected)") from None
                raise
            if fault == "timeout_after":
                raise ReadTimeoutError(endpoint_url="http://dynamodb.local (injected)")
            return result

        return call


@dataclass
class FaultySession:
    """A session whose DynamoDB clients are wrapped in the fault layer (the others pass through)."""

    inner: Any
    rule: Rule
    operations: tuple[str, ...] = WRITE_OPERATIONS  # the calls ``rule`` is asked about (reads too, if named)

    @property
    def events(self) -> Any:
        return self.inner.events

    def client(self, service_name: str, **kwargs: Any) -> Any:
        client = self.inner.client(service_name, **kwargs)
        if service_name != "dynamodb":
            return client
        return FaultyClient(inner=client, rule=self.rule, operations=self.operations)


def touches_sensor(kwargs: dict[str, Any], sensor_id: int) -> bool:
    """Whether a write call touches the day item of ``sensor_id``."""
    actions = kwargs.get("TransactItems") or [{"Call": kwargs}]
    for action in actions:
        body = next(iter(action.values()))
        key = body.get("Key") or body.get("Item") or {}
        if key.get("SensorId", {}).get("N") == str(sensor_id):
            return True
    return False


class PauseAfterFirstCall:
    """Holds each thread after its first ``operation`` call (or before it, ``before=True``) until
    ``barrier`` has every thread there: a deterministic race (both writers read the same state
    before either writes)."""

    def __init__(self, inner: Any, barrier: threading.Barrier, operation: str, *, before: bool = False) -> None:
        self.inner = inner
        self.barrier = barrier
        self.operation = operation
        self.before = before
        self.local = threading.local()

    def _pause_once(self) -> None:
        if not getattr(self.local, "paused", False):
            self.local.paused = True
            self.barrier.wait()

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if name != self.operation:
            return target

        def call(**kwargs: Any) -> Any:
            if self.before:
                self._pause_once()
            try:
                return target(**kwargs)
            finally:
                self._pause_once()

        return call


__all__ = [
    "FAULT_KINDS",
    "Crash",
    "FaultPlan",
    "FaultyClient",
    "FaultySession",
    "PauseAfterFirstCall",
    "touches_sensor",
]
