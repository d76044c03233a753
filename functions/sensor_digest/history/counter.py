"""The history import's counting (docs/import.md): one partition of an object's rows (``spill.py``), each
sensor-day's new rows written at once, each row known for good by its identity on its day.

A row's identity (``Entry.identity``, 8 bytes) is its sensor's ``event_id`` when it names one, else its
object and its place there (``chunks.identity_of``). It is kept on the day the row counted on, in the same
write as its count (``store/import_writes.py``). A partition holds every row of its
sensor-days, so each day is written from all of its rows at once: in as few writes as DynamoDB's limits
allow (``Piece``), whatever order the rows came in and however many they are.

1. The rows are read (``Rows``: a partition can be read more than once) for their days and identities;
   the day items are read (eventually consistent: a stale read costs a refused write), then the pages of
   imported identities they name (strongly consistent, once: a page never changes), and, for a day
   holding live reports, what the live ledger keeps of them (``LiveSide``).
2. Each day's rows are classified in row order: an identity found on the day is *already* counted (an
   earlier import, or the live report it repeats: ``LiveSide``); one repeated in the partition is a
   *duplicate* of its first row; a row that names an ``event_id`` on a day whose live reports are not all
   known is refused (``Overlap``); the rest are new, added up by hour (``Unit``).
3. The new rows are written piece by piece through update -> insert -> update, each write resting on the
   day's ``ImportSeq`` and ``DataCount`` as read. A refused write returns the day as it is now: the day
   is classified again from its rows, and what is still new written.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from sensor_digest.backoff import RetryPolicy
from sensor_digest.errors import RETRYABLE_FAULTS, Contention, MalformedItem, RefusedWrite
from sensor_digest.history.days import DayPlan, DayRows, DayState, LiveSide, Overlap, Piece, live_reports, state_of
from sensor_digest.history.record import Figures
from sensor_digest.history.spill import DayKey, Entry
from sensor_digest.store import day_writes, import_writes, repairs, schema, sizes
from sensor_digest.store.day_store import Action, DayStore, Refused, Requests
from sensor_digest.store.day_view import ImportView, Kind, ids_of, view_of
from sensor_digest.store.identities import IMPORT_DAY_IDS, IMPORT_PAGE_IDS, import_page_id
from sensor_digest.store.import_writes import Imported
from sensor_digest.store.tally import Tally, readings_past_digits

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

Rows = Callable[[], Iterable[Entry]]
"""A partition's entries, in row order, as often as they are asked for."""

PAGES_A_REQUEST = 25
"""Pages read a ``BatchGetItem`` (a page of imported identities holds up to 160 KB)."""
REFUSALS = 16
"""How many times one sensor-day's write may find the day moved on (another import, or live ingest,
wrote it) before the partition is handed back as contended (``Contention``: tried again, its counted
rows then found)."""


@dataclass
class PartitionCount:
    """What became of a partition's valid rows: ``counted`` now, ``already`` counted (their identity was
    on their day: an earlier import's, or a live report's), ``duplicates`` (an identity repeated in the
    partition), ``refused`` (each with the reason); and what it took."""

    counted: int = 0
    already: int = 0
    duplicates: int = 0
    refused: list[tuple[Entry, str]] = field(default_factory=list)
    overlapping: int = 0
    days: int = 0
    writes: int = 0
    reads: int = 0

    @property
    def requests(self) -> int:
        """The reads, as the store meters them (``store/day_store.py``'s ``Meter``)."""
        return self.reads

    @requests.setter
    def requests(self, value: int) -> None:
        self.reads = value

    def figures(self) -> Figures:
        """The partition's share of an import's figures (its refused rows are rejected)."""
        return Figures(
            counted=self.counted,
            already=self.already,
            duplicates=self.duplicates,
            rejected=len(self.refused),
            overlap_refused=self.overlapping,
            days=self.days,
            writes=self.writes,
            reads=self.reads,
        )

    def add(self, other: PartitionCount) -> None:
        for name in (f.name for f in fields(self)):
            setattr(self, name, getattr(self, name) + getattr(other, name))


# -- the counter ------------------------------------------------------------------------------------


