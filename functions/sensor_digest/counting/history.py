"""The history import's counting (docs/import.md): a chunk of imported rows, each sensor-day's new rows
written at once, each row known for good by its identity on its day.

A row's identity (``Entry.identity``, 8 bytes) is its sensor's ``event_id`` when it names one, else its
object and its place there; the history layer computes it (``history/chunks.py``). It is kept on the
day the row counted on, in the same write as its count (``store/day_writes.py``, "The import's writes"):
in the day item's ``ImportIds`` while it has room, else in a ledger page of the write's own, named in
the day item's ``ImportPages``. Nothing of it depends on how rows are chunked, so a re-run, another
chunk size, another object carrying the same ``event_id``\\s, and the deployed import all find what was
counted. The day a row counts on must be the same at every run: the history layer dates a sensor's
rows in the zone of its first import (``history/chunks.py``, ``Dating``).

1. ``lookup``: the chunk's day items, one ``BatchGetItem`` per 100 sensor-days (eventually consistent:
   a stale read costs only a refused write), and the pages they name (strongly consistent, read once:
   a page never changes); a row whose identity is there is *already* counted, and costs no write (a
   re-run of an imported object reads only);
2. ``ImportWrite``: each sensor-day's new rows, in writes that fit DynamoDB's limits, through
   update -> insert -> update; each write rests on the day's ``ImportSeq`` being what was read, so a
   write that meets another import's (a retry, a redriven batch, a second import at the same time) is
   refused, and the returned item (with its pages) says which of its rows are counted now.

Two rows of one sensor-day with one identity in a chunk are one report: the first is written, the
other is a *duplicate*.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sensor_digest.backoff import RetryPolicy
from sensor_digest.errors import Contention, MalformedItem, RefusedWrite, TransientFault
from sensor_digest.messages import SensorMessage
from sensor_digest.store import day_writes, dynamo, expressions, repairs, schema
from sensor_digest.store.day_writes import DayKey, DayView, Imported, ImportView, Tally, ids_of, written_on
from sensor_digest.store.identities import IMPORT_DAY_IDS, IMPORT_PAGE_IDS, import_page_id
from sensor_digest.upsert import Answer, ThreeStepUpsert, UpsertStep

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

PAGES_A_REQUEST = 25
"""Pages read a ``BatchGetItem`` (a page holds up to 160 KB)."""
REFUSALS = 16
"""How many times one sensor-day's write may find the day moved on (another import wrote it) before
the chunk is handed back as contended (``Contention``: tried again, its counted rows then found)."""


@dataclass(frozen=True)
class Entry:
    """A valid, dated report of an imported row, and its identity."""

    message: SensorMessage
    identity: bytes


@dataclass(frozen=True)
class Chunk:
    """The valid reports of the rows ``first`` to ``last`` (positions) of an object, in row order."""

    first: int
    last: int
    entries: Sequence[Entry]


@dataclass(frozen=True)
class Part:
    """A chunk's reports of one sensor-day, each identity once."""

    day: DayKey
    entries: Sequence[Entry]


@dataclass
class ChunkCount:
    """What became of a chunk's valid reports: ``counted`` now, ``already`` counted (their identity was
    on their day), ``duplicates`` (an identity repeated in the chunk), ``refused`` (their day item refuses
    the count: each with the reason); and what it took."""

    counted: int = 0
    already: int = 0
    duplicates: int = 0
    refused: list[tuple[SensorMessage, str]] = field(default_factory=list)
    days: int = 0
    writes: int = 0
    reads: int = 0


def parts_of(chunk: Chunk) -> tuple[list[Part], int]:
    """The chunk's reports by sensor-day, in the order of their first row, and how many of them repeat
    the identity of an earlier one of their sensor-day."""
    seen: set[tuple[DayKey, bytes]] = set()
    by_day: dict[DayKey, list[Entry]] = {}
    repeats = 0
    for entry in chunk.entries:
        day = (entry.message.sensor_id, entry.message.day)
        if (day, entry.identity) in seen:
            repeats += 1
            continue
        seen.add((day, entry.identity))
        by_day.setdefault(day, []).append(entry)
    return [Part(day, entries) for day, entries in by_day.items()], repeats


