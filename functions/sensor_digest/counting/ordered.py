"""Ordered mode (``QUEUE_TYPE=fifo``): no ledger; the day item remembers the last sequence number
applied to it.

SQS numbers a message group's messages in increasing order, each sensor is one group, and Lambda
hands a group over in order and holds back its later messages while one is retried. So a day item
can remember the highest sequence number applied to it, and one ``UpdateItem`` counts a group on
condition that its first number is above that one: ``ADD`` the group's count, ``SET`` its last
number. Numbers of two queues do not compare, and while CloudFormation replaces the queue both
deliver, so the day item keeps one number per queue (``AppliedSequence#<queue ARN>``, the queue
being the message's ``source``; the single pair ordered mode's first release kept is rewritten so by
``sensor-digest migrate sequences`` before an upgrade). When the condition fails, the item as
it was (``ReturnValuesOnConditionCheckFailure=ALL_OLD``) says what was applied: those messages are
duplicates, the rest are written on the same condition. A missing day item takes the same three
steps, the insert carrying the sequence number too. The writes, with the group's hours, are built by
``store/day_writes.py`` (its ``AfterSequence`` guard: ``store/guards.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sensor_digest.backoff import Backoff
from sensor_digest.counting.base import DayWrite, Expired, ImportedRows, TableCounter
from sensor_digest.counting.outcomes import Group, GroupOutcome, Lookup, leaders, share_leaders_fate, write_chunks
from sensor_digest.errors import StoreFault, TransientFault
from sensor_digest.messages import SensorMessage
from sensor_digest.store import day_writes, schema
from sensor_digest.store.day_store import Action, Refused
from sensor_digest.store.day_view import DayKey, DayView, Kind, applied_sequence_of, view_of
from sensor_digest.store.guards import AfterSequence
from sensor_digest.store.tally import Tally
from sensor_digest.upsert import Answer

MARKER_ATTEMPTS = 3
MARKER_BACKOFF = Backoff(attempts=MARKER_ATTEMPTS, base_seconds=0.05)
"""How often a marker's ``PutItem`` is tried before the message is left without one."""


def sequence_of(message: SensorMessage) -> int:
    """A FIFO message's SQS sequence number."""
    if message.sequence is None:
        raise TransientFault("a FIFO message without its sequence number reached the ordered counter")
    return message.sequence


