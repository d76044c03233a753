"""Day counting: one sensor-day group of messages becomes one write (or a few, past 99 messages).

``exactly-once``: each transaction holds the count change plus one ledger marker per message
(``attribute_not_exists``), so a redelivered message finds its marker and is dropped, never
counted twice. The count change follows update -> insert -> update (``upsert.py``):

1. ``ADD`` to the day's count on condition that the day item exists;
2. when step 1 was cancelled because the item is missing: put the item on condition that it
   still does not exist;
3. when step 2 was cancelled because another writer inserted first: ``ADD`` without condition.

Why a transaction was cancelled is read from ``CancellationReasons`` (one reason per action, in
action order): a marker that already exists is a duplicate, dropped from the group; a missing
or present day item moves to the next step; anything retryable ends the group as a failure.

``at-least-once``: the same three steps as plain ``UpdateItem``/``PutItem`` calls, no markers.

``QUEUE_TYPE=fifo`` (ordered): no ledger. SQS numbers a message group's messages in increasing
order, each sensor is one group, and Lambda hands a group over in order and holds back its later
messages while one is retried. So a day item can remember the highest sequence number applied to
it, and one ``UpdateItem`` counts a group on condition that its first number is above that one:
``ADD`` the group's count, ``SET`` its last number. Numbers of two queues do not compare, and
while CloudFormation replaces the queue both deliver, so the day item keeps one number per queue
(``AppliedSequence#<queue ARN>``); the condition also honours the single pair
(``AppliedSequence``, ``SequenceSource``) that earlier versions kept. When the
condition fails, the item as it was (``ReturnValuesOnConditionCheckFailure=ALL_OLD``) says what
was applied: those messages are duplicates, the rest are written on the same condition. A missing
day item takes the same three steps, the insert carrying the sequence number too.

Before any write, ``lookup`` reads what the batch needs to know (eventually consistent
``BatchGetItem``s, half a read unit per key): the markers that exist already (those messages are
duplicates, and need no transaction to find out), and the day items that do not exist yet, which
start at step 2: step 1 on a missing day item is a cancelled transaction, charged for every one
of its markers. Day items this container wrote or saw are remembered (``KnownDays``), so a
sensor-day is read once per container, not once per batch. A stale read costs only the write it
would have saved; correctness rests on the writes' conditions alone.
"""

from __future__ import annotations

import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from sensor_digest import upsert
from sensor_digest.config import DeliveryMode, QueueType
from sensor_digest.errors import Contention, TransientFault
from sensor_digest.messages import SensorMessage
from sensor_digest.store import dynamo, schema
from sensor_digest.upsert import Answer, UpsertStep

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

MAX_TRANSACTION_ACTIONS = 100
KNOWN_DAYS_KEPT = 100_000  # sensor-days remembered per container as existing (about 15 MB at most)
MARKERS_PER_TRANSACTION = MAX_TRANSACTION_ACTIONS - 1  # one action is the count change


STEP_LABELS = {
    UpsertStep.UPDATE_IF_EXISTS: "update",
    UpsertStep.CREATE_IF_MISSING: "insert",
    UpsertStep.UPDATE_AFTER_RACE: "update-again",
}


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


@dataclass
class GroupOutcome:
    """What became of each message of one sensor-day group."""

    counted: list[SensorMessage] = field(default_factory=list)
    duplicates: list[SensorMessage] = field(default_factory=list)
    failed: list[SensorMessage] = field(default_factory=list)
    reason: str | None = None
    requests: int = 0
    steps: list[str] = field(default_factory=list)
    retries: int = 0


@dataclass
class Lookup:
    """What the reads before a batch's writes found: ledger keys already counted, sensor-days
    whose day item does not exist yet, and the requests it took."""

    counted_before: set[str] = field(default_factory=set)
    missing_days: set[tuple[int, str]] = field(default_factory=set)
    requests: int = 0


