"""Transient DynamoDB faults for the local runtime, injected at botocore's ``before-call`` hook.

A handler registered there that returns ``(http_response, parsed)`` replaces the request: the
call never reaches the engine (so nothing is written) and botocore raises the ``ClientError``
that DynamoDB would have sent, without its own retries. The handlers are untouched: they build
their clients from the session this injector is registered on (the local pipeline's own); what
is outside the pipeline under test (a producer, an operator, the demo's set-up and checks) uses
clients of another session (``LocalPipeline.sqs()``, ``dynamodb()``) and never meets a fault.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from botocore.awsrequest import AWSResponse

WRITE_OPERATIONS = ("TransactWriteItems", "UpdateItem", "PutItem")


def error_response(code: str, message: str, **extra: Any) -> tuple[AWSResponse, dict[str, Any]]:
    """What a ``before-call`` hook returns to answer a call with DynamoDB's error, never sending it:
    botocore raises the ``ClientError`` (``extra``: more of the parsed error body)."""
    parsed = {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": 400}, **extra}
    return AWSResponse(url="emulated", status_code=400, headers={}, raw=None), parsed


THROTTLED = ("ProvisionedThroughputExceededException", "Rate exceeded (injected)")
"""DynamoDB's throttling error (code, message), as both fault layers answer it."""


@dataclass
class FaultPlan:
    """Faults a share of the calls it is asked about at random, with the mix of ``kinds``; switchable at
    run time. The one random fault rule: the local runtime's ``FaultInjector`` throttles by it, the test
    suite's fault layer (tests/support/faults.py) injects every kind by it."""

    rate: float = 0.0
    kinds: tuple[str, ...] = ("throttle",)
    seed: int = 1
    enabled: bool = True
    injected: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def __call__(self, operation: str, kwargs: dict[str, Any]) -> str | None:
        with self._lock:
            if not self.enabled or self._rng.random() >= self.rate:
                return None
            kind = self.kinds[0] if len(self.kinds) == 1 else self._rng.choice(self.kinds)
            self.injected[kind] += 1
            return kind


@dataclass
class FaultInjector:
    """Throttling at ``rate`` (``FaultPlan``) of the DynamoDB write calls of every client of a session."""

    rate: float
    seed: int = 0
    operations: tuple[str, ...] = WRITE_OPERATIONS
    plan: FaultPlan = field(init=False)

    def __post_init__(self) -> None:
        self.plan = FaultPlan(rate=self.rate, seed=self.seed)

    @property
    def injected(self) -> int:
        return self.plan.injected.total()

    def install(self, session: Any) -> None:
        """Register on a boto3 ``Session`` (clients created from it afterwards carry the hook)."""
        for operation in self.operations:
            session.events.register(f"before-call.dynamodb.{operation}", self._before_call)

    def _before_call(
        self, model: Any = None, params: Any = None, **kwargs: Any
    ) -> tuple[AWSResponse, dict[str, Any]] | None:
        if self.rate <= 0 or self.plan(getattr(model, "name", ""), {}) is None:
            return None
        return error_response(*THROTTLED)
