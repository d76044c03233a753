"""What a container remembers between batches, to spend fewer reads and refused writes: never what a
count rests on (every write is conditioned on the item as it is), only what saves asking again.
Each is shared by the threads of a container, and bounded (least recently used forgotten).

- ``KnownDays``: the sensor-days whose day item exists (day items are never deleted), each with its
  ``DayView`` (its kind, page and identities for the ledger; its hours map and readings for every
  writer), so a sensor-day is read about once per container, not once per batch, and a day item
  from before hours has its map created by its first write instead of being refused for it;
- ``FrozenPages``: the identities of pages that never change again, read once: a compact day's pages
  before the one being filled, and the pages of a day's imported identities;
- ``CreatedDays``: what became of the last days a lookup found missing (the missing-day bet,
  ``Policies.bet_on_created_days``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Hashable, Iterable
from dataclasses import replace
from typing import Any, Generic, TypeVar

from sensor_digest.counting.outcomes import GroupOutcome
from sensor_digest.store.day_view import DayKey, DayView, ReadingsView

KNOWN_DAYS_KEPT = 100_000  # sensor-days remembered per container as existing (about 15 MB at most)


class KnownDays:
    """Sensor-days known to have their day item (day items are never deleted), each with what a
    counter keeps of it (the ledger: its ``DayView``), least recently used forgotten past
    ``limit``; shared by the threads of a container."""

    def __init__(self, limit: int = KNOWN_DAYS_KEPT) -> None:
        self._days: OrderedDict[DayKey, Any] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def add(self, days: Iterable[DayKey], value: Any = None) -> None:
        """Remember ``days`` with ``value``; a view whose readings were written by hand is kept without
        what was seen of them (a repair may come any moment: the next write with readings finds out)."""
        if isinstance(value, DayView) and value.readings.broken is not None:
            value = replace(value, readings=ReadingsView())
        with self._lock:
            for day in days:
                self._days[day] = value
                self._days.move_to_end(day)
            while len(self._days) > self._limit:
                self._days.popitem(last=False)

    def get(self, day: DayKey) -> Any:
        """What is kept of ``day`` (``None``: nothing, or not known)."""
        with self._lock:
            return self._days.get(day)

    def unknown(self, days: Iterable[DayKey]) -> list[DayKey]:
        with self._lock:
            return sorted(d for d in set(days) if d not in self._days)


class CreatedDays:
    """What became of the last ``window`` day items a lookup found missing, by the time this
    container wrote them: whether another invocation had created one meanwhile. Several invocations
    draining one backlog all read a new day as missing, and all but the first to write it would pay
    a refused insert; while most recent ones were created meanwhile, a day found missing is bet to
    exist and starts at the update (1 write when it does; a refused update and the insert when not).
    Only where the update is one single-item write (``DayCounter.may_bet``): a lost bet then costs
    what a won one saves. ``Policies.bet_on_created_days`` switches it off."""

    def __init__(self, window: int = 32, least: int = 8) -> None:
        self._recent: deque[bool] = deque(maxlen=window)
        self._least = least
        self._lock = threading.Lock()

    def likely_created(self) -> bool:
        with self._lock:
            return len(self._recent) >= self._least and 2 * sum(self._recent) > len(self._recent)

    def heard(self, outcome: GroupOutcome) -> None:
        """How the write of a day found missing went: whether the day item was there at its first
        write (an insert refused, or an update, the bet's, that did without the insert); nothing
        when no write of it was answered (it failed, or was deferred)."""
        if not outcome.steps or not (outcome.counted or outcome.duplicates):
            return
        there = outcome.insert_refused if outcome.steps[0] == "insert" else "insert" not in outcome.steps
        with self._lock:
            self._recent.append(there)


FROZEN_IDS_KEPT = 500_000
"""Identities of frozen pages a container keeps (about 40 MB at most), least recently used
forgotten: a hot sensor's pages are read once, not at every batch."""


P = TypeVar("P", bound=Hashable)


class FrozenPages(Generic[P]):
    """The identities of pages that will never change, by sensor-day and page, least recently used
    forgotten past ``limit`` identities; shared by the threads of a container."""

    def __init__(self, limit: int = FROZEN_IDS_KEPT) -> None:
        self._pages: OrderedDict[tuple[DayKey, P], frozenset[bytes]] = OrderedDict()
        self._held = 0
        self._limit = limit
        self._lock = threading.Lock()

    def held(self, day: DayKey, pages: Iterable[P]) -> tuple[set[bytes], list[P]]:
        """The identities of ``pages`` held here, and the pages not held (to be read), in one look:
        what a caller gets is its own, whatever another thread keeps or forgets meanwhile."""
        out: set[bytes] = set()
        unread: list[P] = []
        with self._lock:
            for page in pages:
                found = self._pages.get((day, page))
                if found is None:
                    unread.append(page)
                else:
                    self._pages.move_to_end((day, page))
                    out |= found
        return out, unread

    def keep(self, day: DayKey, page: P, ids: set[bytes]) -> None:
        with self._lock:
            if (day, page) in self._pages:
                return
            self._pages[(day, page)] = frozenset(ids)
            self._held += len(ids)
            while self._held > self._limit and len(self._pages) > 1:
                _, dropped = self._pages.popitem(last=False)
                self._held -= len(dropped)
