"""At-least-once (``DELIVERY_MODE=at-least-once``): the count alone, no markers.

The same update -> insert -> update as the ledger's, as plain ``UpdateItem`` / ``PutItem`` calls:
never undercounts; a redelivered message is counted again. Each write carries the group's hours
(``hours.py``): in the put of a new day item, or in the same ``ADD`` as the count.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from functools import partial
from typing import Any

from sensor_digest.counting.base import DayKey, GroupOutcome, TableCounter
from sensor_digest.counting.hours import HoursWrite, hours_of, with_hours
from sensor_digest.counting.outcomes import Group
from sensor_digest.errors import TransientFault
from sensor_digest.messages import SensorMessage
from sensor_digest.store import dynamo, expressions, schema
from sensor_digest.upsert import Answer, ThreeStepUpsert


class PlainCounter(TableCounter):
    """One conditional write per sensor-day group, no ledger."""

    def identity(self, message: SensorMessage) -> Hashable | None:
        """None: every message counts."""
        return None

    def may_bet(self, messages: Sequence[SensorMessage]) -> bool:
        """Always: the update is one ``UpdateItem``."""
        return True

    def count_group(self, group: Group) -> GroupOutcome:
        outcome, messages = GroupOutcome(), group.messages
        write = PlainWrite(self._client, self._table, group.key, messages, outcome)
        write.hours.missing = group.key in self.hourless
        try:
            write.run(max_attempts=5, start=self.first_step(group.missing))
        except TransientFault as fault:
            outcome.give_up(messages, fault)
        else:
            self.known_days.add([group.key])
            self.hourless.written(group.key)
            outcome.counted.extend(messages)
        outcome.steps += write.steps
        return outcome


class PlainWrite(ThreeStepUpsert):
    def __init__(
        self, client: Any, table: str, day: DayKey, messages: Sequence[SensorMessage], outcome: GroupOutcome
    ) -> None:
        super().__init__()
        self._hours = hours_of(messages)
        self.hours = HoursWrite()
        self._client = client
        self._table = table
        self._sensor_id, self._day = day
        self._total = sum(m.count for m in messages)
        self._outcome = outcome

    def update_if_exists(self) -> Answer:
        return self._update(only_if_exists=True)

    def create_if_missing(self) -> Answer:
        item = schema.day_item(self._sensor_id, self._day, self._total, self._hours)
        params = {**expressions.put_if_absent(self._table, item), "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
        answer = self._send("PutItem", partial(self._client.put_item, **params))
        self._outcome.insert_refused = answer is Answer.NEXT
        return answer

    def update_after_race(self) -> Answer:
        return self._update(only_if_exists=False)

    def _update(self, *, only_if_exists: bool) -> Answer:
        key = schema.day_key(self._sensor_id, self._day)
        params = expressions.add_count(self._table, key, self._total, only_if_exists=only_if_exists)
        with_hours(params, self.hours, self._hours)
        return self._send("UpdateItem", partial(self._client.update_item, **params))

    def _send(self, action: str, call: Any) -> Answer:
        """``DONE`` once written; ``AGAIN`` when the day item is there but without the hours map
        (refused for that alone: the same step again, creating it); else ``NEXT``."""
        self._outcome.requests += 1
        old = dynamo.conditional_write(action, call)
        if old is None:
            return Answer.DONE
        was_missing = self.hours.missing
        self.hours.saw(old)
        if action == "UpdateItem" and old and self.hours.missing != was_missing:
            return Answer.AGAIN
        return Answer.NEXT
