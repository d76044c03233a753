"""Exactly once on a standard queue: the count and what it counted, in one write.

A report's identity is its sensor and its ``event_id`` (the origin ``messageId`` when the body
names none). What a counted report leaves behind to be known by later is its *proof* (``Proof``):

- with ``LEDGER_MODE=compact`` (the default), its 12-byte identity hash (``store/identities.py``),
  first in the day item's own ``Ids`` (page 0, up to 40), then in identity pages of 72: a group of
  one sensor-day is one conditional ``UpdateItem`` of its day item while page 0 has room (1 write
  unit however many messages travel together), then one ``TransactWriteItems`` of the day item and
  the page being filled;
- a per-message marker ``MSG#<sensor_id>#<event_id>``, in the same transaction as the count, where
  a hash kept per day would not know a repeat: on a day begun under markers (``LEDGER_MODE=per-message``
  or a release before the compact ledger), for a report that names an ``event_id`` but no
  ``timestamp`` (a resend falls on another send day), for every report with ``per-message``, and
  on a compact day that is no longer hashed (``store/day_view.py``).

``LedgerCounter`` runs a batch: first deliveries, then redeliveries (``waves``), the redeliveries
looked up first (their markers, their day items and pages), each sensor-day's group written by
``LedgerWrite`` through update -> insert -> update, up to ``WRITE_IDS`` messages a write. The writes
themselves, and every condition they rest on, are built by ``store/day_writes.py`` (its ``Compact``
guard: ``store/guards.py``); every refusal returns the item as it was, and the write reads it there:
identities found are duplicates, a page seen fuller or an ``IdPage`` moved on corrects the
``DayView``, the rest is written again. No write is retried blind. A write that met another writer
is deferred to the end of the batch, then retried inside the invocation (``RetryPolicy``) while time
allows. docs/exactly-once.md tells the whole design.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import InitVar, dataclass, field, replace
from typing import Any

from sensor_digest.backoff import RetryPolicy
from sensor_digest.config import LedgerMode
from sensor_digest.counting.base import DayWrite, Expired, ImportedRows, TableCounter
from sensor_digest.counting.memory import FrozenPages
from sensor_digest.counting.outcomes import (
    Group,
    GroupOutcome,
    Lookup,
    leaders,
    share_leaders_fate,
    write_chunks,
)
from sensor_digest.errors import Contention, MalformedItem, RefusedWrite, StoreFault, TransientFault
from sensor_digest.messages import SensorMessage
from sensor_digest.store import day_writes, repairs, schema
from sensor_digest.store.day_store import Action, Meter, Refused
from sensor_digest.store.day_view import (
    PER_MESSAGE,
    UNSEEN,
    DayKey,
    DayView,
    Kind,
    ids_of,
    page_ids_of,
    view_of,
    view_or_none,
)
from sensor_digest.store.dynamo import CONDITIONAL_CHECK_FAILED, Refusal
from sensor_digest.store.guards import Compact, Exists
from sensor_digest.store.identities import DAY_IDS, PAGE_IDS, WRITE_IDS, identity_hash
from sensor_digest.store.tally import Tally
from sensor_digest.upsert import Answer, UpsertStep


@dataclass(frozen=True)
class Proof:
    """What a counted message leaves behind to be known by later: ``id``, its identity hash where the
    day keeps hashes; ``marker``, whether it writes ``MSG#<sensor_id>#<event_id>``."""

    message: SensorMessage
    id: bytes | None
    marker: bool


class Deferred(Exception):
    """A contended write handed back to be written at the end of the batch."""


def _ledger_key(message: SensorMessage) -> Hashable:
    return message.ledger_key


def page_ids(day: DayKey, page: int, item: dict[str, Any]) -> set[bytes]:
    """The identities identity page ``page`` of ``day`` holds; ``RefusedWrite`` with the repair when
    its ``Ids`` is no binary set (a hand-made item: retrying cannot help, the day's reports wait mended)."""
    try:
        return page_ids_of(item)
    except MalformedItem as bad:
        raise RefusedWrite(str(bad), repair=repairs.id_page(*day, page), attribute=bad.attribute) from None


