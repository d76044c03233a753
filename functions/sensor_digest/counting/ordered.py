"""Ordered mode (``QUEUE_TYPE=fifo``): no ledger; the day item remembers the last sequence number
applied to it.

SQS numbers a message group's messages in increasing order, each sensor is one group, and Lambda
hands a group over in order and holds back its later messages while one is retried. So a day item
can remember the highest sequence number applied to it, and one ``UpdateItem`` counts a group on
condition that its first number is above that one: ``ADD`` the group's count, ``SET`` its last
number. Numbers of two queues do not compare, and while CloudFormation replaces the queue both
deliver, so the day item keeps one number per queue (``AppliedSequence#<queue ARN>``, the queue
being the message's ``source``); the condition also honours the single pair (``AppliedSequence``,
``SequenceSource``) that the first ordered-mode release kept. When the condition fails, the item as
it was (``ReturnValuesOnConditionCheckFailure=ALL_OLD``) says what was applied: those messages are
duplicates, the rest are written on the same condition. A missing day item takes the same three
steps, the insert carrying the sequence number too. The write carries the group's hours
(``hours.py``): in the insert, or in the same ``ADD`` as the count (a day item from before hours
has its map created in that write).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from functools import partial
from typing import Any

from sensor_digest.backoff import Backoff
from sensor_digest.counting.base import (
    DayKey,
    Expired,
    GroupOutcome,
    Lookup,
    TableCounter,
    leaders,
    settle_followers,
)
from sensor_digest.counting.hours import HoursWrite, hours_of, update_expression
from sensor_digest.counting.outcomes import Group
from sensor_digest.errors import TransientFault
from sensor_digest.messages import SensorMessage
from sensor_digest.store import dynamo, expressions, schema
from sensor_digest.upsert import Answer, ThreeStepUpsert

MARKER_ATTEMPTS = 3
MARKER_BACKOFF = Backoff(attempts=MARKER_ATTEMPTS, base_seconds=0.05)
"""How often a marker's ``PutItem`` is tried before the message is left without one."""


def sequence_of(message: SensorMessage) -> int:
    """A FIFO message's SQS sequence number."""
    if message.sequence is None:
        raise TransientFault("a FIFO message without its sequence number reached the ordered counter")
    return message.sequence


