"""The three steps of every write here that may have to create its target first.

Counting a day (``counting/``) and keeping a day in the summary map (``summary/map_upsert.py``)
are the same idea over different targets, the day item and the summary item's ``DailyCounts``
map. Each is a ``ThreeStepUpsert`` whose three named methods are its three steps, each one
conditional write that says what DynamoDB answered:

1. ``update_if_exists``: update, on condition that the target exists;
2. ``create_if_missing``: when it did not, create it, on condition that it still does not exist;
3. ``update_after_race``: when another writer created it between 1 and 2, update again.

An answer is ``DONE`` (written, or nothing left to write), ``NEXT`` (the step's own condition
failed: go to the next step) or ``AGAIN`` (something else in the write was refused and dropped,
so the same step is tried again: the ledger markers of duplicates, in counting). ``run`` walks
the steps, as Powertools' ``BasePersistenceLayer`` walks its ``_put_record`` / ``_update_record``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import Enum
from typing import ClassVar

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


class ThreeStepUpsert(ABC):
    """One target's write: the three steps as methods, walked by ``run``.

    ``labels`` names the steps in the caller's words (for outcomes and logs); ``steps`` records
    each attempt's label in order."""

    labels: ClassVar[dict[UpsertStep, str]] = {
        UpsertStep.UPDATE_IF_EXISTS: "update",
        UpsertStep.CREATE_IF_MISSING: "insert",
        UpsertStep.UPDATE_AFTER_RACE: "update-again",
    }

    def __init__(self) -> None:
        self.steps: list[str] = []
        self.step = UpsertStep.UPDATE_IF_EXISTS  # the step tried last (where a run that raised stopped)

    @abstractmethod
    def update_if_exists(self) -> Answer:
        """Step 1: the update, on condition that the target exists."""

    @abstractmethod
    def create_if_missing(self) -> Answer:
        """Step 2: the create, on condition that the target still does not exist."""

    def update_after_race(self) -> Answer:
        """Step 3: the update once another writer created the target (by default, step 1 again)."""
        return self.update_if_exists()

    def nothing_left(self) -> bool:
        """Whether nothing is left to write (every message turned out to be applied already)."""
        return False

    def run(self, *, max_attempts: int, start: UpsertStep = UpsertStep.UPDATE_IF_EXISTS) -> None:
        """Walk the steps until one answers ``DONE``; ``TransientFault`` past ``max_attempts``.
        ``start=CREATE_IF_MISSING`` skips step 1 for a target known to be missing (a read said so);
        if it was created meanwhile, step 2's condition fails and step 3 follows, as after any race."""
        self.step = start
        for _ in range(max_attempts):
            if self.nothing_left():
                return
            self.steps.append(self.labels[self.step])
            answer = self._attempt(self.step)
            if answer is Answer.DONE:
                return
            if answer is Answer.NEXT:
                self.step = self.step.after_condition_failed()
        raise TransientFault("the write did not settle")

    def _attempt(self, step: UpsertStep) -> Answer:
        if step is UpsertStep.UPDATE_IF_EXISTS:
            return self.update_if_exists()
        if step is UpsertStep.CREATE_IF_MISSING:
            return self.create_if_missing()
        return self.update_after_race()