class HistoryCounter:
    """Writes partitions of imported rows (see the module)."""

    def __init__(
        self,
        *,
        table_name: str,
        ledger_table_name: str,
        client: DynamoDBClient,
        max_workers: int = 8,
        retry: RetryPolicy | None = None,
        overlap: Overlap = Overlap.REFUSE,
    ) -> None:
        self.store = DayStore(client, table_name, ledger_table_name)
        self._max_workers = max_workers
        self._retry = retry or RetryPolicy()
        self._overlap = overlap

    def count(self, rows: Rows, overlap: Overlap | None = None) -> PartitionCount:
        """Count a partition (``overlap``: this import's, else the counter's); ``TransientFault`` when a write
        could not be made (throttling, an engine that does not answer, a day other writers kept writing):
        what was written stands, and the partition counted again counts the rest."""
        if overlap is not None and overlap is not self._overlap:
            other = copy.copy(self)
            other._overlap = overlap
            return other.count(rows)
        result = PartitionCount()
        wanted: dict[DayKey, set[bytes]] = {}
        named: set[DayKey] = set()
        for entry in rows():
            wanted.setdefault(entry.key, set()).add(entry.identity)
            if entry.event_id is not None:
                named.add(entry.key)
        result.days = len(wanted)
        states = self.lookup(wanted, named, rows, result)
        plans = self._classify(rows, states, {day: len(ids) for day, ids in wanted.items()}, {})
        sizes = {day: len(ids) for day, ids in wanted.items()}
        work = [(day, plans[day], states[day], sizes[day]) for day in plans]
        workers = min(self._max_workers, len(work))
        if workers <= 1:
            outcomes = [self._write_day(rows, *w) for w in work]
        else:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="import") as pool:
                outcomes = list(pool.map(lambda w: self._write_day(rows, *w), work))
        for outcome in outcomes:
            result.add(outcome)
        return result

    # -- the lookup -------------------------------------------------------------------------------

    def lookup(
        self,
        wanted: Mapping[DayKey, AbstractSet[bytes]],
        named: AbstractSet[DayKey],
        rows: Rows,
        result: PartitionCount,
    ) -> dict[DayKey, DayState | str]:
        """Each day's state as read, with its pages (their identities among ``wanted``: those of the rows
        being written there) and its live side where rows naming an ``event_id`` meet live reports; or why
        no write can rest on its item (its rows are refused with it)."""
        days = sorted(wanted)
        found: dict[DayKey, dict[str, Any]] = {}
        for start in range(0, len(days), 100):
            found.update(self.store.find_days(days[start : start + 100], result))
        pages_named: set[tuple[DayKey, bytes]] = set()
        for day, item in found.items():
            try:
                pages_named |= {(day, page) for page in ImportView.of_item(item).pages}
            except MalformedItem:
                continue  # _state says why
        pages, reads = self.pages(pages_named, wanted)
        result.reads += reads
        live_days = {day for day, item in found.items() if day in named and _live_of_item(item)}
        live = self._live_sides(live_days, found, rows, result) if live_days else {}
        out: dict[DayKey, DayState | str] = {}
        for day in days:
            try:
                out[day] = state_of(found.get(day, {}), day, pages.get(day, {}), live.get(day, LiveSide()))
            except RefusedWrite as refused:
                out[day] = said(refused)
        return out

    def pages(
        self, wanted: AbstractSet[tuple[DayKey, bytes]], among: Mapping[DayKey, AbstractSet[bytes]]
    ) -> tuple[dict[DayKey, dict[bytes, frozenset[bytes]]], int]:
        """Of these pages of imported identities that exist, the identities ``among`` those of their day's
        rows being written (what else a page holds is not kept: memory stays that of the rows), and the
        requests it took. Read strongly consistent: a page is written in the transaction that names it in
        its day item, and an eventually consistent read might not see it yet."""
        ordered = sorted(wanted)
        keys = [schema.import_page_key(*day, page) for day, page in ordered]
        meter = Requests()
        by_key = self.store.find_ledger(keys, meter, per_request=PAGES_A_REQUEST)
        out: dict[DayKey, dict[bytes, frozenset[bytes]]] = {}
        for (day, page), key in zip(ordered, keys, strict=True):
            if (item := by_key.get(str(key[schema.LEDGER_KEY]["S"]))) is not None:
                out.setdefault(day, {})[page] = frozenset(ids_of(item) & among.get(day, frozenset()))
        return out, meter.requests

    def _live_sides(
        self, days: AbstractSet[DayKey], items: Mapping[DayKey, Mapping[str, Any]], rows: Rows, result: PartitionCount
    ) -> dict[DayKey, LiveSide]:
        """For each day holding live reports, what its live ledger keeps: the compact ledger's hashes (the
        day item's, and its pages' ``IDS#``, strongly consistent) and the markers of the rows' event ids."""
        event_ids: dict[DayKey, set[str]] = {}
        for entry in rows():
            if entry.event_id is not None and entry.key in days:
                event_ids.setdefault(entry.key, set()).add(entry.event_id)
        out: dict[DayKey, LiveSide] = {}
        for day in sorted(days):
            out[day] = self.live_side(items[day], day, event_ids.get(day, set()), result)
        return out

    def live_side(
        self, item: Mapping[str, Any], day: DayKey, event_ids: AbstractSet[str], result: PartitionCount
    ) -> LiveSide:
        """What the live ledger keeps of ``item``'s live reports (see ``LiveSide``)."""
        if not live_reports(item):
            return LiveSide()
        try:
            view = view_of(item)
        except MalformedItem:
            view = None
        hashes: set[bytes] = set()
        complete, why = False, _kept_by(item)
        if view is not None and view.kind is Kind.COMPACT:
            hashes |= ids_of(item)
            complete = view.hashed
            keys = [schema.id_page_key(*day, page) for page in range(1, view.page + 1)]
            for start in range(0, len(keys), 100):
                got = self.store.find_ledger(keys[start : start + 100], result)
                for page in got.values():
                    hashes |= ids_of(page)
                if len(got) < len(keys[start : start + 100]):
                    complete, why = False, "its live ledger's pages have expired (the marker lifetime)"
        markers: dict[str, str] = {}
        wanted = sorted(event_ids)
        for start in range(0, len(wanted), 100):
            keys = [schema.ledger_key(schema.marker_id(day[0], e)) for e in wanted[start : start + 100]]
            for marker in self.store.find_ledger(keys, result).values():
                event_id = str(marker[schema.LEDGER_KEY]["S"]).split("#", 2)[2]
                markers[event_id] = str(marker.get(schema.MARKER_DAY, {}).get("S", ""))
        return LiveSide(True, frozenset(hashes), markers, complete, "" if complete else why)

    # -- classifying, then writing a day --------------------------------------------------------------

    def _classify(
        self,
        rows: Rows,
        states: Mapping[DayKey, DayState | str],
        sizes: Mapping[DayKey, int],
        written: Mapping[DayKey, AbstractSet[bytes]],
    ) -> dict[DayKey, DayPlan]:
        """The days of ``states`` (those of them that can take a count), their rows classified in row order;
        a day that cannot (a text: why) has its rows refused with the reason."""
        open_: dict[DayKey, DayRows] = {}
        refused: dict[DayKey, DayPlan] = {}
        for day, state in states.items():
            if isinstance(state, DayState):
                open_[day] = DayRows(state, written.get(day, frozenset()), self._overlap, sizes.get(day, 1))
            else:
                refused[day] = DayPlan()
        for entry in rows():
            day_rows = open_.get(entry.key)
            if day_rows is not None:
                day_rows.add(entry)
            elif entry.key in refused:
                reason = states[entry.key]
                assert isinstance(reason, str)
                refused[entry.key].refused.append((entry, reason))
        return {**{day: r.done() for day, r in open_.items()}, **refused}

    def _write_day(self, rows: Rows, day: DayKey, plan: DayPlan, state: DayState | str, size: int) -> PartitionCount:
        """The day's pieces written; refused, the day read again (from the refusal) and classified again;
        contention and throttling retried by ``retry``, then raised."""
        out = PartitionCount(refused=list(plan.refused))
        if not isinstance(state, DayState):
            return out
        written: set[bytes] = set()
        refusals = retries = 0
        while True:
            write = ImportWrite(self, day, state)
            try:
                for piece in plan.pieces:
                    if not write.put(piece):
                        break
                    written.update(piece.counted)
                    state = write.state
                if write.refused is None:
                    out.counted, out.already, out.duplicates = len(written), plan.already, plan.duplicates
                    out.overlapping = plan.overlapping
                    return out
                refusals += 1
                if refusals > REFUSALS:
                    raise Contention(f"the day {day[1]} of sensor {day[0]} kept moving on: other writers write it")
                state = self._state_after(write.refused, day, rows, out)
            except RefusedWrite as refused:  # the day item takes no count (a value written by hand)
                left = {i for piece in plan.pieces for i in piece.counted} - written
                dynamodb_said = refused.attribute is None and not state.refused_names
                past, bad = self._past_digits(day, rows, left, out) if dynamodb_said else ([], None)
                if not past:
                    reason = said(refused)
                    if bad is not None:  # DynamoDB said only "invalid": the attribute at fault, named
                        reason = said(RefusedWrite(str(bad), repair=repairs.day_item(*day, bad.attribute)))
                    out.refused += [(e, reason) for e in _first_of(rows, day, left)]
                    out.counted, out.already, out.duplicates = len(written), plan.already, plan.duplicates
                    out.overlapping = plan.overlapping
                    return out
                why = f"the statistics of {', '.join(repr(n) for n in past)} in its {schema.READINGS}, with "
                why += f"these rows' values, would need more than DynamoDB's {schema.DYNAMODB_DIGITS} digits"
                reason = f"its day item refuses the count: {why}; {repairs.day_item(*day, schema.READINGS)}"
                state = replace(state, refused_names=frozenset(past), refused_reason=reason)  # the rest again
            except RETRYABLE_FAULTS:  # read the day again first: a write whose answer was lost finds what it wrote
                if retries >= self._retry.attempts:  # any other fault ends the partition, tried again as a whole
                    raise
                self._retry.wait(retries)
                retries += 1
                state = self._read_again(day, rows, out)
            finally:
                out.writes += write.requests
                out.reads += write.reads
            plan = self._classify(rows, {day: state}, {day: size}, {day: written})[day]
            out.refused = list(plan.refused)

    def _past_digits(
        self, day: DayKey, rows: Rows, left: AbstractSet[bytes], out: PartitionCount
    ) -> tuple[list[str], MalformedItem | None]:
        """Why DynamoDB refused a write as invalid without saying why, the day read again: the reading
        names whose statistics would need more than 38 digits with the rows still to write, or else the
        attribute those rows cannot be added to (``schema.check_day_item``: a count past 38 digits), or
        the readings no ingest writes (``tally.readings_of_item``)."""
        item, entries = self.store.read_day(day, out), _first_of(rows, day, left)
        unreadable: MalformedItem | None = None
        try:
            past = readings_past_digits(item, entries)
        except MalformedItem as bad:
            past, unreadable = [], bad
        if past:
            return past, None
        try:
            schema.check_day_item(item, sizes.item_bytes(item), sum(e.count for e in entries))
        except MalformedItem as bad:
            return [], bad
        return [], unreadable

    def _read_again(self, day: DayKey, rows: Rows, out: PartitionCount) -> DayState:
        """The day read strongly consistent, with what its state needs."""
        return self._state_after(self.store.read_day(day, out), day, rows, out)

    def _state_after(self, item: dict[str, Any], day: DayKey, rows: Rows, out: PartitionCount) -> DayState:
        """The day as a refusal (or a read) returned it: its pages and its live side read again."""
        ids = {e.identity for e in rows() if e.key == day}
        try:
            names = ImportView.of_item(item).pages
        except MalformedItem:
            names = frozenset()
        pages, reads = self.pages({(day, p) for p in names}, {day: ids})
        out.reads += reads
        live = LiveSide()
        if _live_of_item(item):
            named = {e.event_id for e in rows() if e.key == day and e.event_id is not None}
            if named:
                live = self.live_side(item, day, named, out)
        return state_of(item, day, pages.get(day, {}), live)


