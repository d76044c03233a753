"""What the ledger knows of a day item: whether it exists, which kind of ledger it was begun under,
and, for the compact ledger, which page of identities it is filling and how full it is.

A day item's kind is fixed when it is created and never changes:

- **compact** (it carries ``IdPage``): created by the compact ledger; its reports' identities are
  hashes in its ``Ids`` (page 0) and in ledger pages 1, 2, ... (``identities.py``);
- **per-message** (no ``IdPage``): created by the per-message ledger, by an earlier version, or in
  ordered mode; every message counted on it has a marker ``MSG#<sensor_id>#<event_id>``, and so does
  every message counted on it from now on: a day begun under markers is honoured by markers.

A compact day is *hashed* while every report counted on it left its hash: its ``HashedCount`` (added
with each hash, in the same write) equals its ``DataCount``. A writer that keeps no hashes (a release
before the compact ledger, rolled back to; ordered mode; at-least-once) adds to ``DataCount`` alone,
and from then on the day is not hashed: a report's hash missing from it no longer proves the report
new, so every report counted on it also writes its marker, on condition that it does not exist (the
earlier release wrote one with each count). A write that relies on the hashes alone is conditioned on
``HashedCount = DataCount``, so a container that missed the change learns it from the refusal.
A compact day item from a release before ``HashedCount`` is hashed when its ``HourCounts`` hold all
of its ``DataCount`` (those releases kept hours and hashes alike; the ones that kept no hashes kept
no hours either); its first write sets ``HashedCount`` on condition that ``DataCount`` is still what
was read (``rebase``).

``IdPage`` can only name a page the day's count can have filled: pages before it hold 72 identities
each (but those a put-back day item moved past, counted in ``SkippedPages``), so a day item whose
``IdPage`` is past ``max_page`` (one written by hand) is refused before any page is read, and its
reports are rejected with the repair.

A view is what this container last saw; it may be behind (another invocation wrote since), never
ahead, so a write's conditions are what decide: a refused write returns the item as it is, and the
view is corrected from it. Pages before the one being filled never change again (every write of a
page is conditioned on the day item's ``IdPage`` naming it or the page before), so ``FrozenPages``
keeps their identities for the container's life, read once, strongly consistent.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from sensor_digest.counting.identities import DAY_IDS, PAGE_IDS
from sensor_digest.counting.outcomes import DayKey
from sensor_digest.errors import MalformedItem
from sensor_digest.store import schema

FROZEN_IDS_KEPT = 500_000
"""Identities of frozen pages a container keeps (about 40 MB at most), least recently used
forgotten: a hot sensor's pages are read once, not at every batch."""


class Kind(Enum):
    MISSING = "missing"
    PER_MESSAGE = "per-message"
    COMPACT = "compact"


@dataclass(frozen=True)
class DayView:
    """A day item as last seen: its kind; for a compact one, the page being filled (0: the day item
    itself), how many identities the day item holds and how many the page being filled was seen
    to hold (at least that many: others may have added since)."""

    kind: Kind
    page: int = 0
    day_ids: int = 0
    page_ids: int = 0
    skip_to: int = 0  # the page to start next, when the one after ``page`` was found taken
    hashed: bool = True  # every report counted on the day left its hash (see the module)
    rebase: int | None = None  # hashed, as a release before ``HashedCount`` left it: its ``DataCount`` then

    @property
    def next_page(self) -> int:
        """The page a write that overflows the one being filled starts."""
        return max(self.skip_to, self.page + 1)

    @classmethod
    def of_item(cls, item: Mapping[str, Any]) -> DayView:
        """The view of a day item as read (``{}``: there is none)."""
        if not item:
            return MISSING
        if schema.ID_PAGE not in item:
            return PER_MESSAGE
        page = schema.number_of(item, schema.ID_PAGE)
        count = schema.number_of(item, schema.DATA_COUNT) if schema.DATA_COUNT in item else 0
        skipped = schema.number_of(item, schema.SKIPPED_PAGES) if schema.SKIPPED_PAGES in item else 0
        highest = max_page(count) + max(0, skipped)
        if not 0 <= page <= highest:
            raise MalformedItem(
                f"{schema.describe(item)}: {schema.ID_PAGE} {page} is no page a day of {count} reports can have "
                f"(0 to {highest})",
                schema.ID_PAGE,
            )
        view = cls(Kind.COMPACT, page=page, day_ids=len(ids_of(item)))
        if schema.HASHED_COUNT in item:
            return replace(view, hashed=schema.number_of(item, schema.HASHED_COUNT) == count)
        if schema.DATA_COUNT not in item:  # created empty, nothing counted yet
            return view
        if _hours_hold(item, count):  # a release before HashedCount, and nothing else, counted here
            return replace(view, rebase=count)
        return replace(view, hashed=False)

    @classmethod
    def of_item_or_none(cls, item: Mapping[str, Any]) -> DayView | None:
        """``of_item``, or ``None`` for a day item without the contract's shape: a lookup learns
        nothing from it, and the write that meets it rejects its reports with the reason."""
        try:
            return cls.of_item(item)
        except MalformedItem:
            return None

    def seen_in_page(self, ids: int) -> DayView:
        """The view once the page being filled was seen holding ``ids`` identities."""
        return replace(self, page_ids=max(self.page_ids, ids))


