"""One write of the exactly-once ledger: up to ``WRITE_IDS`` messages of one sensor-day, through
update -> insert -> update, with what each message leaves behind (``ledger.py`` says which).

Each message is an ``Entry``: its identity hash when the day keeps compact identities for it, a
marker when it needs one, or both. What the write sends follows from the day's view:

- a new day: one ``PutItem`` of the whole day item (its count, hours and identities), on condition
  that it does not exist; with the markers its messages need, in one ``TransactWriteItems``;
- a compact day filling page 0 (its own ``Ids``), every identity fitting and no marker: one
  ``UpdateItem`` of the day item, ``ADD DataCount :n, HashedCount :n, Ids :ids`` on condition that
  ``IdPage`` is still 0, that the day is still hashed (``day_views.py``), that none of the identities
  is there yet, and that they fit (1 write unit);
- otherwise one ``TransactWriteItems``: the day item's ``ADD`` (on condition of its ``IdPage`` and
  that none of the identities is in its page 0), the page being filled (``ADD Ids``, on condition
  that none is there and that they fit), the next page when they do not all fit (the day item's
  ``IdPage`` moves on in the same transaction; read again first, ``_read_again``), and one marker
  per message that needs one;
- a per-message day: the day item's ``ADD`` and one marker per message, as the per-message ledger
  always wrote.

The day item's write carries its messages' hours (``hours.py``): in the put of a new day item, or
in the same ``ADD`` as ``DataCount``; a day item from before hours has its map created in it.

Pages before the one being filled never change again; their identities come from the counter's
``frozen_ids`` (read once per container). Every refusal asks for the item as it was
(``ReturnValuesOnConditionCheckFailure=ALL_OLD``): identities found there are duplicates (counted
before), dropped; a page seen fuller or an ``IdPage`` moved on corrects the view; the rest is
written again. No write is ever retried blind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from sensor_digest.counting.base import DayKey, Expired, GroupOutcome
from sensor_digest.counting.day_views import PER_MESSAGE, DayView, Kind, ids_of
from sensor_digest.counting.hours import HoursWrite, hours_of
from sensor_digest.counting.identities import DAY_IDS, PAGE_IDS, Entry
from sensor_digest.counting.ledger_actions import day_action, page_action
from sensor_digest.errors import MalformedItem, RefusedWrite, TransientFault
from sensor_digest.messages import SensorMessage
from sensor_digest.store import dynamo, expressions, reads, repairs, schema
from sensor_digest.upsert import Answer, ThreeStepUpsert

if TYPE_CHECKING:
    from sensor_digest.counting.ledger import LedgerCounter


@dataclass(frozen=True)
class Role:
    """What an action of a transaction is, to read its refusal: the day item, a page, a marker."""

    kind: str  # "day", "page" or "marker"
    page: int = 0
    message: SensorMessage | None = None


class LedgerWrite(ThreeStepUpsert):
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
        super().__init__()
        self._counter = counter
        self._expired = expired
        self._day = day
        self._key = schema.day_key(*day)
        self._outcome = outcome
        self.view = view
        self.hours = HoursWrite(missing=day in counter.hourless)
        self.pending = self._distinct(chunk)
        self._read_before_next_page = True

    def settled(self) -> bool:
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
        entries = self._entries(DayView(Kind.COMPACT) if compact else PER_MESSAGE)
        head = entries[:DAY_IDS] if compact else entries
        total = sum(e.message.count for e in head)
        item: schema.Item = {**self._key, schema.DATA_COUNT: {"N": str(total)}}
        if compact:
            item[schema.ID_PAGE] = {"N": "0"}
            item[schema.IDS] = {"BS": [e.id for e in head]}
            item[schema.HASHED_COUNT] = {"N": str(total)}
        item[schema.HOUR_COUNTS] = self.hours.put_value(hours_of(e.message for e in head))
        params = expressions.put_if_absent(self._counter.table, item)
        params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        markers = [e.message for e in head if e.marker]
        self._outcome.requests += 1
        if markers:
            sent = [expressions.put(params), *(self._counter.marker_action(m) for m in markers)]
            refusals = self._refusals(dynamo.transact_refusals(self._counter.client, sent), len(sent))
            day_item = refusals[0].item if refusals and refusals[0].code == dynamo.CONDITIONAL_CHECK_FAILED else None
            refused = [r.code == dynamo.CONDITIONAL_CHECK_FAILED for r in refusals[1:]] if refusals else []
            counted = {m.message_id for m, no in zip(markers, refused, strict=False) if no}
            written = not refusals
        else:
            answer = dynamo.single_write(self._counter.client, "PutItem", params)
            day_item, counted, written = (None if answer.written else answer.item), set(), answer.written
        if day_item is not None:  # somebody else's: step 3 adds to it, as it is
            self._outcome.insert_refused = True
            self._found(day_item, [], counted)
            return Answer.NEXT
        if not written:  # only markers refused: those reports were counted before; the rest again
            return self._drop(set(), counted)
        self.view = DayView(Kind.COMPACT, day_ids=len(head)) if compact else PER_MESSAGE
        self.hours.missing = False
        done = {e.message.message_id for e in head}
        self._outcome.counted.extend(m for m in self.pending if m.message_id in done)
        self.pending = [m for m in self.pending if m.message_id not in done]
        return Answer.NEXT if self.pending else Answer.DONE

    def update_after_race(self) -> Answer:
        if self.view.kind is Kind.MISSING:  # day items are never deleted
            raise TransientFault("the day item is missing after its insert")
        return self._update()

    # -- the update ---------------------------------------------------------------------------

    def _update(self) -> Answer:
        entries = self._entries(self.view)
        if self.view.kind is Kind.COMPACT and self._drop_frozen(entries):
            return Answer.AGAIN
        ids = [e.id for e in entries if e.id is not None]
        markers = [e.message for e in entries if e.marker]
        total = sum(e.message.count for e in entries)
        hours = hours_of(e.message for e in entries)
        if self.view.kind is Kind.PER_MESSAGE:
            return self._transact([(Role("day"), self._day_action(total, hours, [], [], None))], markers)
        page, seen = self.view.page, (self.view.day_ids if self.view.page == 0 else self.view.page_ids)
        room = max(0, (DAY_IDS if page == 0 else PAGE_IDS) - seen)
        here, onward = ids[:room], ids[room:]
        following = self.view.next_page
        advance = following if onward else None
        if onward and self._read_before_next_page:
            return self._read_again()
        if page == 0 and not onward and not markers:
            return self._single(self._day_action(total, hours, ids, here, None))
        actions = [(Role("day"), self._day_action(total, hours, ids, here if page == 0 else [], advance))]
        if page > 0 and here:
            actions.append((Role("page", page), self._page_action(page, ids, here)))
        if onward:
            actions.append((Role("page", following), self._page_action(following, onward, onward)))
        return self._transact(actions, markers)

    def _day_action(
        self, total: int, hours: dict[str, int], checked: list[bytes], added: list[bytes], advance: int | None
    ) -> dict[str, Any]:
        """The day item's update as the view and the hours map stand (``ledger_actions.py``)."""
        table, key = self._counter.table, self._key
        return day_action(
            table, key, self.view, self.hours, total=total, counts=hours, checked=checked, added=added, advance=advance
        )

    def _page_action(self, page: int, checked: list[bytes], added: list[bytes]) -> dict[str, Any]:
        """Page ``page``'s update (``ledger_actions.py``)."""
        key = schema.id_page_key(*self._day, page)
        return page_action(self._counter.ledger, key, self._counter.expires_at(), checked, added)

    def _read_again(self) -> Answer:
        """Before the chunk's first write that would start a next page, the day item and its page being
        filled as they are now (consistent reads): another container may have filled it or moved the
        day on, and a transaction refused for that is charged for every item it names."""
        self._read_before_next_page = False
        try:
            self._outcome.requests += 1
            day_item = reads.get_item(self._counter.client, self._counter.table, self._key) or {}
            seen, pages = DayView.of_item_or_none(day_item), []
            if seen is not None and seen.kind is Kind.COMPACT and seen.page > 0:
                self._outcome.requests += 1
                page_key = schema.id_page_key(*self._day, seen.page)
                pages.append((seen.page, reads.get_item(self._counter.client, self._counter.ledger, page_key) or {}))
        except TransientFault:  # only a saving: the write's conditions find out
            return Answer.AGAIN
        return self._found(day_item, pages)

    # -- sending and reading the answers ------------------------------------------------------

    def _single(self, params: dict[str, Any]) -> Answer:
        self._outcome.requests += 1
        answer = dynamo.single_write(self._counter.client, "UpdateItem", {**params, "ReturnValues": "UPDATED_NEW"})
        if answer.written:
            self.view = replace(self.view, day_ids=len(ids_of(answer.item)), rebase=None)
            self._all_counted()
            return Answer.DONE
        return self._found(answer.item, [])

    def _transact(self, actions: list[tuple[Role, dict[str, Any]]], markers: list[SensorMessage]) -> Answer:
        roles = [role for role, _ in actions] + [Role("marker", message=m) for m in markers]
        sent = [expressions.update(params) for _, params in actions]
        sent += [self._counter.marker_action(m) for m in markers]
        self._outcome.requests += 1
        refusals = self._refusals(dynamo.transact_refusals(self._counter.client, sent), len(sent))
        if not refusals:
            self._moved_on(actions)
            self._all_counted()
            return Answer.DONE
        day_item: dict[str, Any] | None = None
        pages: list[tuple[int, dict[str, Any]]] = []
        counted_markers: set[str] = set()
        for role, refusal in zip(roles, refusals, strict=True):
            if refusal.code != dynamo.CONDITIONAL_CHECK_FAILED:
                continue
            if role.kind == "day":
                day_item = refusal.item
            elif role.kind == "page":
                pages.append((role.page, refusal.item))
            elif role.message is not None:
                counted_markers.add(role.message.message_id)
        if day_item is not None:
            return self._found(day_item, pages, counted_markers)
        for page, item in pages:
            if page == self.view.page:
                self.view = self.view.seen_in_page(len(ids_of(item)))
            elif page == self.view.next_page and ids_of(item):
                # a page past the one being filled already holds identities: the day item was put back
                # (deleted, or restored to an earlier time) while its pages stayed. They never change
                # again; the day moves on past them, and what they hold stays counted.
                self.view = replace(self.view, skip_to=page + 1)
        return self._drop(set().union(*(ids_of(item) for _, item in pages)), counted_markers)

    @staticmethod
    def _refusals(refusals: list[dynamo.Refusal] | None, sent: int) -> list[dynamo.Refusal]:
        """A transaction's answer: no refusal once committed; else one per action, each a failed
        condition (``TransientFault`` for anything else: contention, an invalid action)."""
        if refusals is None:
            return []
        codes = [r.code for r in refusals]
        if len(codes) != sent:
            raise TransientFault(f"transaction cancelled without a reason per action: {codes}")
        fault = dynamo.cancellation_fault(codes, [r.message for r in refusals])
        if fault is not None:
            raise fault
        return refusals

    def _found(
        self, item: dict[str, Any], pages: list[tuple[int, dict[str, Any]]], counted_markers: set[str] | None = None
    ) -> Answer:
        """A refusal by the day item: ``item`` as it was (``{}``: none). Its kind and page correct the
        view; identities found in it or in a refused page are counted before."""
        self.hours.saw(item)
        self._counter.hourless.note(self._day, item)
        try:
            seen = DayView.of_item(item)
        except MalformedItem as bad:  # a hand-made item: retrying cannot help, its reports wait mended
            raise RefusedWrite(str(bad), repair=repairs.day_item(*self._day, bad.attribute)) from None
        if seen.kind is Kind.COMPACT and self.view.kind is Kind.COMPACT and seen.page == self.view.page:
            seen = seen.seen_in_page(self.view.page_ids)  # the page being filled is no emptier than seen
        self.view = seen
        if seen.kind is Kind.MISSING:
            return Answer.NEXT
        found = ids_of(item)
        for page, page_item in pages:
            found |= ids_of(page_item)
            if page == self.view.page:
                self.view = self.view.seen_in_page(len(ids_of(page_item)))
        return self._drop(found, counted_markers or set())

    def _drop(self, counted_ids: set[bytes], counted_markers: set[str]) -> Answer:
        """Messages found counted before are duplicates (the ids only where the view keeps ids)."""
        entries = self._entries(self.view)
        done = {
            e.message.message_id
            for e in entries
            if (e.id is not None and e.id in counted_ids) or e.message.message_id in counted_markers
        }
        self._outcome.duplicates.extend(m for m in self.pending if m.message_id in done)
        self.pending = [m for m in self.pending if m.message_id not in done]
        return Answer.AGAIN

    def _drop_frozen(self, entries: list[Entry]) -> bool:
        """Drop the messages whose identity a frozen page holds; whether any was."""
        ids = {e.id for e in entries if e.id is not None}
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

    def _moved_on(self, actions: list[tuple[Role, dict[str, Any]]]) -> None:
        """The view after a committed transaction: what it added, where."""
        if self.view.kind is not Kind.COMPACT:
            return
        added = {
            (role.kind, role.page): len(params["ExpressionAttributeValues"].get(":added", {}).get("BS", []))
            for role, params in actions
        }
        view = replace(self.view, day_ids=self.view.day_ids + added.get(("day", 0), 0), rebase=None)
        if ("page", view.next_page) in added:
            view = replace(view, page=view.next_page, page_ids=added[("page", view.next_page)], skip_to=0)
        elif view.page > 0:
            view = replace(view, page_ids=view.page_ids + added.get(("page", view.page), 0))
        self.view = view

    def _all_counted(self) -> None:
        self._outcome.counted.extend(self.pending)
        self.pending = []

    # -- entries -----------------------------------------------------------------------------

    def _entries(self, view: DayView) -> list[Entry]:
        """What each pending message leaves on a day of ``view``'s kind (``ledger.py``)."""
        return [self._counter.entry(m, view) for m in self.pending]

    def _distinct(self, chunk: Sequence[SensorMessage]) -> list[SensorMessage]:
        """The chunk without a second message of one identity hash (two event ids whose hashes
        collide are one report: the later one is a duplicate, as it would be in another batch)."""
        seen: set[bytes] = set()
        kept: list[SensorMessage] = []
        for message in chunk:
            digest = self._counter.entry(message, DayView(Kind.COMPACT)).id
            if digest is not None and digest in seen:
                self._outcome.duplicates.append(message)
                continue
            if digest is not None:
                seen.add(digest)
            kept.append(message)
        return kept
