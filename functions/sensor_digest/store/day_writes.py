"""Every write of a sensor-day, and every condition it rests on, built here; and what the item a
refused write returns says.

A counter decides *what* to write to a sensor-day (``counting/``): how much, on which step of
update -> insert -> update, on what it rests. This module spells the write as DynamoDB's
parameters, each condition from a named part, every name and value a placeholder, as Powertools'
persistence layer spells its records' (``utilities/idempotency/persistence/dynamodb.py``):

- ``Tally``: what a set of reports adds to its day item, whatever the mode: ``DataCount`` and their
  ``HourCounts``. A statistic of the reports added to the day item goes here, and nowhere else.
- ``HoursMap``: whether the write adds to the day item's hours map, or creates it (a day item
  written before hours were kept holds none: the map is created on condition that it is still
  absent, the map upsert's missing-map step).
- the guard of the write, one per mode: ``Exists`` (a day begun under markers; at least once's
  first update), ``Anyway`` (at least once's update after the insert race), ``Compact`` (the
  compact ledger: its page, its identities new and fitting, the day still *hashed*),
  ``AfterSequence`` (ordered mode: the group's first sequence number past the one applied).
- ``update`` (the ``UpdateItem`` that adds a tally, alone or as a transaction's action), ``create``
  (the ``PutItem`` of a new day item, whole, on condition that it does not exist), ``page_update``
  (an identity page of the compact ledger) and ``marker`` (a per-message marker).
- reading the item a refusal returns (``ReturnValuesOnConditionCheckFailure=ALL_OLD``): ``view_of``
  (what the compact ledger learns: the day's kind, its page, its identities, whether it is hashed),
  ``hours_map_of``, ``ids_of``, ``applied_sequence_of``.

Every write asks for the item as it was when refused, so a counter never retries blind.

**Hashed days.** A compact day is *hashed* while every report counted on it left its hash: its
``HashedCount`` (added with each hash, in the same write) equals its ``DataCount``. A writer that
keeps no hashes (a release before the compact ledger, rolled back to; ordered mode; at least once)
adds to ``DataCount`` alone; from then on a report's missing hash no longer proves it new there, and
the ledger writes a marker for every report of the day too. A write that relies on hashes alone is
conditioned on ``HashedCount = DataCount``. A compact day item of a release before ``HashedCount`` is
hashed when its ``HourCounts`` hold all of its ``DataCount`` (those releases kept hours and hashes
alike, the ones without hashes kept no hours): its first write sets ``HashedCount``, on condition
that ``DataCount`` is still what was read (``DayView.rebase``).

**Pages.** ``IdPage`` can only name a page the day's count can have filled (pages before it hold 72
identities each, but for those a put-back day item moved past, counted in ``SkippedPages``): a day
item whose ``IdPage`` is past ``max_page`` (written by hand) reads as malformed, before any page is read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Context, Decimal, localcontext
from enum import Enum
from typing import Any, Protocol

from sensor_digest.errors import MalformedItem, RefusedWrite
from sensor_digest.store import expressions, repairs, schema
from sensor_digest.store.identities import DAY_IDS, PAGE_IDS

Params = dict[str, Any]
DayKey = tuple[int, str]
"""A sensor-day: (sensor id, ``YYYY-MM-DD``)."""

# -- the conditions, named ----------------------------------------------------------------------

ITEM_EXISTS = "attribute_exists(#pk)"
ITEM_ABSENT = "attribute_not_exists(#pk)"
HOURS_MAP_THERE = "attribute_type(#hours, :mtype)"
HOURS_MAP_ABSENT = "(attribute_not_exists(#hours) OR NOT attribute_type(#hours, :mtype))"
ON_PAGE = "#page = :page"
ON_FIRST_PAGE = "(attribute_not_exists(#page) OR #page = :page)"  # a day the import created holds no IdPage
STILL_HASHED = "(#count = #hashed OR (attribute_not_exists(#count) AND attribute_not_exists(#hashed)))"
HASHED_AS_READ = "#count = :seen AND attribute_not_exists(#hashed)"
IDS_FIT = "(attribute_not_exists(#ids) OR size(#ids) <= :room)"
AFTER_APPLIED = "(attribute_not_exists(#applied) OR #applied < :first)"
READINGS_ABSENT = "attribute_not_exists(#R)"
READINGS_THERE = "attribute_type(#R, :mtype)"
AFTER_FIRST_RELEASES_PAIR = "(attribute_not_exists(#seq) OR #src <> :src OR #seq < :first)"


def ids_new(ids: Sequence[bytes], values: Params) -> list[str]:
    """``NOT contains(#ids, :iN)`` for each identity of ``ids`` (none of them counted here yet)."""
    terms = []
    for i, digest in enumerate(ids):
        values[f":i{i}"] = {"B": digest}
        terms.append(f"NOT contains(#ids, :i{i})")
    return terms


# -- what a write adds --------------------------------------------------------------------------


class Report(Protocol):
    """What a tally reads of a counted report."""

    @property
    def count(self) -> int: ...

    @property
    def hour(self) -> str: ...

    @property
    def readings(self) -> tuple[tuple[str, Decimal], ...]: ...


EXACT = Context(prec=80)
"""The arithmetic of readings: exact for every value the message rules admit (15 significant digits,
squares of 30, sums of a write's at most a few hundred)."""


@dataclass(frozen=True)
class HourStats:
    """One reading name's values in one hour: how many, their sum, the least and the greatest."""

    count: int
    total: Decimal
    low: Decimal
    high: Decimal

    def add(self, value: Decimal) -> HourStats:
        return HourStats(self.count + 1, self.total + value, min(self.low, value), max(self.high, value))


@dataclass(frozen=True)
class ReadingTally:
    """One reading name's share of a tally: its values by hour, and the day's sum of their squares."""

    hours: Mapping[str, HourStats]
    squares: Decimal


@dataclass(frozen=True)
class Tally:
    """What a set of reports adds to its day item: their count, their counts by hour of the day
    (``HH``), and their readings' statistics by name."""

    count: int = 0
    hours: Mapping[str, int] = field(default_factory=dict)
    readings: Mapping[str, ReadingTally] = field(default_factory=dict)

    @classmethod
    def of(cls, reports: Iterable[Report]) -> Tally:
        hours: Counter[str] = Counter()
        by_name: dict[str, dict[str, HourStats]] = {}
        squares: dict[str, Decimal] = {}
        with localcontext(EXACT):
            for report in reports:
                hours[report.hour] += report.count
                for name, value in report.readings:
                    stats = by_name.setdefault(name, {})
                    seen = stats.get(report.hour)
                    stats[report.hour] = seen.add(value) if seen else HourStats(1, value, value, value)
                    squares[name] = squares.get(name, Decimal(0)) + value * value
        readings = {
            name: ReadingTally(dict(sorted(stats.items())), squares[name]) for name, stats in sorted(by_name.items())
        }
        return cls(sum(hours.values()), dict(sorted(hours.items())), readings)

    def item(self) -> schema.Item:
        """The tally as the attributes of a new day item."""
        item: schema.Item = {
            schema.DATA_COUNT: {"N": str(self.count)},
            schema.HOUR_COUNTS: {"M": {hour: {"N": str(n)} for hour, n in self.hours.items()}},
            schema.READINGS_COVER: {"N": str(self.count)},
        }
        if self.readings:
            item[schema.READINGS] = {"M": {name: _name_map(r) for name, r in self.readings.items()}}
        return item


def number(value: Decimal | int) -> dict[str, str]:
    """A number as DynamoDB keeps it, in plain digits (no exponent)."""
    return {"N": format(value, "f") if isinstance(value, Decimal) else str(value)}


def hour_value(stats: HourStats) -> dict[str, Any]:
    """An hour's statistics as a day item keeps them: its one value when it holds one, else the list
    ``[count, sum, minimum, maximum]`` (a single value is its own sum, minimum and maximum: 6 bytes
    where the list takes about 20, and most hours of a busy sensor hold one or two readings)."""
    if stats.count == 1:
        return number(stats.total)
    return {"L": [number(stats.count), number(stats.total), number(stats.low), number(stats.high)]}


def _name_map(reading: ReadingTally) -> dict[str, Any]:
    """A reading name's whole map in a day item (``schema.READINGS``): the day's sum of squares, and
    each hour's statistics (``hour_value``) under its ``HH``."""
    kept = {hour: hour_value(stats) for hour, stats in reading.hours.items()}
    return {"M": {schema.READING_SQUARES: number(reading.squares), **kept}}


class HoursMap(Enum):
    """What a write does to the day item's ``HourCounts``."""

    ADD = "add"  # the item holds the map: add to its elements (``ADD`` of an element fails without one)
    CREATE = "create"  # it holds none (written before hours were kept), or no map: create it

    @classmethod
    def after(cls, item: Mapping[str, Any]) -> HoursMap:
        """What a refused write's returned item (``{}``: none) calls for."""
        return cls.CREATE if item and not has_hours(item) else cls.ADD


# -- what the compact ledger knows of a day item -----------------------------------------------


class Kind(Enum):
    MISSING = "missing"
    PER_MESSAGE = "per-message"
    COMPACT = "compact"


Single = Decimal
"""An hour that holds one value, known exactly."""
Bounds = tuple[Decimal, Decimal]
"""An hour that holds several values: a value its minimum is at most, and one its maximum is at least
(other writers only move them outwards)."""


@dataclass(frozen=True)
class ReadingsView:
    """What a container knows of a day item's readings' statistics: whether their map is there
    (``None``: not known), which names' maps are, and what it saw of each (name, hour): one value
    (``Single``, exactly), or the bounds of several (``Bounds``); an hour not named was not there."""

    there: bool | None = None
    names: frozenset[str] = frozenset()
    hours: Mapping[tuple[str, str], Single | Bounds] = field(default_factory=dict)
    broken: str | None = None  # why the map is not as this project writes it (written by hand)
    repairs: int | None = None  # ReadingsRepairs as seen (None: absent): the writes of readings rest on it
    broken_by: str = schema.READINGS  # the attribute at fault, when ``broken``

    @classmethod
    def of_item(cls, item: Mapping[str, Any]) -> ReadingsView:
        """What a day item as read (``{}``: none) shows; ``broken`` says why when its readings are not
        as this project writes them: a write of readings resting on them could never meet its
        conditions, and is refused (``update``); a write of reports without readings goes on."""
        try:
            schema.readings_of_item(item)
            repairs = schema.number_of(item, schema.READINGS_REPAIRS) if schema.READINGS_REPAIRS in item else None
        except MalformedItem as bad:
            return cls(there=True, broken=str(bad), broken_by=bad.attribute or schema.READINGS)
        stored = item.get(schema.READINGS)
        if not isinstance(stored, Mapping) or not isinstance(stored.get("M"), Mapping):
            return cls(there=bool(item) and stored is not None, repairs=repairs)
        hours: dict[tuple[str, str], Single | Bounds] = {}
        for name, value in stored["M"].items():
            kept = value.get("M", {}) if isinstance(value, Mapping) else {}
            for hour, entry in (kept if isinstance(kept, Mapping) else {}).items():
                seen = _hour_seen(entry)
                if hour != schema.READING_SQUARES and seen is not None:
                    hours[(name, hour)] = seen
        return cls(there=True, names=frozenset(stored["M"]), hours=hours, repairs=repairs)

    def after(self, tally: Tally) -> ReadingsView:
        """What is known once a write of ``tally`` (resting on this view) committed."""
        if not tally.readings:
            return self
        hours = dict(self.hours)
        for name, reading in tally.readings.items():
            for hour, stats in reading.hours.items():
                hours[(name, hour)] = _merged(hours.get((name, hour)), stats)
        return ReadingsView(True, self.names | frozenset(tally.readings), hours, repairs=self.repairs)


def _hour_seen(entry: Any) -> Single | Bounds | None:
    """What an hour's stored statistics (``hour_value``) say of it (``None``: nothing readable)."""
    if not isinstance(entry, Mapping):
        return None
    if isinstance(entry.get("N"), str):
        return Decimal(entry["N"])
    listed = entry.get("L")
    if isinstance(listed, list) and len(listed) == 4 and all(isinstance(v, Mapping) and "N" in v for v in listed):
        return (Decimal(listed[2]["N"]), Decimal(listed[3]["N"]))
    return None


def _merged(seen: Single | Bounds | None, stats: HourStats) -> Single | Bounds:
    """An hour as known once ``stats`` were written to it (seen as ``seen``)."""
    if seen is None:
        return stats.total if stats.count == 1 else (stats.low, stats.high)
    low, high = (seen, seen) if isinstance(seen, Decimal) else seen
    return (min(low, stats.low), max(high, stats.high))


NOT_THERE = ReadingsView(there=False)


@dataclass(frozen=True)
class ImportView:
    """What a day item as read (``{}``: none) says of its imported rows: ``seq`` (``ImportSeq``, 0:
    none), the identities it holds
    itself, and the pages it names."""

    seq: int = 0
    ids: frozenset[bytes] = frozenset()
    pages: frozenset[bytes] = frozenset()

    @classmethod
    def of_item(cls, item: Mapping[str, Any]) -> ImportView:
        """``MalformedItem`` naming the attribute when one is not as the import writes it."""
        seq = _whole(item, schema.IMPORT_SEQ)
        return cls(seq, _binary_set(item, schema.IMPORT_IDS), _binary_set(item, schema.IMPORT_PAGES))


def _whole(item: Mapping[str, Any], name: str) -> int:
    """A count of the import's in ``item`` (0: absent); ``MalformedItem`` when below 0 or not a number."""
    value = schema.number_of(item, name) if name in item else 0
    if value < 0:
        raise MalformedItem(f"{schema.describe(item)}: {name} {value} is below 0", name)
    return value


def _binary_set(item: Mapping[str, Any], name: str) -> frozenset[bytes]:
    value = item.get(name)
    if value is None:
        return frozenset()
    if not isinstance(value, Mapping) or not isinstance(value.get("BS"), list):
        raise MalformedItem(f"{schema.describe(item)}: {name} is not a binary set", name)
    return frozenset(bytes(v) for v in value["BS"])


@dataclass(frozen=True)
class DayView:
    """A day item as a container last saw it (behind, never ahead: a refusal corrects it): its kind
    (fixed when it is created: ``IdPage`` or ``HashedCount`` marks one the compact ledger began; a
    per-message day is counted with markers to its end); for a compact one, the page being filled (0: the day item
    itself), how many identities the day item holds, how many the page being filled was seen to hold,
    the page to start next when the one after was found taken (``skip_to``), and whether it is hashed."""

    kind: Kind
    page: int = 0
    day_ids: int = 0
    page_ids: int = 0
    skip_to: int = 0
    hashed: bool = True
    rebase: int | None = None  # hashed as a release before ``HashedCount`` left it: its ``DataCount`` then
    hours: HoursMap = HoursMap.ADD
    readings: ReadingsView = field(default_factory=ReadingsView)
    imports: ImportView = field(default_factory=ImportView)
    imports_broken: MalformedItem | None = None  # its import attributes are not as the import writes them

    def written(self, tally: Tally) -> DayView:
        """The view once a write of ``tally`` resting on it committed: the item there (a writer without
        identities created it: no ``IdPage``), its hours map and readings there."""
        kind = Kind.PER_MESSAGE if self.kind is Kind.MISSING else self.kind
        return replace(self, kind=kind, rebase=None, hours=HoursMap.ADD, readings=self.readings.after(tally))

    @property
    def next_page(self) -> int:
        """The page a write that overflows the one being filled starts."""
        return max(self.skip_to, self.page + 1)

    def seen_in_page(self, ids: int) -> DayView:
        """The view once the page being filled was seen holding ``ids`` identities."""
        return replace(self, page_ids=max(self.page_ids, ids))


MISSING = DayView(Kind.MISSING, readings=NOT_THERE)
PER_MESSAGE = DayView(Kind.PER_MESSAGE)
UNSEEN = DayView(Kind.COMPACT)
"""The view of a day item nobody read (a failed lookup): a compact day on page 0, the cheapest
guess; the write's conditions correct it at the cost of one refused write."""


def max_page(count: int) -> int:
    """The highest ``IdPage`` a compact day of ``count`` reports can reach by itself: page ``p`` is
    begun only once the day item's ``DAY_IDS`` and pages 1 to ``p - 1`` are full, by a write that adds
    an identity to it, and every identity was counted at least once."""
    return 0 if count <= DAY_IDS else 1 + (count - DAY_IDS - 1) // PAGE_IDS


def view_of(item: Mapping[str, Any]) -> DayView:
    """The view of a day item as read (``{}``: there is none); ``MalformedItem`` for one whose
    ledger attributes no writer of this project leaves (see the module)."""
    if not item:
        return MISSING
    readings, hours = ReadingsView.of_item(item), HoursMap.after(item)
    imports, broken = imports_of(item)
    if schema.ID_PAGE not in item and schema.HASHED_COUNT not in item:
        return replace(PER_MESSAGE, hours=hours, readings=readings, imports=imports, imports_broken=broken)
    page = schema.number_of(item, schema.ID_PAGE) if schema.ID_PAGE in item else 0
    count = schema.number_of(item, schema.DATA_COUNT) if schema.DATA_COUNT in item else 0
    skipped = schema.number_of(item, schema.SKIPPED_PAGES) if schema.SKIPPED_PAGES in item else 0
    highest = max_page(count) + max(0, skipped)
    if not 0 <= page <= highest:
        raise MalformedItem(
            f"{schema.describe(item)}: {schema.ID_PAGE} {page} is no page a day of {count} reports can have "
            f"(0 to {highest})",
            schema.ID_PAGE,
        )
    view = DayView(
        Kind.COMPACT,
        page=page,
        day_ids=len(ids_of(item)),
        hours=hours,
        readings=readings,
        imports=imports,
        imports_broken=broken,
    )
    if schema.HASHED_COUNT in item:
        return replace(view, hashed=schema.number_of(item, schema.HASHED_COUNT) == count)
    if schema.DATA_COUNT not in item:  # created empty by an earlier release, nothing counted yet
        return view
    if _hours_hold(item, count):
        return replace(view, rebase=count)
    return replace(view, hashed=False)


def seen_of(item: Mapping[str, Any]) -> DayView:
    """What a writer that keeps no identities (at least once, ordered mode) learns of a day item as read:
    whether it is there, its hours map, its readings (its ledger attributes, even malformed, are not
    this writer's; ``MalformedItem`` for readings not as this project writes them)."""
    try:
        return view_of(item)
    except MalformedItem:
        imports, broken = imports_of(item)
        return DayView(
            Kind.PER_MESSAGE,
            hours=HoursMap.after(item),
            readings=ReadingsView.of_item(item),
            imports=imports,
            imports_broken=broken,
        )


def imports_of(item: Mapping[str, Any]) -> tuple[ImportView, MalformedItem | None]:
    """What a day item says of its imported rows, or why it cannot be read (a live report that names an
    ``event_id`` cannot be checked against them: it is refused with the repair; the others go on)."""
    try:
        return ImportView.of_item(item), None
    except MalformedItem as bad:
        return ImportView(), bad


def written_on(item: Mapping[str, Any], day: DayKey) -> DayView:
    """``seen_of`` a refused write's returned item, for the write that rests on it next: readings not as
    this project writes them are ``RefusedWrite`` with their repair (no write could meet its conditions
    on them: retrying cannot help)."""
    try:
        return seen_of(item)
    except MalformedItem as bad:
        raise RefusedWrite(str(bad), repair=repairs.day_item(*day, bad.attribute), attribute=bad.attribute) from None


def view_or_none(item: Mapping[str, Any]) -> DayView | None:
    """``view_of``, or ``None`` for a day item without the contract's shape: a lookup learns nothing
    from it, and the write that meets it rejects its reports with the reason."""
    try:
        return view_of(item)
    except MalformedItem:
        return None


def _hours_hold(item: Mapping[str, Any], count: int) -> bool:
    """Whether a day item's ``HourCounts`` hold all of its ``count``."""
    try:
        hours = schema.hour_counts_of_item(item)
    except MalformedItem:
        return False
    return hours is not None and sum(hours.values()) == count


def has_hours(item: Mapping[str, Any]) -> bool:
    """Whether a day item holds an ``HourCounts`` map."""
    stored = item.get(schema.HOUR_COUNTS)
    return isinstance(stored, Mapping) and "M" in stored


def ids_of(item: Mapping[str, Any]) -> set[bytes]:
    """The identities an item holds (a day item's page 0, or an identity page)."""
    value = item.get(schema.IDS)
    if not isinstance(value, Mapping):
        return set()
    return {bytes(v) for v in value.get("BS", [])}


def applied_sequence_of(item: Mapping[str, Any], source: str) -> int | None:
    """The highest sequence number of queue ``source`` applied to a day item (``None``: none was)."""
    return schema.applied_sequence_of_item(item, source)


# -- how much one write may carry ----------------------------------------------------------------

EXPRESSION_CHARS = 3_800
"""Below DynamoDB's 4 KB for an update or a condition expression (with room for a key's names)."""
EXPRESSION_OPERATORS = 280
"""Below DynamoDB's 300 operators and functions in an expression."""


def fits(tally: Tally, ids: int = 0) -> bool:
    """Whether a write of ``tally`` checking ``ids`` identities stays inside DynamoDB's limits on
    expressions, however little is known of the day item (every reading name's map there, no minimum
    or maximum known: the most conditions a write of it can carry). An upper bound, held to the
    built expressions by ``tests/unit/test_day_writes.py``: a counter writes a group's messages in
    chunks that fit."""
    pairs = sum(len(r.hours) for r in tally.readings.values())
    return within_limits(hours=len(tally.hours), names=len(tally.readings), pairs=pairs, ids=ids)


def within_limits(*, hours: int, names: int, pairs: int, ids: int) -> bool:
    """``fits``, from how many hours, reading names, (name, hour) pairs and identities a write holds."""
    updates = 200 + 30 * hours + 34 * names + 130 * pairs
    conditions = 340 + 30 * ids + 40 * names + 110 * pairs
    operators = 22 + 3 * ids + 2 * names + 8 * pairs  # an identity: AND NOT contains(...)
    return updates <= EXPRESSION_CHARS and conditions <= EXPRESSION_CHARS and operators <= EXPRESSION_OPERATORS


# -- the guards ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Exists:
    """The day item is there: a day begun under markers, or at least once's first update."""


@dataclass(frozen=True)
class Anyway:
    """No condition but the hours map's: at least once's update once the item was created."""


@dataclass(frozen=True)
class Compact:
    """The compact ledger's: the day still on ``view``'s page and as hashed as ``view`` says, none of
    ``checked`` in its own identities, ``added`` (page 0's share) fitting there; ``advance``: the page
    the day moves on to (past pages found taken: ``SkippedPages`` grows)."""

    view: DayView
    checked: Sequence[bytes] = ()
    added: Sequence[bytes] = ()
    advance: int | None = None


@dataclass(frozen=True)
class AfterSequence:
    """Ordered mode's: the group's first sequence number of queue ``source`` past the one applied;
    ``last`` is applied by the write."""

    source: str
    first: int
    last: int


@dataclass(frozen=True)
class Imported:
    """The history import's: the day as the writer read it: its ``ImportSeq`` (``seq``, 0: none yet) and
    its ``DataCount`` (``count``, ``None``: none), so that neither another import nor live ingest wrote it
    since; ``added`` join the day item's ``ImportIds``, or ``pages`` (written in the same transaction, the
    item's ``ImportIds`` moved into them when ``moved``) join its ``ImportPages``; ``compact``: a day of
    the compact ledger, whose ``HashedCount`` grows with the count (an imported row is known by its
    identity as a live report by its hash: the day stays *hashed*)."""

    seq: int
    count: int | None
    added: Sequence[bytes] = ()
    pages: Sequence[bytes] = ()
    moved: bool = False
    compact: bool = False


Guard = Exists | Anyway | Compact | AfterSequence | Imported


# -- the writes ---------------------------------------------------------------------------------


@dataclass
class _Parts:
    """An update expression in the making: its clauses, its conditions, and their placeholders."""

    names: dict[str, str] = field(default_factory=dict)
    values: Params = field(default_factory=dict)
    adds: list[str] = field(default_factory=list)
    sets: list[str] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)

    def expression(self) -> str:
        clauses = []
        if self.adds:
            clauses.append("ADD " + ", ".join(self.adds))
        if self.sets:
            clauses.append("SET " + ", ".join(self.sets))
        if self.removes:
            clauses.append("REMOVE " + ", ".join(self.removes))
        return " ".join(clauses)


