"""The model the state machines (scenario 7, standard and FIFO) hold the tables to.

``SCRIPT`` is the fault rule their ingest services share: the faults the next write calls get, in
order. ``Sent`` is what a machine sent; while a message is unacknowledged its write may or may not
have committed, so each day count lies between what was acknowledged and that plus what is in doubt.
"""

from __future__ import annotations

from collections import Counter
from typing import Any


class Script:
    """The faults the next write calls get, in order."""

    def __init__(self) -> None:
        self.queue: list[str] = []

    def __call__(self, operation: str, kwargs: dict[str, Any]) -> str | None:
        return self.queue.pop(0) if self.queue else None


SCRIPT = Script()


Sent = dict[str, tuple[int, str, int]]
"""What a machine sent: a message's identity -> (sensor, day, count)."""


def model_counts(sent: Sent, ids: set[str]) -> Counter[tuple[int, str]]:
    """The day counts these of the sent messages add up to."""
    out: Counter[tuple[int, str]] = Counter()
    for identity in ids:
        sensor, day, count = sent[identity]
        out[(sensor, day)] += count
    return out


def assert_between_acknowledged_and_doubt(counts: dict[tuple[int, str], int], sent: Sent, acked: set[str]) -> None:
    """Each day count lies between what was acknowledged and that plus what is in doubt (sent,
    never acknowledged: its write may or may not have committed)."""
    low, doubt = model_counts(sent, acked), model_counts(sent, set(sent) - acked)
    for key in set(counts) | set(low) | set(doubt):
        assert low[key] <= counts.get(key, 0) <= low[key] + doubt[key], (key, counts.get(key), low[key], doubt[key])