@dataclass(eq=False, kw_only=True)
class LedgerCounter(TableCounter):
    """``DELIVERY_MODE=exactly-once`` on a standard queue (see the module).

    ``mode``: how a new day item's reports are remembered (a day keeps the kind it began with);
    ``retry``: how often a contended write is tried again inside the invocation, once it has been
    deferred to the end of the batch, and how it waits (``RetryPolicy(attempts=0)``: never; the
    group is redelivered); ``hasher``: a report's identity hash (tests force collisions with it)."""

    ledger_table_name: str
    marker_ttl_seconds: int
    mode: LedgerMode = LedgerMode.COMPACT
    wall_clock: Callable[[], float] = time.time
    retry: InitVar[RetryPolicy | None] = None
    hasher: Callable[[str], bytes] = identity_hash
    _retry: RetryPolicy = field(init=False, repr=False)
    frozen: FrozenPages[int] = field(init=False, default_factory=FrozenPages)
    imported: ImportedRows = field(init=False)

    def __post_init__(self, retry: RetryPolicy | None) -> None:
        super().__post_init__()
        self._retry = retry or RetryPolicy()
        self.imported = ImportedRows(self.store)

    @property
    def creates_compact(self) -> bool:
        """Whether a day item created now keeps compact identities."""
        return self.mode is LedgerMode.COMPACT

    def expires_at(self) -> int:
        """When a ledger item written now may go (the table's TTL attribute)."""
        return int(self.wall_clock()) + self.marker_ttl_seconds

    def proof(self, message: SensorMessage, view: DayView) -> Proof:
        """What ``message`` leaves on a day of ``view``'s kind: on a per-message day, a marker; on a
        compact day, its identity hash, and a marker too when it names an ``event_id`` without a
        ``timestamp`` (a resend may fall on another day, where only the marker finds it), when new
        days are per-message (so that an earlier release, rolled back to, would honour it), or when
        the day is not hashed (a writer that keeps no hashes counted on it)."""
        if view.kind is Kind.PER_MESSAGE:
            return Proof(message, None, True)
        marker = message.sent_again_elsewhere or not self.creates_compact or not view.hashed
        return Proof(message, self.hasher(message.event_id), marker)

    def may_bet(self, messages: Sequence[SensorMessage]) -> bool:
        """On a compact day with no marker to write: the update is then one ``UpdateItem`` (where it
        is a transaction, a lost bet would be a cancelled one, charged for every item it names)."""
        return self.creates_compact and not any(self.proof(m, UNSEEN).marker for m in messages)

    def marker_action(self, message: SensorMessage) -> Action:
        """The message's marker, as a transaction's action: put on condition that it does not exist."""
        params = day_writes.marker(
            self.store.ledger, message.ledger_key, day=message.day, count=message.count, expires_at=self.expires_at()
        )
        return Action.put(params)

    def frozen_ids(self, day: DayKey, pages: range, meter: Meter | None = None, expired: Expired = None) -> set[bytes]:
        """The identities of ``pages`` of ``day``, pages that never change again: read once,
        strongly consistent (a page written a moment before it froze must be read whole), and kept
        (``Policies.keep_frozen_pages``); no read is started once ``expired`` (``TransientFault``: the
        pages read so far stay kept for the next try)."""
        keep = self.policies.keep_frozen_pages
        ids, unread = self.frozen.held(day, pages) if keep else (set(), list(pages))
        for start in range(0, len(unread), 100):  # each request's pages kept as soon as read
            chunk = unread[start : start + 100]
            keys = [schema.id_page_key(*day, page) for page in chunk]
            by_key = self.store.find_ledger(keys, meter, expired=expired)
            for page, key in zip(chunk, keys, strict=True):
                read = page_ids(day, page, by_key.get(str(key[schema.LEDGER_KEY]["S"]), {}))
                ids |= read  # returned as read: the cache may forget it before this call returns
                if keep:
                    self.frozen.keep(day, page, read)
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
            found.counted_before = set(self.store.find_ledger(keys, found, keys_only=True, expired=expired))
        open_ = [m for m in messages if m.ledger_key not in found.counted_before]
        days = set(self.known_days.unknown((m.sensor_id, m.day) for m in open_))
        days |= {(m.sensor_id, m.day) for m in open_ if self.redelivered(m)}
        if not days:
            return found
        day_items = self.store.find_days(sorted(days), found, expired=expired)
        found.missing_days = days - set(day_items)
        views = {day: view_or_none(item) for day, item in day_items.items()}
        for day, view in views.items():
            if view is not None:
                self.known_days.add([day], view)
        counted = {day: ids_of(item) for day, item in day_items.items() if views[day] is not None}
        for day in {(m.sensor_id, m.day) for m in again} & set(day_items):
            view = views[day]
            if view is not None and view.kind is Kind.COMPACT and view.page > 0:
                counted[day] |= self.frozen_ids(day, range(1, view.page), found, expired=expired)
                counted[day] |= self._current_page(day, view.page, found)
        for message in open_:
            digest = self.proof(message, UNSEEN).id
            if digest is not None and digest in counted.get((message.sensor_id, message.day), ()):
                found.counted_before.add(message.ledger_key)
        return found

    def _current_page(self, day: DayKey, page: int, meter: Meter) -> set[bytes]:
        """The identities of the page being filled, as an eventually consistent read sees them."""
        return page_ids(day, page, self.store.read_ledger(schema.id_page_key(*day, page), meter, consistent=False))

    def count_group(self, group: Group) -> GroupOutcome:
        """Count one group, ``WRITE_IDS`` messages a write. A contended write is handed back
        (``deferred``, with the rest of the group) when ``may_defer``, else retried while
        ``deadline`` allows: none is started that could not end before it; without a deadline,
        contention is not retried here."""
        outcome, key, messages = GroupOutcome(), group.key, group.messages
        first, followers = leaders(messages, key=_ledger_key)
        view = self.view(group)
        start = 0
        for chunk in write_chunks(first, WRITE_IDS, identities=True):
            start += len(chunk)
            try:
                view = self._count_chunk(key, chunk, outcome, view, deadline=group.deadline, may_defer=group.may_defer)
            except Deferred:  # what the chunk wrote so far stands; the rest waits, repeats too
                ended = {m.ledger_key for m in outcome.counted + outcome.duplicates}
                handed_back = {m.ledger_key for m in first[start - len(chunk) :]} - ended
                outcome.deferred = [m for m in messages if m.ledger_key in handed_back]
                followers = {k: v for k, v in followers.items() if k not in handed_back}
                break
            except StoreFault as fault:
                done = {m.message_id for m in outcome.counted + outcome.duplicates}
                outcome.give_up([m for m in first[start - len(chunk) :] if m.message_id not in done], fault)
                break
        share_leaders_fate(followers, outcome, key=_ledger_key)
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
            started = self.clock()
            step = UpsertStep.CREATE_IF_MISSING if write.view.kind is Kind.MISSING else UpsertStep.UPDATE_IF_EXISTS
            try:  # each attempt succeeds, drops at least one duplicate, or learns more of the day
                write.run(max_attempts=len(chunk) + 7, start=step)  # the 7th: the read before a next page
                if write.view.kind is not Kind.MISSING:
                    self.known_days.add([key], write.view)
                return write.view
            except Contention:  # nothing was written by that attempt: later, or again if time allows
                if may_defer:
                    raise Deferred from None
                delay = self._retry.delay(retry, floor=self.clock() - started)
                if deadline is None or retry == self._retry.attempts or self.clock() + delay >= deadline:
                    raise
                outcome.retries += 1
                self._retry.sleep(delay)
            finally:
                outcome.steps += write.steps
                write.steps = []
        raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class Role:
    """What an action of a transaction is, to read its refusal: the day item, a page, a marker."""

    kind: str  # "day", "page" or "marker"
    page: int = 0
    message: SensorMessage | None = None


