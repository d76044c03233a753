"""The one retry policy: exponential backoff with jitter, its clock and sleep injected.

The wait before retry ``n`` (from 0) lies in ``[least x span, span]``, where ``span`` is
``min(cap, max(base, floor) x 2^n)``: ``least=0`` is full jitter, ``least=0.5`` waits at least half
the span, ``least=1`` waits the span exactly (no jitter). ``floor`` lets a caller start from what it
measured (ledger contention: the winning transaction holds its items about as long as ours took to be
refused). Every retry loop of the functions uses it: the ledger's contention retries
(``RETRY_ON_CONTENTION``), the registry's cancelled transactions, ordered mode's marker writes and
``dynamo.batch_get``'s unprocessed keys; none calls ``time`` itself.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Backoff:
    attempts: int = 8
    base_seconds: float = 0.01
    cap_seconds: float = math.inf
    least: float = 0.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)
    clock: Callable[[], float] = field(default=time.monotonic, compare=False, repr=False)

    def delay(self, retry: int, floor: float = 0.0) -> float:
        """The wait before retry ``retry`` (0 for the first)."""
        span: float = min(self.cap_seconds, max(self.base_seconds, floor) * 2**retry)
        if self.least >= 1:
            return span
        return random.uniform(span * self.least, span)  # noqa: S311 - jitter

    def wait(self, retry: int, floor: float = 0.0) -> None:
        self.sleep(self.delay(retry, floor))


@dataclass(frozen=True)
class RetryPolicy(Backoff):
    """Retries of a write refused by contention, inside the invocation: at most ``attempts`` times
    (never past the invocation's deadline), each after between half and all of the span, since a retry
    sooner than that would only meet the same transaction again, and every refused attempt is charged."""

    attempts: int = 10
    base_seconds: float = 0.025
    cap_seconds: float = 1.0
    least: float = 0.5
