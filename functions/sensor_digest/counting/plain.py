"""At-least-once (``DELIVERY_MODE=at-least-once``): the count alone, no markers.

The same update -> insert -> update as the ledger's, as plain ``UpdateItem`` / ``PutItem`` calls
(built by ``store/day_writes.py``, the group's hours with the count): never undercounts; a
redelivered message is counted again.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from sensor_digest.counting.base import DayWrite, TableCounter
from sensor_digest.counting.outcomes import Group, GroupOutcome, write_chunks
from sensor_digest.errors import StoreFault
from sensor_digest.messages import SensorMessage
from sensor_digest.store import day_writes
from sensor_digest.store.day_store import Action, DayStore, Refused
from sensor_digest.store.day_view import DayKey, DayView, Kind, view_of
from sensor_digest.store.guards import Anyway, Exists
from sensor_digest.store.tally import Tally
from sensor_digest.upsert import Answer


class PlainCounter(TableCounter):
    """One conditional write per sensor-day group, no ledger."""

    def identity(self, message: SensorMessage) -> Hashable | None:
        """None: every message counts."""
        return None

    def may_bet(self, messages: Sequence[SensorMessage]) -> bool:
        """Always: the update is one ``UpdateItem``."""
        return True

    def count_group(self, group: Group) -> GroupOutcome:
        """The group in one write, or in as few as its readings' statistics need (``write_chunks``)."""
        outcome, messages, view = GroupOutcome(), list(group.messages), self.view(group)
        for chunk in write_chunks(messages, len(messages), identities=False):
            write = PlainWrite(self.store, group.key, chunk, outcome, view=view)
            try:
                write.run(max_attempts=5, start=self.first_step(view.kind is Kind.MISSING))
            except StoreFault as fault:
                outcome.give_up(messages[len(outcome.counted) :], fault)
                break
            finally:
                outcome.steps += write.steps
            view = write.view
            self.known_days.add([group.key], view)
            outcome.counted.extend(chunk)
        return outcome


class PlainWrite(DayWrite):
    def __init__(
        self,
        store: DayStore,
        day: DayKey,
        messages: Sequence[SensorMessage],
        outcome: GroupOutcome,
        *,
        view: DayView,
    ) -> None:
        super().__init__(store, day, outcome, view)
        self._tally = Tally.of(messages)

    def update_if_exists(self) -> Answer:
        return self._send("Update", self._update(Exists()))

    def create_if_missing(self) -> Answer:
        answer = self._send("Put", day_writes.create(self._store.table, self._day, self._tally))
        self._outcome.insert_refused = answer is Answer.NEXT
        return answer

    def update_after_race(self) -> Answer:
        return self._send("Update", self._update(Anyway()))

    def _update(self, guard: Exists | Anyway) -> dict[str, Any]:
        view = self.view
        return day_writes.update(self._store.table, self._day, self._tally, view.hours, guard, readings=view.readings)

    def _send(self, action: str, params: dict[str, Any]) -> Answer:
        """``DONE`` once written; ``AGAIN`` when the day item is there but the write rested on what it
        no longer is (its hours map, its readings: the same step again, on what it is); else ``NEXT``."""
        try:
            self._store.write([Action(action, params)], self._outcome)
        except Refused as refused:
            self.view = view_of(refused.item, identities=False)
            return Answer.AGAIN if action == "Update" and refused.item else Answer.NEXT
        self.view = self.view.written(self._tally)
        return Answer.DONE
