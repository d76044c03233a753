"""Exactly once on a standard queue: a ledger marker per message, in the same transaction as the
count it contributed to.

Each sensor-day group is one ``TransactWriteItems`` (or one per 99 messages): the count change,
plus one marker per message (``MSG#<sensor_id>#<event_id>`` on ``attribute_not_exists``). A
redelivered message finds its marker and is dropped, never counted twice. The count change walks
update -> insert -> update (``upsert.py``):

1. ``ADD`` to the day's count on condition that the day item exists (in the transaction);
2. when the day item is missing (a read found it missing, or step 1 was cancelled for it): create
   it, empty (its key alone, no ``DataCount``), with a single-item ``PutItem`` on condition that it
   does not exist yet, outside the transaction. Two invocations that both start a new day race
   here, where the loser pays one write unit, not its whole transaction. An item without
   ``DataCount`` counts as no day for every reader, and the stream filter keeps it from the summary;
3. ``ADD`` without condition (in the transaction): the item exists now, whoever created it.

What each transaction costs is what it writes, and a cancelled one is charged in full, so the
writes are arranged so that few are cancelled:

- a batch is written in two waves (``waves``): first the first deliveries (``ApproximateReceiveCount``
  1, not redriven), then the others. A first delivery's identity has never been counted unless its
  producer sent it twice, so it is not looked up (a producer's repeat is caught by its marker's
  condition). A redelivery may have been counted already (the first copy's answer was lost, or it
  is still in flight in another invocation), so it is looked up, with a strongly consistent read,
  only once every first delivery of the batch is written, and written in transactions of its own:
  a redelivery counted meanwhile cancels the redeliveries' transaction, never a group of first
  deliveries;
- a transaction cancelled because another one held its day item (``TransactionConflict``) is
  deferred to the end of the batch in the first pass (``GroupOutcome.deferred``); at the end it is
  retried inside the invocation (``RetryPolicy``), and a group that still cannot be written fails,
  to be redelivered. A duplicate marker (a message counted meanwhile) drops that message and the
  rest is tried again; anything else ends the group as a failure.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sensor_digest.counting.base import DayKey, GroupOutcome, Lookup, TableCounter, leaders, settle_followers
from sensor_digest.errors import Contention, TransientFault
from sensor_digest.messages import SensorMessage
from sensor_digest.store import dynamo, expressions, schema
from sensor_digest.upsert import Answer, ThreeStepUpsert, UpsertStep

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

MAX_TRANSACTION_ACTIONS = 100
MARKERS_PER_TRANSACTION = MAX_TRANSACTION_ACTIONS - 1  # one action is the count change


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of a transaction cancelled by contention, inside the invocation: jittered
    exponential backoff, at most ``attempts`` times and never past the invocation's deadline.

    The transaction that won holds its items for about as long as ours took to be refused, so the
    backoff starts from that duration (``floor``) when it is longer than ``base_seconds``, and
    waits between half and all of its span: a retry sooner than that would only meet the same
    transaction again, and every cancelled attempt is charged."""

    attempts: int = 10
    base_seconds: float = 0.025
    cap_seconds: float = 1.0

    def delay(self, retry: int, floor: float = 0.0) -> float:
        span = min(self.cap_seconds, max(self.base_seconds, floor) * 2**retry)
        return random.uniform(span / 2, span)  # noqa: S311 - jitter


class Deferred(Exception):
    """A contended transaction handed back to be written at the end of the batch."""


def _ledger_key(message: SensorMessage) -> Hashable:
    return message.ledger_key