class OrderedCounter(TableCounter):
    """``QUEUE_TYPE=fifo``: one conditional ``UpdateItem`` per sensor-day group, guarded by the
    sequence number of the queue the group came from.

    The sequence number cannot follow a message through the dead-letter queue: a redrive sends it
    again, with a new number. So a message that ended counted but may still come back leaves a
    marker in the ledger (``FIFO#<sensor_id>#<messageId>``, ``remember_settled``): one listed
    behind a failed message of its group, and one SQS has handed out before (its delete or its
    answer was lost once, and may be again). On its last receives (``maxReceiveCount - 1`` and
    more: one more without a delete and SQS moves it away) a message is counted with its marker in
    one transaction, so that a commit whose answer is lost leaves the marker too. A redriven
    message (one whose origin is another message) is looked up there first: found, it is a
    duplicate. The markers cost nothing while nothing fails: only such a message writes one, only a
    redriven message reads one."""

    def __init__(
        self,
        *,
        table_name: str,
        client: Any,
        ledger_table_name: str = "",
        marker_ttl_seconds: int = 0,
        max_receive_count: int = 5,
        max_workers: int = 8,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        marker_backoff: Backoff = MARKER_BACKOFF,
    ) -> None:
        super().__init__(table_name=table_name, client=client, max_workers=max_workers, clock=clock)
        self._marker_backoff = marker_backoff
        self._ledger = ledger_table_name
        self._ttl = marker_ttl_seconds
        self._max_receive_count = max_receive_count
        self._wall_clock = wall_clock

    lookup_guards = True  # nothing else tells a redriven message that was counted before

    def known_key(self, message: SensorMessage) -> str | None:
        """A redriven message's marker (a message never redriven cannot have one)."""
        return schema.tail_marker_id(message.sensor_id, message.origin_id) if message.redriven else None

    def lookup(self, messages: Sequence[SensorMessage], expired: Expired = None) -> Lookup:
        """The tail markers of the redriven messages, then the day items this container does not know."""
        found = Lookup()
        keys = sorted({key for m in messages if (key := self.known_key(m)) is not None})
        if keys and self._ledger:
            items = dynamo.batch_get(
                self._client,
                self._ledger,
                [schema.ledger_key(k) for k in keys],
                consistent=True,  # a marker written a moment ago must be seen: nothing else guards
                projection=[schema.LEDGER_KEY],
                expired=expired,
            )
            found.counted_before = {str(item[schema.LEDGER_KEY]["S"]) for item in items}
            found.requests += (len(keys) + 99) // 100
        return self.lookup_days(messages, found, expired)

    def identity(self, message: SensorMessage) -> Hashable:
        """One SQS message (a message delivered twice in one batch): its sequence number, within
        its queue and its message group (SQS promises numbers that grow within a group, not numbers
        that differ across groups)."""
        return (message.source, message.sensor_id, message.sequence)

    def last_chance(self, message: SensorMessage) -> bool:
        """Whether SQS may move ``message`` away after this receive (``maxReceiveCount - 1``
        receives or more, this one included): it is counted with its marker, in one transaction."""
        return bool(self._ledger) and message.receive_count >= self._max_receive_count - 1

    def marker_action(self, message: SensorMessage) -> dict[str, Any]:
        """The ``Put`` of ``message``'s marker (unconditional: a marker written twice is one)."""
        item = {
            **schema.ledger_key(schema.tail_marker_id(message.sensor_id, message.origin_id)),
            schema.EXPIRES_AT: {"N": str(int(self._wall_clock()) + self._ttl)},
            schema.MARKER_DAY: {"S": message.day},
            schema.MARKER_COUNT: {"N": str(message.count)},
        }
        return expressions.put({"TableName": self._ledger, "Item": item})

    def remember_settled(self, messages: Sequence[SensorMessage]) -> None:
        """A marker for each of these counted messages (see the class), each on its own: one that
        is refused (throttled) is tried again, up to ``MARKER_ATTEMPTS`` times, and one refused every
        time does not keep the others from being written; ``TransientFault`` names how many."""
        if not self._ledger:
            return
        unwritten = 0
        for message in messages:
            put = self.marker_action(message)["Put"]
            for attempt in range(self._marker_backoff.attempts):
                try:
                    dynamo.call("PutItem", partial(self._client.put_item, **put))
                    break
                except TransientFault:
                    if attempt + 1 == self._marker_backoff.attempts:
                        unwritten += 1
                    else:
                        self._marker_backoff.wait(attempt)
        if unwritten:
            raise TransientFault(f"{unwritten} of {len(messages)} markers could not be written")

    def count_group(self, group: Group) -> GroupOutcome:
        outcome = GroupOutcome()
        first, followers = leaders(group.messages, key=sequence_of)
        write = OrderedWrite(self, group.key, sorted(first, key=sequence_of), outcome)
        write.hours.missing = group.key in self.hourless
        try:  # each attempt succeeds, drops the applied messages, or advances the step
            write.run(max_attempts=len(first) + 3, start=self.first_step(group.missing))
        except TransientFault as fault:
            outcome.give_up(write.pending, fault)
        else:
            self.known_days.add([group.key])
            self.hourless.written(group.key)
        outcome.steps += write.steps
        settle_followers(followers, outcome, key=sequence_of)
        return outcome