@dataclass(eq=False, kw_only=True)
class OrderedCounter(TableCounter):
    """``QUEUE_TYPE=fifo``: one conditional ``UpdateItem`` per sensor-day group, guarded by the
    sequence number of the queue the group came from.

    The sequence number cannot follow a message through the dead-letter queue: a redrive sends it
    again, with a new number. So a message that ended counted but may still come back leaves a
    marker in the ledger (``FIFO#<sensor_id>#<messageId>``, ``remember_counted``): one listed
    behind a failed message of its group, and one SQS has handed out before (its delete or its
    answer was lost once, and may be again). On its last receives (``maxReceiveCount - 1`` and
    more: one more without a delete and SQS moves it away) a message is counted with its marker in
    one transaction, so that a commit whose answer is lost leaves the marker too. A redriven
    message (one whose origin is another message) is looked up there first: found, it is a
    duplicate. The markers cost nothing while nothing fails: only such a message writes one, only a
    redriven message reads one."""

    marker_ttl_seconds: int = 0
    max_receive_count: int = 5
    wall_clock: Callable[[], float] = time.time
    marker_backoff: Backoff = MARKER_BACKOFF
    imported: ImportedRows = field(init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.imported = ImportedRows(self.store)

    lookup_guards = True  # nothing else tells a redriven message that was counted before

    def known_key(self, message: SensorMessage) -> str | None:
        """A redriven message's marker (a message never redriven cannot have one)."""
        return schema.tail_marker_id(message.sensor_id, message.origin_id) if message.redriven else None

    def lookup(self, messages: Sequence[SensorMessage], expired: Expired = None) -> Lookup:
        """The tail markers of the redriven messages, then the day items this container does not know."""
        found = Lookup()
        keys = sorted({key for m in messages if (key := self.known_key(m)) is not None})
        if keys and self.store.ledger:
            # strongly consistent: a marker written a moment ago must be seen, nothing else guards
            items = self.store.find_ledger([schema.ledger_key(k) for k in keys], found, keys_only=True, expired=expired)
            found.counted_before = set(items)
        return self.lookup_days(messages, found, expired)

    def identity(self, message: SensorMessage) -> Hashable:
        """One SQS message (a message delivered twice in one batch): its sequence number, within
        its queue and its message group (SQS promises numbers that grow within a group, not numbers
        that differ across groups)."""
        return (message.source, message.sensor_id, message.sequence)

    def last_chance(self, message: SensorMessage) -> bool:
        """Whether SQS may move ``message`` away after this receive (``maxReceiveCount - 1``
        receives or more, this one included): it is counted with its marker, in one transaction."""
        return bool(self.store.ledger) and message.receive_count >= self.max_receive_count - 1

    def marker_action(self, message: SensorMessage) -> Action:
        """The ``Put`` of ``message``'s marker (unconditional: a marker written twice is one)."""
        key = schema.tail_marker_id(message.sensor_id, message.origin_id)
        expires = int(self.wall_clock()) + self.marker_ttl_seconds
        params = day_writes.marker(
            self.store.ledger, key, day=message.day, count=message.count, expires_at=expires, if_absent=False
        )
        return Action.put(params)

    def remember_counted(self, messages: Sequence[SensorMessage]) -> None:
        """A marker for each of these counted messages (see the class), each on its own: one that
        is refused (throttled) is tried again, up to ``MARKER_ATTEMPTS`` times, and one refused every
        time does not keep the others from being written; ``TransientFault`` names how many."""
        if not self.store.ledger:
            return
        unwritten = 0
        for message in messages:
            put = self.marker_action(message).params
            for attempt in range(self.marker_backoff.attempts):
                try:
                    self.store.put(put)
                    break
                except StoreFault:  # any failure, a refusal too: tried again, then named unwritten
                    if attempt + 1 == self.marker_backoff.attempts:
                        unwritten += 1
                    else:
                        self.marker_backoff.wait(attempt)
        if unwritten:
            raise TransientFault(f"{unwritten} of {len(messages)} markers could not be written")

    def count_group(self, group: Group) -> GroupOutcome:
        outcome = GroupOutcome()
        first, followers = leaders(group.messages, key=sequence_of)
        ordered, view = sorted(first, key=sequence_of), self.view(group)
        for chunk in write_chunks(ordered, len(ordered), identities=False):  # in sequence order, one after another
            write = OrderedWrite(self, group.key, chunk, outcome, view)
            try:  # each attempt succeeds, drops the applied messages, or advances the step
                write.run(max_attempts=len(chunk) + 3, start=self.first_step(view.kind is Kind.MISSING))
            except StoreFault as fault:
                ended = {m.message_id for m in outcome.counted + outcome.duplicates}
                outcome.give_up([m for m in ordered if m.message_id not in ended], fault)
                break
            finally:
                outcome.steps += write.steps
            view = write.view
            self.known_days.add([group.key], view)
        share_leaders_fate(followers, outcome, key=sequence_of)
        return outcome


class OrderedWrite(DayWrite):
    """A group's guarded write through the three steps; ``pending``, sorted by sequence number,
    loses the messages each refusal shows were applied."""

    def __init__(
        self,
        counter: OrderedCounter,
        day: DayKey,
        pending: list[SensorMessage],
        outcome: GroupOutcome,
        view: DayView,
    ) -> None:
        super().__init__(counter.store, day, outcome, view)
        self._counter = counter
        self.pending = pending
        self._source = pending[0].source if pending else ""

    def nothing_left(self) -> bool:
        return not self.pending  # every message turned out to be applied already

    def create_if_missing(self) -> Answer:
        params = day_writes.create(
            self._store.table, self._day, Tally.of(self.pending), sequence=(self._source, sequence_of(self.pending[-1]))
        )
        answer = self._send("Put", params)
        self._outcome.insert_refused = answer is Answer.AGAIN  # the day item was there (as it was, read back)
        return Answer.NEXT if answer is Answer.AGAIN else answer

    def update_if_exists(self) -> Answer:
        """The guarded ``ADD`` (steps 1 and 3 alike: an update after a race must still skip what
        the winner applied)."""
        left = self._counter.imported.drop(self._day, self.view, self.pending, self._outcome)
        if len(left) < len(self.pending):  # rows the history import counted on the day: counted already
            self.pending = left
            return Answer.AGAIN
        first, last = sequence_of(self.pending[0]), sequence_of(self.pending[-1])
        guard = AfterSequence(self._source, first, last)
        tally, view = Tally.of(self.pending), self.view
        imports = view.imports.seq if any(m.named for m in self.pending) else None
        params = day_writes.update(
            self._store.table, self._day, tally, view.hours, guard, readings=view.readings, imports=imports
        )
        return self._send("Update", params)

    def _send(self, kind: str, params: dict[str, Any]) -> Answer:
        """The write alone; or, when a message of it may be on its last receive, in one transaction
        with those messages' markers, so that a commit whose answer is lost leaves them too."""
        markers = [self._counter.marker_action(m) for m in self.pending if self._counter.last_chance(m)]
        try:
            self._store.write([Action(kind, params), *markers], self._outcome)
        except Refused as refused:
            if not refused.failed(0):  # only the count's action has a condition
                codes = ", ".join(r.code for r in refused.refusals)
                raise TransientFault(f"transaction cancelled (unexpected): {codes}") from None
            old = refused.item
        else:
            self.view = self.view.written(Tally.of(self.pending))
            self._outcome.counted.extend(self.pending)
            return Answer.DONE
        if not old:  # no day item yet
            return Answer.NEXT
        self.view = view_of(old, identities=False)  # its hours map, its readings: the next write rests on them
        applied = applied_sequence_of(old, self._source)
        done = [m for m in self.pending if applied is not None and sequence_of(m) <= applied]
        self._outcome.duplicates.extend(done)
        self.pending = self.pending[len(done) :]  # sorted by sequence number: what was applied comes first
        return Answer.AGAIN
