"""The three steps of every write here that may have to create its item first.

Counting a day (``counting.py``) and keeping a day in the summary map (``summary.py``) are the
same idea over different targets, the day item and the summary item's ``DailyCounts`` map:

1. ``UPDATE_IF_EXISTS``: update, on condition that the target exists;
2. ``CREATE_IF_MISSING``: when it did not, create it, on condition that it still does not exist;
3. ``UPDATE_AFTER_RACE``: when another writer created it between 1 and 2, update again.

Each path supplies ``attempt(step)``, one conditional write that says what DynamoDB answered:
``DONE`` (written, or nothing left to write), ``NEXT`` (the step's own condition failed), or
``AGAIN`` (something else in the write was refused and was dropped, so the same step is retried;
the ledger markers of duplicates, in counting). ``run`` walks the steps.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from sensor_digest.errors import TransientFault


class UpsertStep(Enum):
    UPDATE_IF_EXISTS = 1
    CREATE_IF_MISSING = 2
    UPDATE_AFTER_RACE = 3

    def after_condition_failed(self) -> UpsertStep:
        if self is UpsertStep.UPDATE_AFTER_RACE:
            raise TransientFault("the update after the race reported a failed condition")
        return UpsertStep(self.value + 1)


class Answer(Enum):
    DONE = "done"
    NEXT = "next"
    AGAIN = "again"


def run(
    attempt: Callable[[UpsertStep], Answer], *, max_attempts: int, start: UpsertStep = UpsertStep.UPDATE_IF_EXISTS
) -> None:
    """Walk the three steps until ``attempt`` is ``DONE``; ``TransientFault`` past ``max_attempts``.
    ``start=CREATE_IF_MISSING`` skips step 1 for a target known to be missing (a read said so); if
    it was created meanwhile, step 2's condition fails and step 3 follows, as after any race."""
    step = start
    for _ in range(max_attempts):
        answer = attempt(step)
        if answer is Answer.DONE:
            return
        if answer is Answer.NEXT:
            step = step.after_condition_failed()
    raise TransientFault("the write did not settle")
