"""Transient DynamoDB faults for the local runtime, injected at botocore's ``before-call`` hook.

A handler registered there that returns ``(http_response, parsed)`` replaces the request: the
call never reaches the engine (so nothing is written) and botocore raises the ``ClientError``
that DynamoDB would have sent, without its own retries. The handlers are untouched: they build
their clients from the default session, where this injector is registered.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field
from typing import Any

from botocore.awsrequest import AWSResponse

WRITE_OPERATIONS = ("TransactWriteItems", "UpdateItem", "PutItem")


def error_response(code: str, message: str, **extra: Any) -> tuple[AWSResponse, dict[str, Any]]:
    """What a ``before-call`` hook returns to answer a call with DynamoDB's error, never sending it:
    botocore raises the ``ClientError`` (``extra``: more of the parsed error body)."""
    parsed = {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": 400}, **extra}
    return AWSResponse(url="emulated", status_code=400, headers={}, raw=None), parsed


@dataclass
class FaultInjector:
    rate: float
    seed: int = 0
    operations: tuple[str, ...] = WRITE_OPERATIONS
    injected: int = 0
    _rng: random.Random = field(init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def install(self, session: Any) -> None:
        """Register on a boto3 ``Session`` (clients created from it afterwards carry the hook)."""
        for operation in self.operations:
            session.events.register(f"before-call.dynamodb.{operation}", self._before_call)

    def _before_call(self, **kwargs: Any) -> tuple[AWSResponse, dict[str, Any]] | None:
        with self._lock:
            if self.rate <= 0 or self._rng.random() >= self.rate:
                return None
            self.injected += 1
        return error_response("ProvisionedThroughputExceededException", "Rate exceeded (injected)")