@dataclass(frozen=True)
class DayState:
    """A sensor-day as last read: whether its item ``exists``, what the item says for a write
    (``view``), its imported identities' state (``imports``), the pages of them read so far (a page
    never changes: of each, the identities among the rows being written), and the identities known
    counted on the day (``known``: its own, and those of its pages)."""

    exists: bool
    view: DayView
    imports: ImportView
    pages: dict[bytes, frozenset[bytes]]
    known: frozenset[bytes]

    def after(self, tally: Tally, ids: Sequence[bytes], page: bytes | None) -> DayState:
        """The state once a write of ``tally`` with these identities (in ``page``, else in the item),
        resting on this one, committed."""
        own, named, pages = self.imports.ids, self.imports.pages, self.pages
        if page is None:
            own = own | frozenset(ids)
        else:
            named, pages = named | {page}, {**pages, page: frozenset(ids)}
        return DayState(
            True, self.view.written(tally), ImportView(self.imports.seq + 1, own, named), pages, self.known | set(ids)
        )


def day_state(item: dict[str, Any], day: DayKey, pages: dict[bytes, frozenset[bytes]]) -> DayState:
    """The state of a day as ``item`` shows it (``{}``: none), its identities completed from ``pages``;
    ``RefusedWrite`` (with the reason and the repair) when no write of the import can rest on it."""
    view = written_on(item, day)
    try:
        imports = ImportView.of_item(item)
    except MalformedItem as bad:
        raise RefusedWrite(str(bad), repair=repairs.day_item(*day, bad.attribute)) from None
    known = set(imports.ids)
    for page in imports.pages:
        if page not in pages:
            raise RefusedWrite(
                f"{schema.describe(item)} names the page {page.hex()} of its imported rows in {schema.IMPORT_PAGES}, "
                f"and the ledger has no {schema.IMPORT_PAGE_PREFIX}{day[0]}#{day[1]}#{page.hex()}: the rows it held "
                "are unknown, so none is counted on the day",
                repair=repairs.day_item(*day, schema.IMPORT_PAGES),
            )
        known |= pages[page]
    kept = {page: pages[page] for page in imports.pages}
    return DayState(bool(item), view, imports, kept, frozenset(known))


class HistoryCounter:
    """Writes chunks of imported rows (see the module)."""

    def __init__(
        self,
        *,
        table_name: str,
        ledger_table_name: str,
        client: DynamoDBClient,
        max_workers: int = 8,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.table = table_name
        self.ledger = ledger_table_name
        self.client = client
        self._max_workers = max_workers
        self._retry = retry or RetryPolicy()

    def count(self, chunk: Chunk) -> ChunkCount:
        """Write the chunk; ``TransientFault`` when a write could not be made (throttling, an engine
        that does not answer, a day other imports kept writing): what was written stands, and the chunk
        written again counts the rest."""
        parts, repeats = parts_of(chunk)
        result = ChunkCount(duplicates=repeats, days=len(parts))
        states = self.lookup({p.day: {e.identity for e in p.entries} for p in parts}, result)
        workers = min(self._max_workers, len(parts))
        if workers <= 1:
            outcomes = [self._write(p, states[p.day]) for p in parts]
        else:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="import") as pool:
                outcomes = list(pool.map(lambda p: self._write(p, states[p.day]), parts))
        for write in outcomes:
            result.writes += write.requests
            result.reads += write.reads
            result.counted += write.counted
            result.already += write.already
            if write.reason is not None:
                result.refused.extend((e.message, write.reason) for e in write.remaining)
        return result

    # -- the lookup -------------------------------------------------------------------------------

    def lookup(self, days: Mapping[DayKey, AbstractSet[bytes]], result: ChunkCount) -> dict[DayKey, DayState | str]:
        """Each day's state as read, with its pages (their identities among ``days``' own: those of the
        rows being written there), or why no write can rest on its item (its rows are refused with it)."""
        wanted = sorted(days)
        items = dynamo.batch_get(self.client, self.table, [schema.day_key(*d) for d in wanted], consistent=False)
        result.reads += (len(wanted) + 99) // 100
        found = {(schema.sensor_of_item(i), schema.text_of(i, schema.DATE)): i for i in items}
        named: set[tuple[DayKey, bytes]] = set()
        for day, item in found.items():
            try:
                named |= {(day, page) for page in ImportView.of_item(item).pages}
            except MalformedItem:
                continue  # day_state says why
        pages, requests = self.pages(named, days)
        result.reads += requests
        out: dict[DayKey, DayState | str] = {}
        for day in wanted:
            try:
                out[day] = day_state(found.get(day, {}), day, pages)
            except RefusedWrite as refused:
                out[day] = said(refused)
        return out

    def pages(
        self, wanted: set[tuple[DayKey, bytes]], among: Mapping[DayKey, AbstractSet[bytes]]
    ) -> tuple[dict[bytes, frozenset[bytes]], int]:
        """Of these pages that exist, the identities ``among`` those of their day's rows being written
        (what else a page holds is not kept: memory stays that of the chunk's rows), and the requests
        it took. Read strongly consistent: a page is written in the transaction that names it in its
        day item, and an eventually consistent read might not see it yet."""
        ordered = sorted(wanted)
        out: dict[bytes, frozenset[bytes]] = {}
        requests = 0
        for start in range(0, len(ordered), PAGES_A_REQUEST):
            group = ordered[start : start + PAGES_A_REQUEST]
            keys = [schema.import_page_key(*day, page) for day, page in group]
            found = dynamo.batch_get(self.client, self.ledger, keys, consistent=True)
            requests += 1
            by_key = {str(i[schema.LEDGER_KEY]["S"]): i for i in found}
            for (day, page), key in zip(group, keys, strict=True):
                if (item := by_key.get(str(key[schema.LEDGER_KEY]["S"]))) is not None:
                    out[page] = frozenset(ids_of(item) & among.get(day, frozenset()))
        return out, requests

    # -- one sensor-day ----------------------------------------------------------------------------

    def _write(self, part: Part, state: DayState | str) -> ImportWrite:
        """The part's new rows written; contention and throttling retried by ``retry``, then raised."""
        write = ImportWrite(self, part, state)
        for attempt in range(self._retry.attempts + 1):
            try:
                write.run(max_attempts=REFUSALS + len(part.entries), start=write.start)
                return write
            except RefusedWrite as refused:  # the day item takes no count (a value written by hand)
                write.reason = said(refused)
                return write
            except TransientFault as fault:
                if attempt >= self._retry.attempts or not _worth_retrying(fault):
                    raise
                self._retry.wait(attempt)
                write.state, write.refusals = None, 0  # read again by the writes themselves
        raise AssertionError("unreachable")  # pragma: no cover