class LedgerCounter(TableCounter):
    """``DELIVERY_MODE=exactly-once`` on a standard queue: the count and one marker per message in
    one transaction per sensor-day group."""

    def __init__(
        self,
        *,
        table_name: str,
        ledger_table_name: str,
        client: DynamoDBClient,
        marker_ttl_seconds: int,
        max_workers: int = 8,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """``retry``: how often a contended transaction is tried again inside the invocation, once
        it has been deferred to the end of the batch (``RetryPolicy(attempts=0)``: never; the group
        is redelivered)."""
        super().__init__(table_name=table_name, client=client, max_workers=max_workers, clock=clock)
        self._ledger = ledger_table_name
        self._ttl = marker_ttl_seconds
        self._wall_clock = wall_clock
        self._retry = retry or RetryPolicy()
        self._sleep = sleep

    def identity(self, message: SensorMessage) -> Hashable:
        """One sensor, one ``event_id``: one report."""
        return message.ledger_key

    def known_key(self, message: SensorMessage) -> str:
        return message.ledger_key

    @staticmethod
    def redelivered(message: SensorMessage) -> bool:
        """Whether ``message`` may have been counted before: SQS handed it out before, or it came back
        from the dead-letter queue. A first delivery cannot have a marker unless its producer sent
        the report twice."""
        return message.receive_count > 1 or message.redriven

    def waves(self, messages: Sequence[SensorMessage]) -> list[list[SensorMessage]]:
        """First deliveries, then redeliveries (see the module)."""
        return [[m for m in messages if not self.redelivered(m)], [m for m in messages if self.redelivered(m)]]

    def lookup(self, messages: Sequence[SensorMessage]) -> Lookup:
        """The markers of this wave's redeliveries (a strongly consistent read: a first copy may
        have been counted a moment ago), then the day items of the remaining groups that this
        container does not know to exist."""
        found = Lookup()
        keys = [schema.ledger_key(k) for k in sorted({m.ledger_key for m in messages if self.redelivered(m)})]
        if keys:
            items = dynamo.batch_get(self._client, self._ledger, keys, consistent=True, projection=[schema.LEDGER_KEY])
            found.counted_before = {str(item[schema.LEDGER_KEY]["S"]) for item in items}
            found.requests += (len(keys) + 99) // 100
        return self.lookup_days(messages, found)

    def count_group(
        self,
        sensor_id: int,
        day: str,
        messages: Sequence[SensorMessage],
        deadline: float | None,
        *,
        missing: bool,
        may_defer: bool = False,
    ) -> GroupOutcome:
        """Count one group, ``MARKERS_PER_TRANSACTION`` messages a transaction. A contended
        transaction is handed back (``deferred``, with the rest of the group) when ``may_defer``,
        else retried while ``deadline`` allows: none is started that could not end before it;
        without a deadline, contention is not retried here."""
        outcome = GroupOutcome()
        first, followers = leaders(messages, key=_ledger_key)
        for start in range(0, len(first), MARKERS_PER_TRANSACTION):
            chunk = first[start : start + MARKERS_PER_TRANSACTION]
            step = self.first_step(missing) if start == 0 else UpsertStep.UPDATE_IF_EXISTS  # the first made it
            try:
                self._count_chunk(sensor_id, day, chunk, outcome, deadline=deadline, first=step, may_defer=may_defer)
            except Deferred:  # the chunk's duplicates found so far stay found; the rest waits, repeats too
                handed_back = {m.ledger_key for m in first[start:]} - {m.ledger_key for m in outcome.duplicates}
                outcome.deferred = [m for m in messages if m.ledger_key in handed_back]
                followers = {k: v for k, v in followers.items() if k not in handed_back}
                break
            except TransientFault as fault:
                outcome.give_up(first[start:], fault)
                break
        settle_followers(followers, outcome, key=_ledger_key)
        return outcome

    def _count_chunk(
        self,
        sensor_id: int,
        day: str,
        chunk: list[SensorMessage],
        outcome: GroupOutcome,
        *,
        deadline: float | None,
        first: UpsertStep,
        may_defer: bool,
    ) -> None:
        write = LedgerWrite(self, (sensor_id, day), chunk, outcome)
        for retry in range(self._retry.attempts + 1):
            started = time.monotonic()
            try:  # each attempt succeeds, drops at least one duplicate, or advances the step
                write.run(max_attempts=len(chunk) + 3, start=first)
                self.known_days.add([(sensor_id, day)])
                return
            except Contention:  # nothing was written: later, or again if time allows
                first = write.step  # an empty day item it created stays created
                if may_defer:
                    raise Deferred from None
                delay = self._retry.delay(retry, floor=time.monotonic() - started)
                if deadline is None or retry == self._retry.attempts or time.monotonic() + delay >= deadline:
                    raise
                outcome.retries += 1
                self._sleep(delay)
            finally:
                outcome.steps += write.steps
                write.steps = []

    def create_day(self, key: dict[str, Any]) -> None:
        """Step 2: the day item, empty, unless it exists (or a transaction is writing it)."""
        dynamo.create_unless_present(self._client, expressions.put_if_absent(self._table, key))

    def marker_action(self, message: SensorMessage) -> dict[str, Any]:
        """The message's marker: put on condition that it does not exist yet."""
        item = {
            **schema.ledger_key(message.ledger_key),
            schema.EXPIRES_AT: {"N": str(int(self._wall_clock()) + self._ttl)},
            schema.MARKER_DAY: {"S": message.day},
            schema.MARKER_COUNT: {"N": str(message.count)},
        }
        return expressions.put(expressions.put_if_absent(self._ledger, item, schema.LEDGER_KEY))

    def transact(self, count_action: dict[str, Any], pending: list[SensorMessage]) -> list[str] | None:
        """The count change and the markers of ``pending`` in one transaction: ``None`` once
        committed, else the cancellation code of each action."""
        return dynamo.transact(self._client, [count_action, *(self.marker_action(m) for m in pending)])


class LedgerWrite(ThreeStepUpsert):
    """One transaction's worth of a group (the count change and its markers), through the three steps."""

    def __init__(self, counter: LedgerCounter, day: DayKey, chunk: list[SensorMessage], outcome: GroupOutcome) -> None:
        super().__init__()
        self._counter = counter
        self._table = counter._table
        self._key = schema.day_key(*day)
        self._item = day
        self._pending = list(chunk)
        self._outcome = outcome

    def settled(self) -> bool:
        return not self._pending  # every message of the chunk turned out to be a duplicate

    def update_if_exists(self) -> Answer:
        return self._send(
            expressions.update(expressions.add_count(self._table, self._key, self._total, only_if_exists=True))
        )

    def create_if_missing(self) -> Answer:
        self._outcome.requests += 1
        self._counter.create_day(self._key)
        return Answer.NEXT  # created, or somebody else's: step 3 adds to it either way

    def update_after_race(self) -> Answer:
        return self._send(
            expressions.update(expressions.add_count(self._table, self._key, self._total, only_if_exists=False))
        )

    @property
    def _total(self) -> int:
        return sum(m.count for m in self._pending)

    def _send(self, count_action: dict[str, Any]) -> Answer:
        self._outcome.requests += 1
        codes = self._counter.transact(count_action, self._pending)
        if codes is None:
            self._outcome.counted.extend(self._pending)
            return Answer.DONE
        self._pending = self._drop_duplicates(codes)
        return Answer.NEXT if codes[0] == dynamo.CONDITIONAL_CHECK_FAILED else Answer.AGAIN

    def _drop_duplicates(self, codes: list[str]) -> list[SensorMessage]:
        """Read a cancellation: a marker that exists is a duplicate, dropped; a fault ends the group."""
        if len(codes) != 1 + len(self._pending):
            raise TransientFault(f"transaction cancelled without a reason per action: {codes}")
        fault = dynamo.cancellation_fault(codes)
        if fault is not None:
            raise fault
        remaining: list[SensorMessage] = []
        for message, code in zip(self._pending, codes[1:], strict=True):
            (self._outcome.duplicates if code == dynamo.CONDITIONAL_CHECK_FAILED else remaining).append(message)
        return remaining