def update(
    table: str,
    day: DayKey,
    tally: Tally,
    hours: HoursMap,
    guard: Guard,
    *,
    readings: ReadingsView | None = None,
    imports: int | None = None,
) -> Params:
    """The ``UpdateItem`` that adds ``tally`` to ``day``'s item, resting on ``guard``, on what is known
    of its readings' statistics (``readings``) and, for live reports that name an ``event_id``, on the
    day's imported rows being those seen (``imports``: its ``ImportSeq`` as read, 0: none; ``None``: no
    such report). ``RefusedWrite`` (with the repair) for readings to add to a map not as this project
    writes it: no such write could meet its conditions."""
    if tally.readings and readings is not None and readings.broken is not None:
        repair = repairs.day_item(*day, readings.broken_by)
        raise RefusedWrite(readings.broken, repair=repair, attribute=schema.READINGS)
    parts = _Parts(
        names={"#count": schema.DATA_COUNT, "#cover": schema.READINGS_COVER},
        values={":n": {"N": str(tally.count)}},
        adds=["#count :n", "#cover :n"],
    )
    _guard(parts, guard, tally, imports)
    _hours(parts, hours, tally)
    _readings(parts, tally, readings or ReadingsView())
    params: Params = {
        "TableName": table,
        "Key": schema.day_key(*day),
        "UpdateExpression": parts.expression(),
        "ExpressionAttributeNames": parts.names,
        "ExpressionAttributeValues": parts.values,
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    if parts.conditions:
        params["ConditionExpression"] = " AND ".join(parts.conditions)
    return params


def _hours(parts: _Parts, hours: HoursMap, tally: Tally) -> None:
    parts.names["#hours"] = schema.HOUR_COUNTS
    parts.values[":mtype"] = {"S": "M"}
    if hours is HoursMap.CREATE:
        parts.values[":hmap"] = Tally(hours=tally.hours).item()[schema.HOUR_COUNTS]
        parts.sets.append("#hours = :hmap")
        parts.conditions.append(HOURS_MAP_ABSENT)
        return
    for hour, n in sorted(tally.hours.items()):
        parts.names[f"#h{hour}"], parts.values[f":h{hour}"] = hour, {"N": str(n)}
        parts.adds.append(f"#hours.#h{hour} :h{hour}")
    parts.conditions.append(HOURS_MAP_THERE)


def _readings(parts: _Parts, tally: Tally, seen: ReadingsView) -> None:
    """The readings' part of an update, by what ``seen`` knows of the item. Their map, or a name's,
    not there: created whole, on condition that it still is not. Each hour of a name that is there:
    not there, set (its value, or its list) on condition that it still is not; one value ``v`` there,
    replaced by the list of it and the tally's, on condition that it is still ``v``; a list there, its
    count and sum added, and its minimum (maximum) set only where the tally's could be below (above)
    the stored one, on condition that it is (they only move outwards: where ``seen`` knows one at or
    beyond the tally's, nothing is written or checked). The day's sum of squares is added. A refusal
    returns the item, and ``seen`` is read again from it."""
    if not tally.readings:
        return
    names, values = parts.names, parts.values
    names["#R"], names["#rr"] = schema.READINGS, schema.READINGS_REPAIRS
    values[":mtype"] = {"S": "M"}
    if seen.repairs is not None:  # what is known of the statistics is from since the last repair by hand
        values[":rr"] = {"N": str(seen.repairs)}
        parts.conditions.append("#rr = :rr")
    else:
        parts.conditions.append("attribute_not_exists(#rr)")
    if seen.there is False:
        values[":R"] = {"M": {name: _name_map(r) for name, r in tally.readings.items()}}
        parts.sets.append("#R = :R")
        parts.conditions.append(READINGS_ABSENT)
        return
    parts.conditions.append(READINGS_THERE)
    for i, (name, reading) in enumerate(tally.readings.items()):
        path = f"#R.#a{i}"
        names[f"#a{i}"] = name
        if name not in seen.names:
            values[f":a{i}"] = _name_map(reading)
            parts.sets.append(f"{path} = :a{i}")
            parts.conditions.append(f"attribute_not_exists({path})")
            continue
        names["#rq"] = schema.READING_SQUARES
        values[f":a{i}q"] = number(reading.squares)
        parts.adds.append(f"{path}.#rq :a{i}q")
        parts.conditions.append(f"attribute_type({path}, :mtype)")
        for hour, stats in reading.hours.items():
            names[f"#h{hour}"] = hour
            _hour(parts, f"{path}.#h{hour}", f":a{i}h{hour}", seen.hours.get((name, hour)), stats)


def _hour(parts: _Parts, path: str, value: str, seen: Single | Bounds | None, stats: HourStats) -> None:
    """One (name, hour)'s part of ``_readings``."""
    values = parts.values
    if seen is None:
        values[value] = hour_value(stats)
        parts.sets.append(f"{path} = {value}")
        parts.conditions.append(f"attribute_not_exists({path})")
        return
    if isinstance(seen, Decimal):
        with localcontext(EXACT):
            merged = HourStats(1 + stats.count, seen + stats.total, min(seen, stats.low), max(seen, stats.high))
        values[value], values[f"{value}v"] = hour_value(merged), number(seen)
        parts.sets.append(f"{path} = {value}")
        parts.conditions.append(f"{path} = {value}v")
        return
    low, high = seen
    values[":ltype"] = {"S": "L"}
    values[f"{value}n"], values[f"{value}s"] = number(stats.count), number(stats.total)
    parts.sets += [f"{path}[0] = {path}[0] + {value}n", f"{path}[1] = {path}[1] + {value}s"]
    parts.conditions.append(f"attribute_type({path}, :ltype)")
    if stats.low < low:
        values[f"{value}l"] = number(stats.low)
        parts.sets.append(f"{path}[2] = {value}l")
        parts.conditions.append(f"{path}[2] > {value}l")
    if stats.high > high:
        values[f"{value}x"] = number(stats.high)
        parts.sets.append(f"{path}[3] = {value}x")
        parts.conditions.append(f"{path}[3] < {value}x")


def _guard(parts: _Parts, guard: Guard, tally: Tally, imports: int | None = None) -> None:
    names, values = parts.names, parts.values
    if isinstance(guard, Exists):
        names["#pk"] = schema.SENSOR_ID
        parts.conditions.append(ITEM_EXISTS)
    elif isinstance(guard, AfterSequence):
        names.update(
            {
                "#pk": schema.SENSOR_ID,
                "#applied": schema.applied_sequence_name(guard.source),
                "#seq": schema.APPLIED_SEQUENCE,
                "#src": schema.SEQUENCE_SOURCE,
            }
        )
        values[":last"] = {"S": schema.sequence_text(guard.last)}
        values[":first"] = {"S": schema.sequence_text(guard.first)}
        values[":src"] = {"S": guard.source}
        parts.sets.append("#applied = :last")
        parts.conditions += [ITEM_EXISTS, AFTER_APPLIED, AFTER_FIRST_RELEASES_PAIR]
    elif isinstance(guard, Compact):
        _compact(parts, guard, tally)
    elif isinstance(guard, Imported):
        _imported(parts, guard)
    if imports is not None:
        _imports_as_read(parts, imports)


def _compact(parts: _Parts, guard: Compact, tally: Tally) -> None:
    view, names, values = guard.view, parts.names, parts.values
    names["#page"], names["#hashed"] = schema.ID_PAGE, schema.HASHED_COUNT
    values[":page"] = {"N": str(view.page)}
    parts.conditions.append(ON_PAGE if view.page else ON_FIRST_PAGE)
    if view.rebase is not None:  # from before HashedCount, hashed as read: set it, if still so
        values[":hashed"], values[":seen"] = {"N": str(view.rebase + tally.count)}, {"N": str(view.rebase)}
        parts.sets.append("#hashed = :hashed")
        parts.conditions.append(HASHED_AS_READ)
    else:
        parts.adds.append("#hashed :n")
        if view.hashed:
            parts.conditions.append(STILL_HASHED)
    if guard.checked or guard.added:
        names["#ids"] = schema.IDS
    parts.conditions += ids_new(guard.checked, values)
    if guard.added:
        parts.adds.append("#ids :added")
        values[":added"] = {"BS": list(guard.added)}
        values[":room"] = {"N": str(DAY_IDS - len(guard.added))}
        parts.conditions.append(IDS_FIT)
    if guard.advance is not None:
        parts.sets.append("#page = :next")
        values[":next"] = {"N": str(guard.advance)}
        if guard.advance > view.page + 1:  # past pages found taken: the day item was put back behind them
            names["#skipped"] = schema.SKIPPED_PAGES
            values[":skipped"] = {"N": str(guard.advance - view.page - 1)}
            parts.adds.append("#skipped :skipped")


def create(
    table: str,
    day: DayKey,
    tally: Tally,
    *,
    ids: Sequence[bytes] | None = None,
    sequence: tuple[str, int] | None = None,
) -> Params:
    """The ``PutItem`` of ``day``'s new item, whole (its tally), on condition that it does not exist:
    a compact day with ``ids`` (page 0's identities: ``IdPage`` 0, ``HashedCount`` its count), a day
    of ordered mode with ``sequence`` (its queue and the last number applied)."""
    item: schema.Item = {**schema.day_key(*day), **tally.item()}
    if ids is not None:
        item[schema.ID_PAGE] = {"N": "0"}
        item[schema.IDS] = {"BS": list(ids)}
        item[schema.HASHED_COUNT] = {"N": str(tally.count)}
    if sequence is not None:
        source, last = sequence
        item[schema.applied_sequence_name(source)] = {"S": schema.sequence_text(last)}
    params = expressions.put_if_absent(table, item)
    params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return params


def page_update(
    ledger: str, day: DayKey, page: int, *, expires_at: int, checked: Sequence[bytes], added: Sequence[bytes]
) -> Params:
    """Identity page ``page`` of ``day`` (``IDS#<sensor>#<day>#<page>``) gains ``added``: on condition
    that none of ``checked`` is there and that ``added`` fits; its lifetime starts again."""
    values: Params = {
        ":added": {"BS": list(added)},
        ":room": {"N": str(PAGE_IDS - len(added))},
        ":expires": {"N": str(expires_at)},
    }
    return {
        "TableName": ledger,
        "Key": schema.id_page_key(*day, page),
        "UpdateExpression": "ADD #ids :added SET #expires = :expires",
        "ConditionExpression": " AND ".join([*ids_new(checked, values), IDS_FIT]),
        "ExpressionAttributeNames": {"#ids": schema.IDS, "#expires": schema.EXPIRES_AT},
        "ExpressionAttributeValues": values,
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }


def marker(ledger: str, key: str, *, day: str, count: int, expires_at: int, if_absent: bool = True) -> Params:
    """The ``PutItem`` of a marker (``MSG#...``: on condition that it does not exist, so that a report
    counted before is refused; ``FIFO#...``: unconditional, a marker written twice is one)."""
    item = {
        **schema.ledger_key(key),
        schema.EXPIRES_AT: {"N": str(expires_at)},
        schema.MARKER_DAY: {"S": day},
        schema.MARKER_COUNT: {"N": str(count)},
    }
    if if_absent:
        return expressions.put_if_absent(ledger, item, schema.LEDGER_KEY)
    return {"TableName": ledger, "Item": item}


# -- the import's writes (docs/import.md) -------------------------------------------------------
#
# The history import keeps each counted row's identity (8 bytes) for good, on the day it counted on,
# in the same write as its count: in the day item's ``ImportIds`` while it has room, else in pages
# ``IMPIDS#<sensor>#<day>#<page id>`` written in the same transaction and named in the day item's
# ``ImportPages`` (the item's own ``ImportIds`` move into the first such page, so the item keeps 8
# bytes a page). Every import write adds one to ``ImportSeq`` and rests on ``ImportSeq`` and
# ``DataCount`` being what the writer read: a write is refused whenever another import, or live
# ingest, wrote the day since. So what the writer knows of the day's imported identities (the day
# item's, and its pages', immutable once written) and of its live reports is all there is. A day the
# import creates is a day of the compact ledger (hashed, on page 0): the live reports that follow
# are known by their hashes, and check the day's imported identities themselves (``imports`` of
# ``update``: a live write that names an ``event_id`` rests on ``ImportSeq``).

IMPORT_SEQ_AS_READ = "#iseq = :iseq"
IMPORT_SEQ_NONE = "attribute_not_exists(#iseq)"
COUNT_AS_READ = "#count = :counted"
COUNT_NONE = "attribute_not_exists(#count)"


def _imports_as_read(parts: _Parts, seq: int) -> None:
    """A live write's condition that the day's imported rows are those its writer checked."""
    parts.names["#iseq"] = schema.IMPORT_SEQ
    if seq:
        parts.values[":iseq"] = {"N": str(seq)}
        parts.conditions.append(IMPORT_SEQ_AS_READ)
    else:
        parts.conditions.append(IMPORT_SEQ_NONE)


def _imported(parts: _Parts, guard: Imported) -> None:
    parts.names["#pk"] = schema.SENSOR_ID
    parts.values[":one"] = {"N": "1"}
    parts.adds.append("#iseq :one")
    parts.conditions.append(ITEM_EXISTS)
    _imports_as_read(parts, guard.seq)
    if guard.count is None:
        parts.conditions.append(COUNT_NONE)
    else:
        parts.values[":counted"] = {"N": str(guard.count)}
        parts.conditions.append(COUNT_AS_READ)
    if guard.compact:
        parts.names["#hashed"] = schema.HASHED_COUNT
        parts.adds.append("#hashed :n")
    if guard.added or guard.moved:
        parts.names["#iids"] = schema.IMPORT_IDS
    if guard.added:
        parts.values[":iids"] = {"BS": list(guard.added)}
        parts.adds.append("#iids :iids")
    elif guard.moved:
        parts.removes.append("#iids")
    if guard.pages:
        parts.names["#ipages"] = schema.IMPORT_PAGES
        parts.values[":ipages"] = {"BS": list(guard.pages)}
        parts.adds.append("#ipages :ipages")


def import_create(table: str, day: DayKey, tally: Tally, *, added: Sequence[bytes], pages: Sequence[bytes]) -> Params:
    """The ``PutItem`` of ``day``'s new item from the import: its tally and its identities (``added`` in
    the item, or ``pages`` named), a compact day (every report hashed: ``HashedCount``; on page 0, its
    ``IdPage`` left out, 8 bytes that would take a sorted day of 100 rows past 1 KB), on condition that
    it does not exist."""
    item: schema.Item = {**schema.day_key(*day), **tally.item()}
    item[schema.HASHED_COUNT] = {"N": str(tally.count)}
    item[schema.IMPORT_SEQ] = {"N": "1"}
    if added:
        item[schema.IMPORT_IDS] = {"BS": list(added)}
    if pages:
        item[schema.IMPORT_PAGES] = {"BS": list(pages)}
    params = expressions.put_if_absent(table, item)
    params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return params


def import_page_put(ledger: str, day: DayKey, page: bytes, identities: Sequence[bytes]) -> Params:
    """The ``PutItem`` of a page of ``day``'s imported identities, on condition that it is not there;
    never expires."""
    item = {**schema.import_page_key(*day, page), schema.IDS: {"BS": list(identities)}}
    return expressions.put_if_absent(ledger, item, schema.LEDGER_KEY)