def said(refused: RefusedWrite) -> str:
    """Why a day takes no count, and how to mend it."""
    return f"{refused.reason}; {refused.repair}" if refused.repair else refused.reason


def _worth_retrying(fault: TransientFault) -> bool:
    return isinstance(fault, Contention) or "retryable" in fault.reason or "transport" in fault.reason


def pieces(entries: Sequence[Entry], *, whole: bool) -> Iterator[list[Entry]]:
    """``entries`` as the writes that carry them: at most ``IMPORT_PAGE_IDS`` each, and, unless the write
    puts a new item ``whole`` (no expression), what an update expression of their tally holds
    (``day_writes.within_limits``: its hours, reading names and their hours)."""
    piece: list[Entry] = []
    hours: set[str] = set()
    names: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for entry in entries:
        hour, readings = entry.message.hour, [name for name, _ in entry.message.readings]
        more = (hours | {hour}, names | set(readings), pairs | {(name, hour) for name in readings})
        fits = whole or day_writes.within_limits(hours=len(more[0]), names=len(more[1]), pairs=len(more[2]), ids=0)
        if piece and (len(piece) >= IMPORT_PAGE_IDS or not fits):
            yield piece
            piece, more = [], ({hour}, set(readings), {(name, hour) for name in readings})
        piece.append(entry)
        hours, names, pairs = more
    if piece:
        yield piece