class LedgerWrite(DayWrite):
    """A chunk of one group, through the three steps; ``pending`` loses each message found counted
    before, ``view`` follows what the refusals show."""

    def __init__(
        self,
        counter: LedgerCounter,
        day: DayKey,
        chunk: Sequence[SensorMessage],
        outcome: GroupOutcome,
        view: DayView,
        *,
        expired: Expired = None,
    ) -> None:
        super().__init__(counter.store, day, outcome, view)
        self._counter = counter
        self._expired = expired
        self._key = schema.day_key(*day)
        self.pending = self._distinct(chunk)
        self._read_before_next_page = True

    def nothing_left(self) -> bool:
        return not self.pending

    # -- the three steps ---------------------------------------------------------------------

    def update_if_exists(self) -> Answer:
        if self.view.kind is Kind.MISSING:
            return Answer.NEXT
        return self._update()

    def create_if_missing(self) -> Answer:
        """The day item, created whole: the count, hours and (compact) identities of the chunk's first
        ``DAY_IDS`` messages (a per-message day: all of them), on condition that it does not exist; with
        the markers those messages need in the same ``TransactWriteItems``, so that a report counted
        before (its marker there) leaves no day item behind. The rest of the chunk goes to the update."""
        compact = self._counter.creates_compact
        proofs = self._proofs(DayView(Kind.COMPACT) if compact else PER_MESSAGE)
        head = proofs[:DAY_IDS] if compact else proofs
        ids = [p.id for p in head if p.id is not None] if compact else None
        params = day_writes.create(self._store.table, self._day, Tally.of(p.message for p in head), ids=ids)
        markers = [p.message for p in head if p.marker]
        day_item: dict[str, Any] | None = None
        counted: set[str] = set()
        try:
            self._store.write([Action.put(params), *(self._counter.marker_action(m) for m in markers)], self._outcome)
            written = True
        except Refused as refused:
            written = False
            day_item = refused.item if refused.failed(0) else None
            counted = {m.message_id for i, m in enumerate(markers, start=1) if refused.failed(i)}
        if day_item is not None:  # somebody else's: step 3 adds to it, as it is
            self._outcome.insert_refused = True
            self._found(day_item, [], counted)
            return Answer.NEXT
        if not written:  # only markers refused: those reports were counted before; the rest again
            return self._drop(set(), counted)
        self.view = view_of(params["Item"])  # as it was put
        done = {p.message.message_id for p in head}
        self._outcome.counted.extend(m for m in self.pending if m.message_id in done)
        self.pending = [m for m in self.pending if m.message_id not in done]
        return Answer.NEXT if self.pending else Answer.DONE

    def update_after_race(self) -> Answer:
        if self.view.kind is Kind.MISSING:  # day items are never deleted
            raise TransientFault("the day item is missing after its insert")
        return self._update()

    # -- the update ---------------------------------------------------------------------------

    def _update(self) -> Answer:
        left = self._counter.imported.drop(self._day, self.view, self.pending, self._outcome)
        if len(left) < len(self.pending):  # rows the history import counted on the day: counted already
            self.pending = left
            return Answer.AGAIN
        proofs = self._proofs(self.view)
        if self.view.kind is Kind.COMPACT and self._drop_frozen(proofs):
            return Answer.AGAIN
        ids = [p.id for p in proofs if p.id is not None]
        markers = [p.message for p in proofs if p.marker]
        tally = Tally.of(p.message for p in proofs)
        if self.view.kind is Kind.PER_MESSAGE:
            return self._transact([(Role("day"), self._day_update(tally, Exists()))], markers, tally)
        page, seen = self.view.page, (self.view.day_ids if self.view.page == 0 else self.view.page_ids)
        room = max(0, (DAY_IDS if page == 0 else PAGE_IDS) - seen)
        here, onward = ids[:room], ids[room:]
        following = self.view.next_page
        advance = following if onward else None
        if onward and self._read_before_next_page:
            return self._read_again()
        if page == 0 and not onward and not markers:
            return self._single(self._day_update(tally, Compact(self.view, ids, here)), tally)
        day = self._day_update(tally, Compact(self.view, ids, here if page == 0 else [], advance))
        actions = [(Role("day"), day)]
        if page > 0 and here:
            actions.append((Role("page", page), self._page_action(page, ids, here)))
        if onward:
            actions.append((Role("page", following), self._page_action(following, onward, onward)))
        return self._transact(actions, markers, tally)

    def _day_update(self, tally: Tally, guard: Exists | Compact) -> dict[str, Any]:
        """The day item's update as the view and the hours map stand (``store/day_writes.py``), resting on
        the day's imported rows being those checked when a report names an ``event_id``."""
        view = self.view
        imports = view.imports.seq if any(m.named for m in self.pending) else None
        return day_writes.update(
            self._store.table, self._day, tally, view.hours, guard, readings=view.readings, imports=imports
        )

    def _page_action(self, page: int, checked: list[bytes], added: list[bytes]) -> dict[str, Any]:
        """Page ``page``'s update (``store/day_writes.py``)."""
        ledger, expires = self._store.ledger, self._counter.expires_at()
        return day_writes.page_update(ledger, self._day, page, expires_at=expires, checked=checked, added=added)

    def _read_again(self) -> Answer:
        """Before the chunk's first write that would start a next page, the day item and its page being
        filled as they are now (consistent reads): another container may have filled it or moved the
        day on, and a transaction refused for that is charged for every item it names."""
        self._read_before_next_page = False
        try:
            day_item = self._store.read_day(self._day, self._outcome)
            seen, pages = view_or_none(day_item), []
            if seen is not None and seen.kind is Kind.COMPACT and seen.page > 0:
                page_key = schema.id_page_key(*self._day, seen.page)
                pages.append((seen.page, self._store.read_ledger(page_key, self._outcome)))
        except StoreFault:  # only a saving: the write's conditions find out
            return Answer.AGAIN
        return self._found(day_item, pages)

    # -- sending and reading the answers ------------------------------------------------------

    def _single(self, params: dict[str, Any], tally: Tally) -> Answer:
        try:
            new = self._store.write([Action.update({**params, "ReturnValues": "UPDATED_NEW"})], self._outcome)
        except Refused as refused:
            return self._found(refused.item, [])
        self.view = replace(self.view.written(tally), day_ids=len(ids_of(new)))
        self._all_counted()
        return Answer.DONE

    def _transact(
        self, actions: list[tuple[Role, dict[str, Any]]], markers: list[SensorMessage], tally: Tally
    ) -> Answer:
        roles = [role for role, _ in actions] + [Role("marker", message=m) for m in markers]
        sent = [Action.update(params) for _, params in actions]
        sent += [self._counter.marker_action(m) for m in markers]
        try:
            self._store.write(sent, self._outcome)
        except Refused as refused:
            return self._refused(roles, refused.refusals)
        self._moved_on(actions, tally)
        self._all_counted()
        return Answer.DONE

    def _refused(self, roles: list[Role], refusals: list[Refusal]) -> Answer:
        """A refused transaction read by what each action is (``Role``): the day item as it was, the
        pages that were fuller, the markers of reports counted before."""
        day_item: dict[str, Any] | None = None
        pages: list[tuple[int, dict[str, Any]]] = []
        counted_markers: set[str] = set()
        for role, refusal in zip(roles, refusals, strict=True):
            if refusal.code != CONDITIONAL_CHECK_FAILED:
                continue
            if role.kind == "day":
                day_item = refusal.item
            elif role.kind == "page":
                pages.append((role.page, refusal.item))
            elif role.message is not None:
                counted_markers.add(role.message.message_id)
        if day_item is not None:
            return self._found(day_item, pages, counted_markers)
        held = {page: page_ids(self._day, page, item) for page, item in pages}
        for page, ids in held.items():
            if page == self.view.page:
                self.view = self.view.seen_in_page(len(ids))
            elif page == self.view.next_page and ids:
                # a page past the one being filled already holds identities: the day item was put back
                # (deleted, or restored to an earlier time) while its pages stayed. They never change
                # again; the day moves on past them, and what they hold stays counted.
                self.view = replace(self.view, skip_to=page + 1)
        return self._drop(set().union(*held.values()), counted_markers)

    def _found(
        self, item: dict[str, Any], pages: list[tuple[int, dict[str, Any]]], counted_markers: set[str] | None = None
    ) -> Answer:
        """A refusal by the day item: ``item`` as it was (``{}``: none). Its kind and page correct the
        view; identities found in it or in a refused page are counted before."""
        try:
            seen = view_of(item)
        except MalformedItem as bad:  # a hand-made item: retrying cannot help, its reports wait mended
            repair = repairs.day_item(*self._day, bad.attribute)
            raise RefusedWrite(str(bad), repair=repair, attribute=bad.attribute) from None
        if seen.kind is Kind.COMPACT and self.view.kind is Kind.COMPACT and seen.page == self.view.page:
            seen = seen.seen_in_page(self.view.page_ids)  # the page being filled is no emptier than seen
        self.view = seen
        if seen.kind is Kind.MISSING:
            return Answer.NEXT
        found = ids_of(item)
        for page, page_item in pages:
            held = page_ids(self._day, page, page_item)
            found |= held
            if page == self.view.page:
                self.view = self.view.seen_in_page(len(held))
        return self._drop(found, counted_markers or set())

    def _drop(self, counted_ids: set[bytes], counted_markers: set[str]) -> Answer:
        """Messages found counted before are duplicates (the ids only where the view keeps ids)."""
        done = {
            p.message.message_id
            for p in self._proofs(self.view)
            if (p.id is not None and p.id in counted_ids) or p.message.message_id in counted_markers
        }
        self._outcome.duplicates.extend(m for m in self.pending if m.message_id in done)
        self.pending = [m for m in self.pending if m.message_id not in done]
        return Answer.AGAIN

    def _drop_frozen(self, proofs: list[Proof]) -> bool:
        """Drop the messages whose identity a frozen page holds; whether any was."""
        ids = {p.id for p in proofs if p.id is not None}
        if not ids:
            return False
        full = self.view.page > 0 and self.view.page_ids >= PAGE_IDS  # a full page never changes again
        last = self.view.page + 1 if full else self.view.page
        if last <= 1:
            return False
        found = ids & self._counter.frozen_ids(self._day, range(1, last), self._outcome, self._expired)
        if not found:
            return False
        self._drop(found, set())
        return True

    def _moved_on(self, actions: list[tuple[Role, dict[str, Any]]], tally: Tally) -> None:
        """The view after a committed transaction: what it added, where."""
        if self.view.kind is not Kind.COMPACT:
            self.view = self.view.written(tally)
            return
        added = {
            (role.kind, role.page): len(params["ExpressionAttributeValues"].get(":added", {}).get("BS", []))
            for role, params in actions
        }
        view = replace(self.view.written(tally), day_ids=self.view.day_ids + added.get(("day", 0), 0))
        if ("page", view.next_page) in added:
            view = replace(view, page=view.next_page, page_ids=added[("page", view.next_page)], skip_to=0)
        elif view.page > 0:
            view = replace(view, page_ids=view.page_ids + added.get(("page", view.page), 0))
        self.view = view

    def _all_counted(self) -> None:
        self._outcome.counted.extend(self.pending)
        self.pending = []

    # -- proofs ------------------------------------------------------------------------------

    def _proofs(self, view: DayView) -> list[Proof]:
        """What each pending message leaves on a day of ``view``'s kind (``LedgerCounter.proof``)."""
        return [self._counter.proof(m, view) for m in self.pending]

    def _distinct(self, chunk: Sequence[SensorMessage]) -> list[SensorMessage]:
        """The chunk without a second message of one identity hash (two event ids whose hashes
        collide are one report: the later one is a duplicate, as it would be in another batch)."""
        seen: set[bytes] = set()
        kept: list[SensorMessage] = []
        for message in chunk:
            digest = self._counter.proof(message, DayView(Kind.COMPACT)).id
            if digest is not None and digest in seen:
                self._outcome.duplicates.append(message)
                continue
            if digest is not None:
                seen.add(digest)
            kept.append(message)
        return kept