def _first_of(rows: Rows, day: DayKey, identities: AbstractSet[bytes]) -> list[Entry]:
    """The first row of ``day`` of each of ``identities``, in row order."""
    left, out = set(identities), []
    for entry in rows():
        if entry.key == day and entry.identity in left:
            left.discard(entry.identity)
            out.append(entry)
    return out


def _kept_by(item: Mapping[str, Any]) -> str:
    """Which live writers may have counted on a day without leaving a hash of each report."""
    if any(name.startswith(schema.APPLIED_SEQUENCE_PREFIX) for name in item):
        return "ordered mode (a FIFO queue) keeps no identity of a live report"
    if schema.ID_PAGE in item or schema.HASHED_COUNT in item:
        return "some of its live reports left no hash (counted by ordered mode, at-least-once or a rollback)"
    return (
        "its live reports were counted by the per-message ledger, whose markers expire, or at-least-once, which "
        "keeps no identity"
    )


def _live_of_item(item: Mapping[str, Any]) -> bool:
    try:
        return live_reports(item)
    except MalformedItem:
        return False


def said(refused: RefusedWrite) -> str:
    """Why a day takes no count, and how to mend it, as its rows' reason."""
    why = f"{refused.reason}; {refused.repair}" if refused.repair else refused.reason
    return f"its day item refuses the count: {why}"