class ImportWrite(ThreeStepUpsert):
    """One part's new rows, piece by piece (``pieces``), through the three steps; ``state`` is the day
    as last seen (``None``: not known, read before the next write; a text: why it takes no count),
    corrected by every refusal."""

    def __init__(self, counter: HistoryCounter, part: Part, state: DayState | str | None) -> None:
        super().__init__()
        self._counter = counter
        self._day = part.day
        self._identities = frozenset(e.identity for e in part.entries)
        self.state = state
        self.remaining: list[Entry] = list(part.entries)
        self.counted = 0
        self.already = 0
        self.requests = 0
        self.reads = 0
        self.refusals = 0
        self.reason: str | None = None

    @property
    def start(self) -> UpsertStep:
        missing = isinstance(self.state, DayState) and not self.state.exists
        return UpsertStep.CREATE_IF_MISSING if missing else UpsertStep.UPDATE_IF_EXISTS

    def nothing_left(self) -> bool:
        """Whether every row left is counted on the day (found there: *already*)."""
        state = self._known()
        new = [e for e in self.remaining if e.identity not in state.known]
        self.already += len(self.remaining) - len(new)
        self.remaining = new
        return not new

    def update_if_exists(self) -> Answer:
        state = self._known()
        return self._update(state) if state.exists else Answer.NEXT

    def create_if_missing(self) -> Answer:
        state = self._known()
        if state.exists:
            return Answer.NEXT
        piece = next(pieces(self.remaining, whole=True))
        tally, ids = Tally.of(e.message for e in piece), [e.identity for e in piece]
        added, page = (ids, None) if len(ids) <= IMPORT_DAY_IDS else ([], import_page_id(ids))
        params = day_writes.import_create(self._counter.table, self._day, tally, added=added, page=page)
        return self._send(params, piece, state, tally, page, create=True)

    def update_after_race(self) -> Answer:
        state = self._known()
        if not state.exists:  # day items are never deleted
            raise TransientFault("the day item is missing after its insert")
        return self._update(state)

    def _update(self, state: DayState) -> Answer:
        piece = next(pieces(self.remaining, whole=False))
        tally, ids = Tally.of(e.message for e in piece), [e.identity for e in piece]
        fits = len(state.imports.ids) + len(ids) <= IMPORT_DAY_IDS
        added, page = (ids, None) if fits else ([], import_page_id(ids))
        guard = Imported(state.imports.seq, added, page)
        view = state.view
        params = day_writes.update(self._counter.table, self._day, tally, view.hours, guard, readings=view.readings)
        return self._send(params, piece, state, tally, page, create=False)

    def _send(
        self,
        params: dict[str, Any],
        piece: list[Entry],
        state: DayState,
        tally: Tally,
        page: bytes | None,
        *,
        create: bool,
    ) -> Answer:
        """The write (with its page, in one transaction). Written: the piece is counted, and the rest
        written next. Refused: the day as the refusal returned it, and the step it calls for."""
        counter = self._counter
        ids = [e.identity for e in piece]
        self.requests += 1
        if page is None:
            answer = dynamo.single_write(counter.client, "PutItem" if create else "UpdateItem", params)
            written, item = answer.written, answer.item
        else:
            action = expressions.put(params) if create else expressions.update(params)
            page_put = day_writes.import_page_put(counter.ledger, self._day, page, ids)
            written, item = self._transact([action, expressions.put(page_put)])
        if written:
            self.counted += len(piece)
            self.remaining = self.remaining[len(piece) :]
            self.state = state.after(tally, ids, page)
            return Answer.AGAIN
        self.refusals += 1
        if self.refusals > REFUSALS:
            raise Contention(f"the day {self._day[1]} of sensor {self._day[0]} kept moving on: other imports write it")
        self.state = self._read(item)
        return Answer.NEXT if bool(item) == create else Answer.AGAIN

    def _transact(self, actions: list[dict[str, Any]]) -> tuple[bool, dict[str, Any]]:
        refusals = dynamo.transact_refusals(self._counter.client, actions)
        if refusals is None:
            return True, {}
        fault = dynamo.cancellation_fault([r.code for r in refusals], [r.message for r in refusals])
        if fault is not None:
            raise fault
        if refusals[0].code != dynamo.CONDITIONAL_CHECK_FAILED:  # only the page's: it is there, unnamed
            raise RefusedWrite(
                f"the ledger holds the page of imported rows {actions[1]['Put']['Item'][schema.LEDGER_KEY]['S']} that "
                f"the day item of sensor {self._day[0]}, {self._day[1]} does not name (put back by hand?)",
                repair=repairs.day_item(*self._day, schema.IMPORT_PAGES),
            )
        return False, refusals[0].item

    def _known(self) -> DayState:
        """The day's state; read (strongly consistent) when not known."""
        if self.state is None:
            got = dynamo.call(
                "GetItem",
                lambda: self._counter.client.get_item(
                    TableName=self._counter.table, Key=schema.day_key(*self._day), ConsistentRead=True
                ),
            )
            self.reads += 1
            self.state = self._read(dict(got.get("Item") or {}))
        if isinstance(self.state, str):
            raise RefusedWrite(self.state)  # already said with its repair
        return self.state

    def _read(self, item: dict[str, Any]) -> DayState:
        """The day as ``item`` (strongly consistent) shows it, the pages it names that were not read yet
        read now."""
        known = self.state.pages if isinstance(self.state, DayState) else {}
        try:
            names = ImportView.of_item(item).pages
        except MalformedItem:
            names = frozenset()  # day_state says why
        among = {self._day: self._identities}
        pages, requests = self._counter.pages({(self._day, p) for p in names - known.keys()}, among)
        self.reads += requests
        return day_state(item, self._day, {**known, **pages})