def _hours_hold(item: Mapping[str, Any], count: int) -> bool:
    """Whether a day item's ``HourCounts`` hold all of its ``count``: every release that kept hours
    also kept hashes on a compact day, and the releases that kept neither added to ``DataCount``
    alone, so on a day item without ``HashedCount`` this says that no writer without hashes counted."""
    try:
        hours = schema.hour_counts_of_item(item)
    except MalformedItem:
        return False
    return hours is not None and sum(hours.values()) == count


def max_page(count: int) -> int:
    """The highest ``IdPage`` a compact day of ``count`` reports can have: page ``p`` is begun only
    once the day item's ``DAY_IDS`` and pages 1 to ``p - 1`` (``PAGE_IDS`` each) are full, by a write
    that adds an identity to it, and every identity was counted at least once."""
    return 0 if count <= DAY_IDS else 1 + (count - DAY_IDS - 1) // PAGE_IDS


MISSING = DayView(Kind.MISSING)
PER_MESSAGE = DayView(Kind.PER_MESSAGE)
UNSEEN = DayView(Kind.COMPACT)
"""The view of a day item nobody read (a failed lookup): a compact day on page 0, the cheapest
guess; the write's conditions correct it at the cost of one refused write."""


def ids_of(item: Mapping[str, Any]) -> set[bytes]:
    """The identities an item holds (a day item's page 0, or a ledger page)."""
    value = item.get(schema.IDS)
    if not isinstance(value, Mapping):
        return set()
    return {bytes(v) for v in value.get("BS", [])}


class FrozenPages:
    """The identities of pages that will never change, by sensor-day and page, least recently used
    forgotten past ``limit`` identities; shared by the threads of a container."""

    def __init__(self, limit: int = FROZEN_IDS_KEPT) -> None:
        self._pages: OrderedDict[tuple[DayKey, int], frozenset[bytes]] = OrderedDict()
        self._held = 0
        self._limit = limit
        self._lock = threading.Lock()

    def held(self, day: DayKey, pages: range) -> tuple[set[bytes], list[int]]:
        """The identities of ``pages`` held here, and the pages not held (to be read), in one look:
        what a caller gets is its own, whatever another thread keeps or forgets meanwhile."""
        out: set[bytes] = set()
        unread: list[int] = []
        with self._lock:
            for page in pages:
                found = self._pages.get((day, page))
                if found is None:
                    unread.append(page)
                else:
                    self._pages.move_to_end((day, page))
                    out |= found
        return out, unread

    def keep(self, day: DayKey, page: int, ids: set[bytes]) -> None:
        with self._lock:
            if (day, page) in self._pages:
                return
            self._pages[(day, page)] = frozenset(ids)
            self._held += len(ids)
            while self._held > self._limit and len(self._pages) > 1:
                _, dropped = self._pages.popitem(last=False)
                self._held -= len(dropped)
