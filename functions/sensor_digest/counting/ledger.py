"""Exactly once on a standard queue: the count and what it counted, in one write.

A report's identity is its sensor and its ``event_id`` (the origin ``messageId`` when the body
names none). Two ledgers remember the identities counted (``LEDGER_MODE``):

- **compact** (the default): a sensor-day's identities are 12-byte hashes (``identities.py``),
  first in the day item's own ``Ids`` (page 0, up to 40), then in ledger pages of 72
  (``IDS#<sensor_id>#<day>#<page>``); a group of one sensor-day is one conditional ``UpdateItem``
  of its day item while page 0 has room (1 write unit, however many messages travel together), then
  one ``TransactWriteItems`` of the day item and the page being filled (4 units per 72 messages at
  most); ``ledger_write.py`` builds and reads them;
- **per-message**: one marker ``MSG#<sensor_id>#<event_id>`` per message, in the same transaction
  as the count (2 units for the count, 2 per message).

Both honour each other: a day item's kind is fixed when it is created (``day_views.py``), and a
day begun under markers (by this mode or by a version before the compact ledger) is counted with
markers to its end; a redelivered message is looked up by its marker too, whatever the day's kind.
The compact ledger narrows one case of the identity rule: a report's identity is kept per day, so
a producer's resend of the same ``event_id`` with a ``timestamp`` on another day counts there too.
A report with an ``event_id`` and no ``timestamp`` (whose day comes from the send time, which a
resend changes) is always counted with a marker.

The count change walks update -> insert -> update (``upsert.py``): update the day item on condition
of what the view says of it; when it is missing (a read found it missing, or the update's refusal
shows no item), insert it, whole when it can be (its count and identities, on condition that it
does not exist), else empty; when another writer created it first, update again.

What each write costs is what it writes, and a refused or cancelled one is charged, so:

- a batch is written in two waves (``waves``): first the first deliveries (``ApproximateReceiveCount``
  1, not redriven), then the others. A first delivery has not been counted unless its producer
  sent it twice, which the write's conditions catch. A redelivery may have been (the first copy's
  answer was lost, or it is still in flight elsewhere), so the second wave first looks it up: its
  marker (strongly consistent), its day item's page 0 and the pages of its day (``lookup``);
- every day item a wave needs that this container does not know is read first (eventually
  consistent: half a unit for an item under 4 KB), so a new day starts at the insert, a full page 0
  goes straight to the pages, and page 0's identities drop a resend before any write;
- a write that met another writer (``TransactionConflict``) is deferred to the end of the batch in
  the first pass (``GroupOutcome.deferred``), then retried inside the invocation (``RetryPolicy``);
  a group that still cannot be written fails, to be redelivered.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from sensor_digest.backoff import RetryPolicy
from sensor_digest.config import LedgerMode
from sensor_digest.counting.base import (
    DayKey,
    Expired,
    GroupOutcome,
    Lookup,
    TableCounter,
    leaders,
    settle_followers,
)
from sensor_digest.counting.day_views import MISSING, UNSEEN, DayView, FrozenPages, Kind, ids_of
from sensor_digest.counting.identities import WRITE_IDS, Entry, identity_hash
from sensor_digest.counting.ledger_write import LedgerWrite
from sensor_digest.counting.outcomes import Group
from sensor_digest.errors import Contention, TransientFault
from sensor_digest.messages import SensorMessage
from sensor_digest.store import dynamo, expressions, schema
from sensor_digest.upsert import UpsertStep

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


class Deferred(Exception):
    """A contended write handed back to be written at the end of the batch."""


def _ledger_key(message: SensorMessage) -> Hashable:
    return message.ledger_key


class LedgerCounter(TableCounter):
    """``DELIVERY_MODE=exactly-once`` on a standard queue (see the module)."""

    def __init__(
        self,
        *,
        table_name: str,
        ledger_table_name: str,
        client: DynamoDBClient,
        marker_ttl_seconds: int,
        mode: LedgerMode = LedgerMode.COMPACT,
        max_workers: int = 8,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        hasher: Callable[[str], bytes] = identity_hash,
    ) -> None:
        """``mode``: how a new day item's reports are remembered (a day keeps the kind it began
        with); ``retry``: how often a contended write is tried again inside the invocation, once it
        has been deferred to the end of the batch (``RetryPolicy(attempts=0)``: never; the group is
        redelivered); ``hasher``: a report's identity hash (tests force collisions with it)."""
        super().__init__(table_name=table_name, client=client, max_workers=max_workers, clock=clock)
        self._ledger = ledger_table_name
        self._ttl = marker_ttl_seconds
        self._mode = mode
        self._wall_clock = wall_clock
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._hash = hasher
        self.frozen = FrozenPages()

    # -- what LedgerWrite reads ----------------------------------------------------------------

    @property
    def table(self) -> str:
        return self._table

    @property
    def ledger(self) -> str:
        return self._ledger

    @property
    def client(self) -> DynamoDBClient:
        return self._client

    @property
    def creates_compact(self) -> bool:
        """Whether a day item created now keeps compact identities."""
        return self._mode is LedgerMode.COMPACT

    def expires_at(self) -> int:
        """When a ledger item written now may go (the table's TTL attribute)."""
        return int(self._wall_clock()) + self._ttl

    def entry(self, message: SensorMessage, view: DayView) -> Entry:
        """What ``message`` leaves on a day of ``view``'s kind: on a per-message day, a marker; on a
        compact day, its identity hash, and a marker too when it names an ``event_id`` without a
        ``timestamp`` (a resend may fall on another day, where only the marker finds it; the hash
        finds a resend with a timestamp on this day), when new days are per-message (so that an
        earlier version, rolled back to, would honour it), or when the day is not hashed (a writer
        that keeps no hashes counted on it: its reports are known by their markers alone)."""
        if view.kind is Kind.PER_MESSAGE:
            return Entry(message, None, True)
        marker = message.sent_again_elsewhere or not self.creates_compact or not view.hashed
        return Entry(message, self._hash(message.event_id), marker)

    def may_bet(self, messages: Sequence[SensorMessage]) -> bool:
        """On a compact day with no marker to write: the update is then one ``UpdateItem`` (where it
        is a transaction, a lost bet would be a cancelled one, charged for every item it names)."""
        return self.creates_compact and not any(self.entry(m, UNSEEN).marker for m in messages)

    def marker_action(self, message: SensorMessage) -> dict[str, Any]:
        """The message's marker: put on condition that it does not exist yet."""
        item = {
            **schema.ledger_key(message.ledger_key),
            schema.EXPIRES_AT: {"N": str(self.expires_at())},
            schema.MARKER_DAY: {"S": message.day},
            schema.MARKER_COUNT: {"N": str(message.count)},
        }
        return expressions.put(expressions.put_if_absent(self._ledger, item, schema.LEDGER_KEY))

    def frozen_ids(
        self, day: DayKey, pages: range, outcome: GroupOutcome | None = None, expired: Expired = None
    ) -> set[bytes]:
        """The identities of ``pages`` of ``day``, pages that never change again: read once,
        strongly consistent (a page written a moment before it froze must be read whole); no read
        is started once ``expired`` (``TransientFault``: what was read stays kept for the next try)."""
        ids, unread = self.frozen.held(day, pages)
        for start in range(0, len(unread), 100):  # each request's pages kept as soon as read
            chunk = unread[start : start + 100]
            keys = [schema.id_page_key(*day, page) for page in chunk]
            items = dynamo.batch_get(self._client, self._ledger, keys, consistent=True, expired=expired)
            by_key = {str(item[schema.LEDGER_KEY]["S"]): item for item in items}
            for page, key in zip(chunk, keys, strict=True):
                read = ids_of(by_key.get(str(key[schema.LEDGER_KEY]["S"]), {}))
                ids |= read  # returned as read: the cache may forget it before this call returns
                self.frozen.keep(day, page, read)
            if outcome is not None:
                outcome.requests += 1
        return ids

    # -- the batch -----------------------------------------------------------------------------

    def identity(self, message: SensorMessage) -> Hashable:
        """One sensor, one ``event_id``: one report (within a batch, whatever days they name)."""
        return message.ledger_key

    def known_key(self, message: SensorMessage) -> str:
        return message.ledger_key

    @staticmethod
    def redelivered(message: SensorMessage) -> bool:
        """Whether ``message`` may have been counted before: SQS handed it out before, or it came back
        from the dead-letter queue. A first delivery cannot have been counted unless its producer
        sent the report twice."""
        return message.receive_count > 1 or message.redriven

    def waves(self, messages: Sequence[SensorMessage]) -> list[list[SensorMessage]]:
        """First deliveries, then redeliveries (see the module)."""
        return [[m for m in messages if not self.redelivered(m)], [m for m in messages if self.redelivered(m)]]

    def lookup(self, messages: Sequence[SensorMessage], expired: Expired = None) -> Lookup:
        """What a wave's writes would otherwise find out the expensive way: the markers of its
        redeliveries (strongly consistent: a first copy may have been counted a moment ago); the day
        items this container does not know, and those of the redeliveries (eventually consistent:
        a stale read costs only the refused write it would have saved); the pages of the
        redeliveries' compact days."""
        found = Lookup()
        again = [m for m in messages if self.redelivered(m)]
        keys = [schema.ledger_key(k) for k in sorted({m.ledger_key for m in again})]
        if keys:
            items = dynamo.batch_get(
                self._client, self._ledger, keys, consistent=True, projection=[schema.LEDGER_KEY], expired=expired
            )
            found.counted_before = {str(item[schema.LEDGER_KEY]["S"]) for item in items}
            found.requests += (len(keys) + 99) // 100
        open_ = [m for m in messages if m.ledger_key not in found.counted_before]
        days = set(self.known_days.unknown((m.sensor_id, m.day) for m in open_))
        days |= {(m.sensor_id, m.day) for m in open_ if self.redelivered(m)}
        if not days:
            return found
        read = dynamo.batch_get(
            self._client, self._table, [schema.day_key(*d) for d in sorted(days)], consistent=False, expired=expired
        )
        found.requests += (len(days) + 99) // 100
        day_items = {(schema.sensor_of_item(item), schema.text_of(item, schema.DATE)): item for item in read}
        found.missing_days = days - set(day_items)
        for day, item in day_items.items():
            self.hourless.note(day, item)
        views = {day: DayView.of_item_or_none(item) for day, item in day_items.items()}
        for day, view in views.items():
            if view is not None:
                self.known_days.add([day], view)
        counted = {day: ids_of(item) for day, item in day_items.items() if views[day] is not None}
        for day in {(m.sensor_id, m.day) for m in again} & set(day_items):
            view = views[day]
            if view is not None and view.kind is Kind.COMPACT and view.page > 0:
                counted[day] |= self.frozen_ids(day, range(1, view.page), expired=expired)
                counted[day] |= self._current_page(day, view.page)
                found.requests += 1
        for message in open_:
            digest = self.entry(message, UNSEEN).id
            if digest is not None and digest in counted.get((message.sensor_id, message.day), ()):
                found.counted_before.add(message.ledger_key)
        return found

    def _current_page(self, day: DayKey, page: int) -> set[bytes]:
        """The identities of the page being filled, as an eventually consistent read sees them."""
        key = schema.id_page_key(*day, page)
        item = dynamo.call("GetItem", partial(self._client.get_item, TableName=self._ledger, Key=key))
        return ids_of(item.get("Item") or {})

    def count_group(self, group: Group) -> GroupOutcome:
        """Count one group, ``WRITE_IDS`` messages a write. A contended write is handed back
        (``deferred``, with the rest of the group) when ``may_defer``, else retried while
        ``deadline`` allows: none is started that could not end before it; without a deadline,
        contention is not retried here."""
        outcome, key, messages = GroupOutcome(), group.key, group.messages
        first, followers = leaders(messages, key=_ledger_key)
        view = MISSING if group.missing else (self.known_days.get(key) or UNSEEN)
        for start in range(0, len(first), WRITE_IDS):
            chunk = first[start : start + WRITE_IDS]
            try:
                view = self._count_chunk(key, chunk, outcome, view, deadline=group.deadline, may_defer=group.may_defer)
            except Deferred:  # what the chunk settled so far stays settled; the rest waits, repeats too
                settled = {m.ledger_key for m in outcome.counted + outcome.duplicates}
                handed_back = {m.ledger_key for m in first[start:]} - settled
                outcome.deferred = [m for m in messages if m.ledger_key in handed_back]
                followers = {k: v for k, v in followers.items() if k not in handed_back}
                break
            except TransientFault as fault:
                done = {m.message_id for m in outcome.counted + outcome.duplicates}
                outcome.give_up([m for m in first[start:] if m.message_id not in done], fault)
                break
        settle_followers(followers, outcome, key=_ledger_key)
        return outcome

    def _count_chunk(
        self,
        key: DayKey,
        chunk: list[SensorMessage],
        outcome: GroupOutcome,
        view: DayView,
        *,
        deadline: float | None,
        may_defer: bool,
    ) -> DayView:
        """One chunk through the three steps, retried on contention; the day's view after it."""
        write = LedgerWrite(self, key, chunk, outcome, view, expired=self._expiry(deadline))
        for retry in range(self._retry.attempts + 1):
            started = self._clock()
            step = UpsertStep.CREATE_IF_MISSING if write.view.kind is Kind.MISSING else UpsertStep.UPDATE_IF_EXISTS
            try:  # each attempt succeeds, drops at least one duplicate, or learns more of the day
                write.run(max_attempts=len(chunk) + 7, start=step)  # the 7th: the read before a next page
                self.hourless.written(key)  # a write of the day item leaves its map there
                if write.view.kind is not Kind.MISSING:
                    self.known_days.add([key], write.view)
                return write.view
            except Contention:  # nothing was written by that attempt: later, or again if time allows
                if may_defer:
                    raise Deferred from None
                delay = self._retry.delay(retry, floor=self._clock() - started)
                if deadline is None or retry == self._retry.attempts or self._clock() + delay >= deadline:
                    raise
                outcome.retries += 1
                self._sleep(delay)
            finally:
                outcome.steps += write.steps
                write.steps = []
        raise AssertionError("unreachable")  # pragma: no cover