class KnownDays:
    """Sensor-days known to have their day item (day items are never deleted), least recently
    used forgotten past ``limit``; shared by the threads of a container."""

    def __init__(self, limit: int = KNOWN_DAYS_KEPT) -> None:
        self._days: OrderedDict[tuple[int, str], None] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def add(self, days: Iterable[tuple[int, str]]) -> None:
        with self._lock:
            for day in days:
                self._days[day] = None
                self._days.move_to_end(day)
            while len(self._days) > self._limit:
                self._days.popitem(last=False)

    def unknown(self, days: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
        with self._lock:
            return sorted(d for d in set(days) if d not in self._days)


class DayCounter:
    """Writes sensor-day groups to the digest table (and the ledger, in ``exactly-once``)."""

    def __init__(
        self,
        *,
        table_name: str,
        ledger_table_name: str,
        client: DynamoDBClient,
        mode: DeliveryMode = DeliveryMode.EXACTLY_ONCE,
        marker_ttl_seconds: int,
        clock: Callable[[], float] = time.time,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        queue_type: QueueType = QueueType.STANDARD,
    ) -> None:
        self._table = table_name
        self._ordered = queue_type is QueueType.FIFO
        self._ledger = ledger_table_name
        self._client = client
        self._mode = mode
        self._ttl = marker_ttl_seconds
        self._clock = clock
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self.known_days = KnownDays()

    def count_group(
        self,
        sensor_id: int,
        day: str,
        messages: Sequence[SensorMessage],
        deadline: float | None = None,
        *,
        missing: bool = False,
        source: str = "",
    ) -> GroupOutcome:
        """Count one group; never raises for a write failure (it lands in ``failed``).

        ``deadline`` (``time.monotonic()``) bounds the retries of a contended transaction: none is
        started that could not end before it; without one, contention is not retried here.
        ``missing``: a read found no day item, so the first write starts at the insert.
        ``source``: on a FIFO queue, the queue the messages' sequence numbers belong to.
        """
        outcome = GroupOutcome()
        first = UpsertStep.CREATE_IF_MISSING if missing else UpsertStep.UPDATE_IF_EXISTS
        if self._ordered:
            self._count_ordered(sensor_id, day, messages, outcome, first=first, source=source)
            return outcome
        if self._mode is DeliveryMode.AT_LEAST_ONCE:
            self._count_plain(sensor_id, day, messages, outcome, first)
            return outcome
        leaders, followers = _leaders(messages, key=lambda m: m.ledger_key)
        for start in range(0, len(leaders), MARKERS_PER_TRANSACTION):
            chunk = leaders[start : start + MARKERS_PER_TRANSACTION]
            step = first if start == 0 else UpsertStep.UPDATE_IF_EXISTS  # the first chunk made the item
            try:
                self._count_chunk(sensor_id, day, chunk, outcome, deadline, first=step)
            except TransientFault as fault:
                outcome.failed.extend(leaders[start:])
                outcome.reason = fault.reason
                break
        _settle_followers(followers, outcome, key=lambda m: m.ledger_key)
        return outcome

    def identity(self, message: SensorMessage) -> Hashable | None:
        """What makes two messages of a batch one report: the ledger key in ``exactly-once`` (one
        sensor, one ``event_id``), the sequence number in ordered mode (one SQS message); ``None``
        in ``at-least-once``, where every message counts."""
        if self._ordered:
            return message.sequence
        return message.ledger_key if self._mode is DeliveryMode.EXACTLY_ONCE else None

    def lookup(self, messages: Sequence[SensorMessage]) -> Lookup:
        """Before a batch's writes (see the module's docstring): the ledger keys of these messages
        already in the ledger (``exactly-once`` only), then the day items of the remaining groups
        that this container does not know to exist. Eventually consistent: a marker or day item
        written a moment ago may be missed, which costs only the write that then finds it."""
        found = Lookup()
        if self._mode is DeliveryMode.EXACTLY_ONCE and not self._ordered and messages:
            keys = [schema.ledger_key(k) for k in sorted({m.ledger_key for m in messages})]
            items = dynamo.batch_get(self._client, self._ledger, keys, consistent=False, projection=[schema.LEDGER_KEY])
            found.counted_before = {str(item[schema.LEDGER_KEY]["S"]) for item in items}
            found.requests += (len(keys) + 99) // 100
        days = self.known_days.unknown(
            (m.sensor_id, m.day) for m in messages if m.ledger_key not in found.counted_before
        )
        if days:
            keys = [schema.day_key(sensor, day) for sensor, day in days]
            items = dynamo.batch_get(
                self._client, self._table, keys, consistent=False, projection=[schema.SENSOR_ID, schema.DATE]
            )
            present = {(schema.sensor_of_item(item), str(item[schema.DATE]["S"])) for item in items}
            self.known_days.add(present)
            found.missing_days = set(days) - present
            found.requests += (len(keys) + 99) // 100
        return found

    # -- exactly-once ---------------------------------------------------------------------

    def _count_chunk(
        self,
        sensor_id: int,
        day: str,
        chunk: list[SensorMessage],
        outcome: GroupOutcome,
        deadline: float | None,
        *,
        first: UpsertStep,
    ) -> None:
        pending = list(chunk)

        def attempt(step: UpsertStep) -> Answer:
            nonlocal pending
            if not pending:  # every message of the chunk turned out to be a duplicate
                return Answer.DONE
            actions = [self._count_action(step, sensor_id, day, sum(m.count for m in pending))]
            actions += [self._marker_action(m) for m in pending]
            outcome.requests += 1
            outcome.steps.append(STEP_LABELS[step])
            codes = dynamo.transact(self._client, actions)
            if codes is None:
                outcome.counted.extend(pending)
                return Answer.DONE
            pending = _drop_duplicates(codes, pending, outcome)
            return Answer.NEXT if codes[0] == dynamo.CONDITIONAL_CHECK_FAILED else Answer.AGAIN

        for retry in range(self._retry.attempts + 1):
            started = time.monotonic()
            try:  # each attempt succeeds, drops at least one duplicate, or advances the step
                upsert.run(attempt, max_attempts=len(chunk) + 3, start=first)
                self.known_days.add([(sensor_id, day)])
                return
            except Contention:  # nothing was written: try again, if time allows
                delay = self._retry.delay(retry, floor=time.monotonic() - started)
                if deadline is None or retry == self._retry.attempts or time.monotonic() + delay >= deadline:
                    raise
                outcome.retries += 1
                self._sleep(delay)

    def _count_action(self, step: UpsertStep, sensor_id: int, day: str, total: int) -> dict[str, Any]:
        if step is UpsertStep.CREATE_IF_MISSING:
            return {
                "Put": {
                    "TableName": self._table,
                    "Item": schema.day_item(sensor_id, day, total),
                    "ConditionExpression": "attribute_not_exists(#pk)",
                    "ExpressionAttributeNames": {"#pk": schema.SENSOR_ID},
                }
            }
        update: dict[str, Any] = {
            "TableName": self._table,
            "Key": schema.day_key(sensor_id, day),
            "UpdateExpression": "ADD #count :n",
            "ExpressionAttributeNames": {"#count": schema.DATA_COUNT},
            "ExpressionAttributeValues": {":n": {"N": str(total)}},
        }
        if step is UpsertStep.UPDATE_IF_EXISTS:
            update["ConditionExpression"] = "attribute_exists(#pk)"
            update["ExpressionAttributeNames"]["#pk"] = schema.SENSOR_ID
        return {"Update": update}

    def _marker_action(self, message: SensorMessage) -> dict[str, Any]:
        return {
            "Put": {
                "TableName": self._ledger,
                "Item": {
                    **schema.ledger_key(message.ledger_key),
                    schema.EXPIRES_AT: {"N": str(int(self._clock()) + self._ttl)},
                    schema.MARKER_DAY: {"S": message.day},
                    schema.MARKER_COUNT: {"N": str(message.count)},
                },
                "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": {"#pk": schema.LEDGER_KEY},
            }
        }

    # -- ordered (FIFO) ------------------------------------------------------------------------

    def _count_ordered(
        self,
        sensor_id: int,
        day: str,
        messages: Sequence[SensorMessage],
        outcome: GroupOutcome,
        *,
        first: UpsertStep,
        source: str,
    ) -> None:
        leaders, followers = _leaders(messages, key=_sequence)  # a message delivered twice in one batch
        pending = sorted(leaders, key=_sequence)

        def attempt(step: UpsertStep) -> Answer:
            nonlocal pending
            if not pending:  # every message turned out to be applied already
                return Answer.DONE
            outcome.requests += 1
            outcome.steps.append(STEP_LABELS[step])
            call, action, params = self._ordered_write(step, sensor_id, day, pending, source)
            old = dynamo.conditional_write(action, partial(call, **params))
            if old is None:
                outcome.counted.extend(pending)
                return Answer.DONE
            if not old:  # no day item yet
                return Answer.NEXT
            applied = schema.applied_sequence_of_item(old, source)
            done = [m for m in pending if applied is not None and _sequence(m) <= applied]
            outcome.duplicates.extend(done)
            pending = pending[len(done) :]  # sorted by sequence number: what was applied comes first
            return Answer.NEXT if step is UpsertStep.CREATE_IF_MISSING else Answer.AGAIN

        try:  # each attempt succeeds, drops the applied messages, or advances the step
            upsert.run(attempt, max_attempts=len(pending) + 3, start=first)
        except TransientFault as fault:
            outcome.failed.extend(pending)
            outcome.reason = fault.reason
        else:
            self.known_days.add([(sensor_id, day)])
        _settle_followers(followers, outcome, key=_sequence)

    def _ordered_write(
        self, step: UpsertStep, sensor_id: int, day: str, pending: list[SensorMessage], source: str
    ) -> tuple[Callable[..., Any], str, dict[str, Any]]:
        """The conditional write of one step: the insert, or the guarded ``ADD`` (steps 1 and 3
        alike: an update after a race must still skip what the winner applied)."""
        total = sum(m.count for m in pending)
        last = schema.sequence_text(_sequence(pending[-1]))
        if step is UpsertStep.CREATE_IF_MISSING:
            item = schema.day_item(sensor_id, day, total)
            item[schema.applied_sequence_name(source)] = {"S": last}
            return (
                self._client.put_item,
                "PutItem",
                {
                    "TableName": self._table,
                    "Item": item,
                    "ConditionExpression": "attribute_not_exists(#pk)",
                    "ExpressionAttributeNames": {"#pk": schema.SENSOR_ID},
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                },
            )
        return (
            self._client.update_item,
            "UpdateItem",
            {
                "TableName": self._table,
                "Key": schema.day_key(sensor_id, day),
                "UpdateExpression": "ADD #count :n SET #applied = :last",
                # this queue's own number, and the single pair earlier versions kept
                "ConditionExpression": "attribute_exists(#pk)"
                " AND (attribute_not_exists(#applied) OR #applied < :first)"
                " AND (attribute_not_exists(#seq) OR #src <> :src OR #seq < :first)",
                "ExpressionAttributeNames": {
                    "#pk": schema.SENSOR_ID,
                    "#count": schema.DATA_COUNT,
                    "#applied": schema.applied_sequence_name(source),
                    "#seq": schema.APPLIED_SEQUENCE,
                    "#src": schema.SEQUENCE_SOURCE,
                },
                "ExpressionAttributeValues": {
                    ":n": {"N": str(total)},
                    ":last": {"S": last},
                    ":first": {"S": schema.sequence_text(_sequence(pending[0]))},
                    ":src": {"S": source},
                },
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            },
        )

    # -- at-least-once --------------------------------------------------------------------

    def _count_plain(
        self, sensor_id: int, day: str, messages: Sequence[SensorMessage], outcome: GroupOutcome, first: UpsertStep
    ) -> None:
        total = sum(m.count for m in messages)

        def attempt(step: UpsertStep) -> Answer:
            outcome.requests += 1
            outcome.steps.append(STEP_LABELS[step])
            action = self._count_action(step, sensor_id, day, total)
            if "Put" in action:
                refused = dynamo.conditional_write("PutItem", partial(self._client.put_item, **action["Put"]))
            else:
                refused = dynamo.conditional_write("UpdateItem", partial(self._client.update_item, **action["Update"]))
            return Answer.DONE if refused is None else Answer.NEXT

        try:
            upsert.run(attempt, max_attempts=3, start=first)
        except TransientFault as fault:
            outcome.failed.extend(messages)
            outcome.reason = fault.reason
            return
        self.known_days.add([(sensor_id, day)])
        outcome.counted.extend(messages)


def _drop_duplicates(codes: list[str], pending: list[SensorMessage], outcome: GroupOutcome) -> list[SensorMessage]:
    """Read a cancellation: a marker that exists is a duplicate, dropped; a fault ends the group."""
    if len(codes) != 1 + len(pending):
        raise TransientFault(f"transaction cancelled without a reason per action: {codes}")
    fault = dynamo.cancellation_fault(codes)
    if fault is not None:
        raise fault
    remaining: list[SensorMessage] = []
    for message, code in zip(pending, codes[1:], strict=True):
        (outcome.duplicates if code == dynamo.CONDITIONAL_CHECK_FAILED else remaining).append(message)
    return remaining


def _sequence(message: SensorMessage) -> int:
    if message.sequence is None:
        raise TransientFault("a FIFO message without its sequence number reached the ordered counter")
    return message.sequence


def _leaders(
    messages: Sequence[SensorMessage], *, key: Callable[[SensorMessage], Hashable]
) -> tuple[list[SensorMessage], dict[Hashable, list[SensorMessage]]]:
    """One leader per identity (a ledger key: a transaction may touch an item once; a sequence
    number: one SQS message); the repeats follow it."""
    leaders: dict[Hashable, SensorMessage] = {}
    followers: dict[Hashable, list[SensorMessage]] = {}
    for message in messages:
        identity = key(message)
        if identity in leaders:
            followers.setdefault(identity, []).append(message)
        else:
            leaders[identity] = message
    return list(leaders.values()), followers


def _settle_followers(
    followers: dict[Hashable, list[SensorMessage]],
    outcome: GroupOutcome,
    *,
    key: Callable[[SensorMessage], Hashable],
) -> None:
    """A repeat of a counted (or already known) message is a duplicate; of a failed one, failed."""
    if not followers:
        return
    failed_keys = {key(m) for m in outcome.failed}
    for identity, repeats in followers.items():
        (outcome.failed if identity in failed_keys else outcome.duplicates).extend(repeats)
