"""What a container knows of a day item (``DayView``), and the one reading of an item as read or as
a refused write returned it (``view_of``; ``ReturnValuesOnConditionCheckFailure=ALL_OLD``): the
day's kind, its page, its identities, whether it is hashed, its hours map (``HoursMap``), its
readings' statistics (``ReadingsView``) and its imported rows (``ImportView``). A counter never
retries blind: every write rests on a view, and a refusal corrects it.

**Hashed days.** A compact day is *hashed* while every report counted on it left its hash: its
``HashedCount`` (added with each hash, in the same write) equals its ``DataCount``. A writer that
keeps no hashes (a release before the compact ledger, rolled back to; ordered mode; at least once)
adds to ``DataCount`` alone; from then on a report's missing hash no longer proves it new there, and
the ledger writes a marker for every report of the day too. A write that relies on hashes alone is
conditioned on ``HashedCount = DataCount``. Every compact day item this project writes holds
``HashedCount``; one without it (written by hand) is not hashed.

**Pages.** ``IdPage`` can only name a page the day's count can have filled (pages before it hold 72
identities each, but for those a put-back day item moved past, counted in ``SkippedPages``): a day
item whose ``IdPage`` is past ``max_page`` (written by hand) reads as malformed to a writer that keeps
identities, before any page is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from sensor_digest.errors import MalformedItem
from sensor_digest.store import schema
from sensor_digest.store.identities import DAY_IDS, PAGE_IDS
from sensor_digest.store.tally import HourStats, Tally, readings_of_item

DayKey = tuple[int, str]
"""A sensor-day: (sensor id, ``YYYY-MM-DD``)."""


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


@dataclass(frozen=True)
class ReadingsView:
    """What a container knows of a day item's readings' statistics: whether their map is there
    (``None``: not known), which names' maps are, and what it saw of each (name, hour) (an hour not
    named was not there): its statistics as read, of which a writer relies on a single value's
    (count 1: known exactly) and on a list's least and greatest (bounds: other writers only move
    them outwards)."""

    there: bool | None = None
    names: frozenset[str] = frozenset()
    hours: Mapping[tuple[str, str], HourStats] = field(default_factory=dict)
    broken: str | None = None  # why the map is not as this project writes it (written by hand)
    repairs: int | None = None  # ReadingsRepairs as seen (None: absent): the writes of readings rest on it
    broken_by: str = schema.READINGS  # the attribute at fault, when ``broken``

    @classmethod
    def of_item(cls, item: Mapping[str, Any]) -> ReadingsView:
        """What a day item as read (``{}``: none) shows; ``broken`` says why when its readings are not
        as this project writes them: a write of readings resting on them could never meet its
        conditions, and is refused (``update``); a write of reports without readings goes on."""
        try:
            kept = readings_of_item(item)
            repairs = schema.number_of(item, schema.READINGS_REPAIRS) if schema.READINGS_REPAIRS in item else None
        except MalformedItem as bad:
            return cls(there=True, broken=str(bad), broken_by=bad.attribute or schema.READINGS)
        if schema.READINGS not in item:
            return cls(there=False, repairs=repairs)
        hours = {(name, hour): stats for name, reading in kept.items() for hour, stats in reading.hours.items()}
        return cls(there=True, names=frozenset(kept), hours=hours, repairs=repairs)

    def after(self, tally: Tally) -> ReadingsView:
        """What is known once a write of ``tally`` (resting on this view) committed."""
        if not tally.readings:
            return self
        hours = dict(self.hours)
        for name, reading in tally.readings.items():
            for hour, stats in reading.hours.items():
                seen = hours.get((name, hour))
                hours[(name, hour)] = stats if seen is None else seen.merged(stats)
        return ReadingsView(True, self.names | frozenset(tally.readings), hours, repairs=self.repairs)


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
    hours: HoursMap = HoursMap.ADD
    readings: ReadingsView = field(default_factory=ReadingsView)
    imports: ImportView = field(default_factory=ImportView)
    imports_broken: MalformedItem | None = None  # its import attributes are not as the import writes them

    def written(self, tally: Tally) -> DayView:
        """The view once a write of ``tally`` resting on it committed: the item there (a writer without
        identities created it: no ``IdPage``), its hours map and readings there."""
        kind = Kind.PER_MESSAGE if self.kind is Kind.MISSING else self.kind
        return replace(self, kind=kind, hours=HoursMap.ADD, readings=self.readings.after(tally))

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


def view_of(item: Mapping[str, Any], *, identities: bool = True) -> DayView:
    """The view of a day item as read (``{}``: there is none): the one reading of a day item.

    ``identities``: the reader keeps identities (the compact ledger, the import), whose writes rest on
    the ledger attributes, so a day item whose ledger attributes no writer of this project leaves is
    ``MalformedItem`` (see the module). A reader that keeps none (at least once, ordered mode) rests on
    none of them: to it such an item is a day of markers, and this never raises. Either way, readings
    not as this project writes them are ``readings.broken`` (a write of readings resting on them is
    refused, ``day_writes.update``; a write of reports without readings goes on), and import attributes
    not as the import writes them are ``imports_broken`` (a live report that names an ``event_id``
    cannot be checked against them: it is refused with the repair; the others go on)."""
    if not item:
        return MISSING
    imports, broken = _imports_of(item)
    seen = replace(
        PER_MESSAGE,
        hours=HoursMap.after(item),
        readings=ReadingsView.of_item(item),
        imports=imports,
        imports_broken=broken,
    )
    if schema.ID_PAGE not in item and schema.HASHED_COUNT not in item:
        return seen
    try:
        return _compact(item, seen)
    except MalformedItem:
        if identities:
            raise
        return seen


def view_or_none(item: Mapping[str, Any]) -> DayView | None:
    """``view_of``, or ``None`` for a day item without the contract's shape: a lookup learns nothing
    from it, and the write that meets it rejects its reports with the reason."""
    try:
        return view_of(item)
    except MalformedItem:
        return None


def _compact(item: Mapping[str, Any], seen: DayView) -> DayView:
    """A compact day item's view (``seen``: what any reader sees of it); ``MalformedItem`` for ledger
    attributes no writer of this project leaves."""
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
    if schema.IDS in item or page > 0:  # another type holds no identity, nor does none past page 0 (40 did)
        schema.attribute_of(item, schema.IDS, "BS")
    hashed = schema.HASHED_COUNT in item and schema.number_of(item, schema.HASHED_COUNT) == count
    return replace(seen, kind=Kind.COMPACT, page=page, day_ids=len(ids_of(item)), hashed=hashed)


def _imports_of(item: Mapping[str, Any]) -> tuple[ImportView, MalformedItem | None]:
    """What a day item says of its imported rows, or why it cannot be read."""
    try:
        return ImportView.of_item(item), None
    except MalformedItem as bad:
        return ImportView(), bad


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


def page_ids_of(item: Mapping[str, Any]) -> set[bytes]:
    """The identities an identity page holds (``{}``: no page); ``MalformedItem`` naming ``Ids`` when
    it is no binary set (written by hand): its reports would otherwise be checked against nothing."""
    if schema.IDS not in item:
        return set()
    return {bytes(v) for v in schema.attribute_of(item, schema.IDS, "BS")}


def applied_sequence_of(item: Mapping[str, Any], source: str) -> int | None:
    """The highest sequence number of queue ``source`` applied to a day item (``None``: none was)."""
    return schema.applied_sequence_of_item(item, source)