class OrderedWrite(ThreeStepUpsert):
    """A group's guarded write through the three steps; ``pending``, sorted by sequence number,
    loses the messages each refusal shows were applied."""

    def __init__(
        self,
        counter: OrderedCounter,
        day: DayKey,
        pending: list[SensorMessage],
        outcome: GroupOutcome,
    ) -> None:
        super().__init__()
        self._counter = counter
        self._client = counter._client
        self._table = counter._table
        self._sensor_id, self._day = day
        self.pending = pending
        self._outcome = outcome
        self._source = pending[0].source if pending else ""
        self.hours = HoursWrite()

    def settled(self) -> bool:
        return not self.pending  # every message turned out to be applied already

    def create_if_missing(self) -> Answer:
        item = schema.day_item(self._sensor_id, self._day, self._total, hours_of(self.pending))
        item[schema.applied_sequence_name(self._source)] = {"S": self._last}
        params = {**expressions.put_if_absent(self._table, item), "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
        answer = self._send("Put", params)
        self._outcome.insert_refused = answer is Answer.AGAIN  # the day item was there (as it was, read back)
        return Answer.NEXT if answer is Answer.AGAIN else answer

    def update_if_exists(self) -> Answer:
        """The guarded ``ADD`` (steps 1 and 3 alike: an update after a race must still skip what
        the winner applied)."""
        names = {
            "#pk": schema.SENSOR_ID,
            "#count": schema.DATA_COUNT,
            "#applied": schema.applied_sequence_name(self._source),
            "#seq": schema.APPLIED_SEQUENCE,
            "#src": schema.SEQUENCE_SOURCE,
        }
        values = {
            ":n": {"N": str(self._total)},
            ":last": {"S": self._last},
            ":first": {"S": schema.sequence_text(sequence_of(self.pending[0]))},
            ":src": {"S": self._source},
        }
        hour_adds, hour_sets, hour_condition = self.hours.parts(hours_of(self.pending), names, values)
        params = {
            "TableName": self._table,
            "Key": schema.day_key(self._sensor_id, self._day),
            "UpdateExpression": update_expression(["#count :n", *hour_adds], ["#applied = :last", *hour_sets]),
            # this queue's own number, and the single pair the first release kept
            "ConditionExpression": "attribute_exists(#pk)"
            " AND (attribute_not_exists(#applied) OR #applied < :first)"
            " AND (attribute_not_exists(#seq) OR #src <> :src OR #seq < :first)"
            f" AND {hour_condition}",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        return self._send("Update", params)

    @property
    def _total(self) -> int:
        return sum(m.count for m in self.pending)

    @property
    def _last(self) -> str:
        return schema.sequence_text(sequence_of(self.pending[-1]))

    def _send(self, kind: str, params: dict[str, Any]) -> Answer:
        """The write alone; or, when a message of it may be on its last receive, in one transaction
        with those messages' markers, so that a commit whose answer is lost leaves them too."""
        self._outcome.requests += 1
        markers = [self._counter.marker_action(m) for m in self.pending if self._counter.last_chance(m)]
        if markers:
            old = self._transact({kind: params}, markers)
        elif kind == "Put":
            old = dynamo.conditional_write("PutItem", partial(self._client.put_item, **params))
        else:
            old = dynamo.conditional_write("UpdateItem", partial(self._client.update_item, **params))
        if old is None:
            self._outcome.counted.extend(self.pending)
            return Answer.DONE
        if not old:  # no day item yet
            return Answer.NEXT
        self.hours.saw(old)  # a day item from before hours: the next write creates its map
        applied = schema.applied_sequence_of_item(old, self._source)
        done = [m for m in self.pending if applied is not None and sequence_of(m) <= applied]
        self._outcome.duplicates.extend(done)
        self.pending = self.pending[len(done) :]  # sorted by sequence number: what was applied comes first
        return Answer.AGAIN

    def _transact(self, action: dict[str, Any], markers: list[dict[str, Any]]) -> dict[str, Any] | None:
        """``None`` once committed; else the day item as the count's action found it (``{}``: none)."""
        refusals = dynamo.transact_refusals(self._client, [action, *markers])
        if refusals is None:
            return None
        codes = [r.code for r in refusals]
        fault = dynamo.cancellation_fault(codes, [r.message for r in refusals])
        if fault is not None or codes[0] != dynamo.CONDITIONAL_CHECK_FAILED:
            raise fault or TransientFault(f"transaction cancelled (unexpected): {', '.join(codes)}")
        return refusals[0].item
