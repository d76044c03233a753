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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from sensor_digest import dynamo, layout, upsert
from sensor_digest.config import DeliveryMode
from sensor_digest.errors import Contention, TransientFault
from sensor_digest.messages import SensorMessage
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
    ) -> None:
        self._table = table_name
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
    ) -> GroupOutcome:
        """Count one group; never raises for a write failure (it lands in ``failed``).

        ``deadline`` (``time.monotonic()``) bounds the retries of a contended transaction: none is
        started that could not end before it; without one, contention is not retried here.
        ``missing``: a read found no day item, so the first write starts at the insert.
        """
        outcome = GroupOutcome()
        first = UpsertStep.CREATE_IF_MISSING if missing else UpsertStep.UPDATE_IF_EXISTS
        if self._mode is DeliveryMode.AT_LEAST_ONCE:
            self._count_plain(sensor_id, day, messages, outcome, first)
            return outcome
        leaders, followers = _dedupe_by_marker(messages)
        for start in range(0, len(leaders), MARKERS_PER_TRANSACTION):
            chunk = leaders[start : start + MARKERS_PER_TRANSACTION]
            step = first if start == 0 else UpsertStep.UPDATE_IF_EXISTS  # the first chunk made the item
            try:
                self._count_chunk(sensor_id, day, chunk, outcome, deadline, first=step)
            except TransientFault as fault:
                outcome.failed.extend(leaders[start:])
                outcome.reason = fault.reason
                break
        _settle_followers(followers, outcome)
        return outcome

    def lookup(self, messages: Sequence[SensorMessage]) -> Lookup:
        """Before a batch's writes (see the module's docstring): the ledger keys of these messages
        already in the ledger (``exactly-once`` only), then the day items of the remaining groups
        that this container does not know to exist. Eventually consistent: a marker or day item
        written a moment ago may be missed, which costs only the write that then finds it."""
        found = Lookup()
        if self._mode is DeliveryMode.EXACTLY_ONCE and messages:
            keys = [layout.ledger_key(k) for k in sorted({m.ledger_key for m in messages})]
            items = dynamo.batch_get(self._client, self._ledger, keys, consistent=False, projection=[layout.LEDGER_KEY])
            found.counted_before = {str(item[layout.LEDGER_KEY]["S"]) for item in items}
            found.requests += (len(keys) + 99) // 100
        days = self.known_days.unknown(
            (m.sensor_id, m.day) for m in messages if m.ledger_key not in found.counted_before
        )
        if days:
            keys = [layout.day_key(sensor, day) for sensor, day in days]
            items = dynamo.batch_get(
                self._client, self._table, keys, consistent=False, projection=[layout.SENSOR_ID, layout.DATE]
            )
            present = {(layout.sensor_of_item(item), str(item[layout.DATE]["S"])) for item in items}
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
                    "Item": layout.day_item(sensor_id, day, total),
                    "ConditionExpression": "attribute_not_exists(#pk)",
                    "ExpressionAttributeNames": {"#pk": layout.SENSOR_ID},
                }
            }
        update: dict[str, Any] = {
            "TableName": self._table,
            "Key": layout.day_key(sensor_id, day),
            "UpdateExpression": "ADD #count :n",
            "ExpressionAttributeNames": {"#count": layout.DATA_COUNT},
            "ExpressionAttributeValues": {":n": {"N": str(total)}},
        }
        if step is UpsertStep.UPDATE_IF_EXISTS:
            update["ConditionExpression"] = "attribute_exists(#pk)"
            update["ExpressionAttributeNames"]["#pk"] = layout.SENSOR_ID
        return {"Update": update}

    def _marker_action(self, message: SensorMessage) -> dict[str, Any]:
        return {
            "Put": {
                "TableName": self._ledger,
                "Item": {
                    **layout.ledger_key(message.ledger_key),
                    layout.EXPIRES_AT: {"N": str(int(self._clock()) + self._ttl)},
                    layout.MARKER_DAY: {"S": message.day},
                    layout.MARKER_COUNT: {"N": str(message.count)},
                },
                "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": {"#pk": layout.LEDGER_KEY},
            }
        }

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


def _dedupe_by_marker(
    messages: Sequence[SensorMessage],
) -> tuple[list[SensorMessage], dict[str, list[SensorMessage]]]:
    """One leader per ledger key (a transaction may touch an item once); the rest follow it."""
    leaders: dict[str, SensorMessage] = {}
    followers: dict[str, list[SensorMessage]] = {}
    for message in messages:
        key = message.ledger_key
        if key in leaders:
            followers.setdefault(key, []).append(message)
        else:
            leaders[key] = message
    return list(leaders.values()), followers


def _settle_followers(followers: dict[str, list[SensorMessage]], outcome: GroupOutcome) -> None:
    """A repeat of a counted (or already known) message is a duplicate; of a failed one, failed."""
    if not followers:
        return
    failed_keys = {m.ledger_key for m in outcome.failed}
    for key, repeats in followers.items():
        (outcome.failed if key in failed_keys else outcome.duplicates).extend(repeats)
