"""What the ledger knows of a day item: whether it exists, which kind of ledger it was begun under,
and, for the compact ledger, which page of identities it is filling and how full it is.

A day item's kind is fixed when it is created and never changes:

- **compact** (it carries ``IdPage``): created by the compact ledger; its reports' identities are
  hashes in its ``Ids`` (page 0) and in ledger pages 1, 2, ... (``identities.py``);
- **per-message** (no ``IdPage``): created by the per-message ledger, by an earlier version, or in
  ordered mode; every message counted on it has a marker ``MSG#<sensor_id>#<event_id>``, and so does
  every message counted on it from now on: a day begun under markers is honoured by markers.

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

from sensor_digest.counting.base import DayKey
from sensor_digest.errors import MalformedItem
from sensor_digest.store import schema

IDPAGE_REPAIR = (  # what to do with a day item whose IdPage does not read as one
    "mend the item (its IdPage must be the number of the sensor-day's highest IDS#<sensor_id>#<day>#<page> "
    "item in the ledger table, 0 when there is none)"
)

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
        if page < 0:
            raise MalformedItem(f"{schema.describe(item)}: {schema.ID_PAGE} {page} is below 0")
        return cls(Kind.COMPACT, page=page, day_ids=len(ids_of(item)))

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