class ImportWrite:
    """A day's pieces, one write each, through update -> insert -> update: ``state`` follows each write;
    ``refused`` is the day as a refused write returned it (``None``: every piece written so far was)."""

    def __init__(self, counter: HistoryCounter, day: DayKey, state: DayState) -> None:
        self._counter = counter
        self._day = day
        self.state = state
        self.refused: dict[str, Any] | None = None
        self.requests = 0
        self.reads = 0

    def put(self, piece: Piece) -> bool:
        """Write ``piece``; whether it was written (else ``refused`` holds the day as it is)."""
        tally, ids, state = piece.tally(), piece.ids, self.state
        own = sorted(state.imports.ids)
        if len(own) + len(ids) <= IMPORT_DAY_IDS:
            added, pages, moved = ids, {}, False
        else:
            pages = _pages(own + ids)
            added, moved = [], bool(own)
        if not state.exists:
            table = self._counter.store.table
            params = import_writes.import_create(table, self._day, tally, added=added, pages=list(pages))
            action = "Put"
        else:
            guard = Imported(state.imports.seq, state.count, added, list(pages), moved, compact=state.compact)
            view = state.view
            table = self._counter.store.table
            params = day_writes.update(table, self._day, tally, view.hours, guard, readings=view.readings)
            action = "Update"
        written, item = self._send(action, params, pages)
        if not written:
            self.refused = item
            return False
        self.state = self._after(state, tally, added, pages, moved)
        return True

    def _send(self, action: str, params: dict[str, Any], pages: Mapping[bytes, list[bytes]]) -> tuple[bool, Any]:
        store = self._counter.store
        puts = [Action.put(import_writes.import_page_put(store.ledger, self._day, p, ids)) for p, ids in pages.items()]
        try:
            store.write([Action(action, params), *puts], self)
        except Refused as refused:
            if not refused.failed(0):  # only a page's: it is there, unnamed
                raise RefusedWrite(
                    f"the ledger holds a page of imported rows of sensor {self._day[0]}, {self._day[1]} that its "
                    "day item does not name (put back by hand?)",
                    repair=repairs.day_item(*self._day, schema.IMPORT_PAGES),
                ) from None
            return False, refused.item
        return True, {}

    def _after(
        self,
        state: DayState,
        tally: Tally,
        added: Sequence[bytes],
        pages: Mapping[bytes, list[bytes]],
        moved: bool,
    ) -> DayState:
        """The state once a write of ``tally`` with these identities, resting on ``state``, committed."""
        view = state.view.written(tally)
        if not state.exists:  # created a day of the compact ledger
            view = replace(view, kind=Kind.COMPACT, page=0, day_ids=0, hashed=True)
        own = frozenset() if moved else state.imports.ids | frozenset(added)
        imports = ImportView(state.imports.seq + 1, own, state.imports.pages | set(pages))
        known = state.known | frozenset(added) | frozenset(i for ids in pages.values() for i in ids)
        count = (state.count or 0) + tally.count
        return DayState(True, view, count, imports, known, state.live)


def _pages(ids: Sequence[bytes]) -> dict[bytes, list[bytes]]:
    """``ids`` as pages of at most ``IMPORT_PAGE_IDS``, by page id."""
    out: dict[bytes, list[bytes]] = {}
    for start in range(0, len(ids), IMPORT_PAGE_IDS):
        share = list(ids[start : start + IMPORT_PAGE_IDS])
        out[import_page_id(share)] = share
    return out


def rows_from(entries: Sequence[Entry]) -> Rows:
    """A partition held in memory (a small import, a test)."""
    return lambda: iter(entries)


__all__ = ["HistoryCounter", "Overlap", "PartitionCount", "Rows", "rows_from"]
