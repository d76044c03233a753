"""A sensor-day of an import's partition: what is known of it (``DayState``: its item, its imported
identities, what the live ledger keeps of its live reports), and its rows classified and added up into the
writes that carry them (``DayRows``, ``Piece``); ``history/counter.py`` reads the days and makes the writes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from enum import Enum
from typing import Any

from sensor_digest.errors import MalformedItem, RefusedWrite
from sensor_digest.history.spill import DayKey, Entry
from sensor_digest.store import repairs, schema, sizes
from sensor_digest.store.day_view import DayView, ImportView, Kind, view_of
from sensor_digest.store.expressions import within_limits
from sensor_digest.store.identities import IMPORT_PAGE_IDS, identity_hash
from sensor_digest.store.tally import EXACT, HourStats, Tally

PIECE_IDS = 5 * IMPORT_PAGE_IDS
"""The most identities one write carries (five pages: 800 KB, in one transaction of at most 4 MB)."""
UNIT_ROWS = 20_000
"""A day's new rows are added up by hour and by a part of their identity, in units of about this many
rows at most: a write carries whole units, so no write need carry more than ``PIECE_IDS``."""


class Overlap(Enum):
    """What becomes of a row that names an ``event_id`` on a day holding live reports the pipeline no
    longer knows all of (ordered mode keeps none; the live ledger's pages expire): it may repeat one."""

    REFUSE = "refuse"  # rejected, with the reason: never counted twice
    COUNT = "count"  # counted: the operator says the live pipeline never received these rows


# -- what a day holds -----------------------------------------------------------------------------


@dataclass(frozen=True)
class LiveSide:
    """What the live ledger keeps of a day's live reports, for the rows that name an ``event_id``:
    ``reports`` (how much of ``DataCount`` is not the import's), the hashes of the day's compact ledger
    (its own and its pages'), the days the rows' markers (``MSG#``) name, and whether every live report of
    the day is known so (``complete``: a hashed compact day whose pages are all there)."""

    held: bool = False
    hashes: frozenset[bytes] = frozenset()
    markers: Mapping[str, str] = field(default_factory=dict)
    complete: bool = True
    why: str = ""  # why not complete

    def repeats(self, entry: Entry) -> bool:
        """Whether ``entry`` is a live report of its day."""
        event_id = entry.event_id
        if event_id is None or not self.held:
            return False
        return identity_hash(event_id) in self.hashes or self.markers.get(event_id) == entry.day


@dataclass(frozen=True)
class DayState:
    """A sensor-day as last read: whether its item ``exists``, what the item says for a write
    (``view``), its ``DataCount`` (``None``: none), its imported rows (``imports``), the identities known
    counted on it among those being written (``known``: its own, and its pages'), its live side, and
    the reading names its item cannot take (``refused_names``, with the reason: all of them when its
    readings were written by hand in no shape of ours)."""

    exists: bool
    view: DayView
    count: int | None
    imports: ImportView
    known: frozenset[bytes]
    live: LiveSide = LiveSide()
    refused_names: frozenset[str] = frozenset()
    refused_reason: str = ""

    def refuses(self, entry: Entry) -> str | None:
        """Why the day's item cannot take ``entry``'s readings (``None``: it can)."""
        if not entry.readings:
            return None
        if self.view.readings.broken is not None:
            return self.refused_reason
        if self.refused_names & {name for name, _ in entry.readings}:
            return self.refused_reason
        return None

    @property
    def compact(self) -> bool:
        return self.view.kind is Kind.COMPACT


def state_of(item: Mapping[str, Any], day: DayKey, pages: Mapping[bytes, frozenset[bytes]], live: LiveSide) -> DayState:
    """The state of a day as ``item`` shows it (``{}``: none), its identities completed from ``pages``;
    ``RefusedWrite`` (with the reason and the repair) when no write of the import can rest on it."""
    view = view_of(item, identities=False)
    try:
        counting_attributes(item)
        imports = ImportView.of_item(item)
        count = schema.number_of(item, schema.DATA_COUNT) if schema.DATA_COUNT in item else None
    except MalformedItem as bad:
        raise RefusedWrite(str(bad), repair=repairs.day_item(*day, bad.attribute)) from None
    readings = view.readings
    reason = ""
    if readings.broken is not None:
        why = f"{readings.broken}; {repairs.day_item(*day, readings.broken_by)}"
        reason = f"its day item refuses the count: {why}"
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
    return DayState(bool(item), view, count, imports, frozenset(known), live, refused_reason=reason)


def counting_attributes(item: Mapping[str, Any]) -> None:
    """``MalformedItem`` naming the first of a day item's counting attributes that live ingest could not
    add to either (``schema.check_day_item``: its counts, its hours, its live ledger's ``Ids``,
    ``HashedCount`` and ``IdPage``, its size): the import cannot tell which of its rows the item's live
    reports were, nor add to it. Its readings are not judged here: a row without them still counts."""
    if not item:
        return
    for check in (lambda: schema.check_day_item(item, sizes.item_bytes(item)), lambda: view_of(item)):
        try:
            check()
        except MalformedItem as bad:
            if bad.attribute not in (schema.READINGS, schema.READINGS_REPAIRS):
                raise


def live_reports(item: Mapping[str, Any]) -> bool:
    """Whether a day item may hold live reports: a day of the compact ledger holds none while its
    count is hashed (the import adds to ``HashedCount`` too) and it keeps no live hash; another day
    (markers, ordered mode, or none at all) may whenever it holds a count."""
    count = schema.number_of(item, schema.DATA_COUNT) if schema.DATA_COUNT in item else 0
    if not count:
        return False
    if schema.ID_PAGE not in item and schema.HASHED_COUNT not in item:
        return True
    hashed = schema.number_of(item, schema.HASHED_COUNT) if schema.HASHED_COUNT in item else -1
    page = schema.number_of(item, schema.ID_PAGE) if schema.ID_PAGE in item else 0
    return hashed != count or page > 0 or schema.IDS in item


# -- what a day's new rows add up to --------------------------------------------------------------


@dataclass
class Unit:
    """New rows of one hour of a day (and one part of their identities): their count, their readings'
    statistics, their identities."""

    hour: str
    count: int = 0
    stats: dict[str, HourStats] = field(default_factory=dict)
    squares: dict[str, Decimal] = field(default_factory=dict)
    ids: list[bytes] = field(default_factory=list)

    def add(self, entry: Entry) -> None:
        self.count += entry.count
        self.ids.append(entry.identity)
        with localcontext(EXACT):
            for name, value in entry.readings:
                seen = self.stats.get(name)
                self.stats[name] = seen.add(value) if seen else HourStats.one(value)
                self.squares[name] = self.squares.get(name, Decimal(0)) + value * value


@dataclass
class Piece:
    """What one write carries: the tally of its rows and their identities (``counted``), and the
    identities of live reports it records for good (``adopted``: no count)."""

    units: list[Unit] = field(default_factory=list)
    adopted: list[bytes] = field(default_factory=list)

    @property
    def counted(self) -> list[bytes]:
        return [i for unit in self.units for i in unit.ids]

    @property
    def ids(self) -> list[bytes]:
        return self.counted + self.adopted

    def tally(self) -> Tally:
        hours: dict[str, int] = {}
        by_name: dict[str, dict[str, HourStats]] = {}
        squares: dict[str, Decimal] = {}
        with localcontext(EXACT):
            for unit in self.units:
                hours[unit.hour] = hours.get(unit.hour, 0) + unit.count
                for name, stats in unit.stats.items():
                    kept = by_name.setdefault(name, {})
                    seen = kept.get(unit.hour)
                    kept[unit.hour] = stats if seen is None else seen.merged(stats)
                    squares[name] = squares.get(name, Decimal(0)) + unit.squares[name]
        return Tally.of_parts(hours, by_name, squares)


def pieces(units: Sequence[Unit], adopted: Sequence[bytes]) -> list[Piece]:
    """``units`` (in hour order) as the writes that carry them: as many whole units a write as its update
    expression holds (``within_limits``: its hours, reading names and their hours) and at most
    ``PIECE_IDS`` identities; the ``adopted`` identities with the first (a piece of their own without)."""
    out: list[Piece] = []
    piece, hours, names, pairs = Piece(), set[str](), set[str](), set[tuple[str, str]]()
    held = 0
    for unit in units:
        more = (hours | {unit.hour}, names | set(unit.stats), pairs | {(n, unit.hour) for n in unit.stats})
        fits = within_limits(hours=len(more[0]), names=len(more[1]), pairs=len(more[2]), ids=0)
        if piece.units and (not fits or held + len(unit.ids) > PIECE_IDS):
            out.append(piece)
            piece, held = Piece(), 0
            more = ({unit.hour}, set(unit.stats), {(n, unit.hour) for n in unit.stats})
        piece.units.append(unit)
        held += len(unit.ids)
        hours, names, pairs = more
    if piece.units:
        out.append(piece)
    for start in range(0, len(adopted), PIECE_IDS):
        share = list(adopted[start : start + PIECE_IDS])
        if out and start == 0 and len(out[0].ids) + len(share) <= PIECE_IDS:
            out[0].adopted = share
        else:
            out.append(Piece(adopted=share))
    return out


@dataclass
class DayPlan:
    """A day's rows classified against what is known of it: the writes still to make, and the figures."""

    pieces: list[Piece] = field(default_factory=list)
    counted: int = 0  # rows written by this import before (a refused write made the day read again)
    already: int = 0
    duplicates: int = 0
    refused: list[tuple[Entry, str]] = field(default_factory=list)
    overlapping: int = 0  # of the refused: rows that may repeat a live report (``Overlap``)


OVERLAP_REASON = (
    "sensor {sensor}'s {day} holds live reports that the pipeline no longer knows all of ({why}): "
    "this row names an event_id and may repeat one of them, so it is not counted; if the live pipeline never "
    "received it, import again with --overlap count"
)


class DayRows:
    """The classification of one day's rows, in row order (``classify``)."""

    def __init__(self, state: DayState, written: AbstractSet[bytes], overlap: Overlap, rows: int) -> None:
        self._state = state
        self._written = written
        self._overlap = overlap
        self._seen: set[bytes] = set()
        self._buckets = 1 << max(0, math.ceil(math.log2(max(1, rows / UNIT_ROWS))))
        self._units: dict[tuple[str, int], Unit] = {}
        self._adopted: list[bytes] = []
        self.plan = DayPlan()

    def add(self, entry: Entry) -> None:
        identity, state, plan = entry.identity, self._state, self.plan
        if identity in self._seen:
            plan.duplicates += 1
            return
        self._seen.add(identity)
        if identity in self._written:
            plan.counted += 1
        elif identity in state.known:
            plan.already += 1
        elif state.live.repeats(entry):
            plan.already += 1
            self._adopted.append(identity)
        elif (refused := state.refuses(entry)) is not None:
            plan.refused.append((entry, refused))
        elif entry.event_id is not None and not state.live.complete and self._overlap is Overlap.REFUSE:
            reason = OVERLAP_REASON.format(sensor=entry.sensor_id, day=entry.day, why=state.live.why)
            plan.refused.append((entry, reason))
            plan.overlapping += 1
        else:
            key = (entry.hour, identity[0] % self._buckets)
            unit = self._units.get(key)
            if unit is None:
                unit = self._units[key] = Unit(entry.hour)
            unit.add(entry)

    def done(self) -> DayPlan:
        units = [self._units[k] for k in sorted(self._units)]
        self.plan.pieces = pieces(units, self._adopted)
        return self.plan
