"""The counting mechanisms that save write units or dollars and that correctness does not rest on,
each a named policy the benchmark can switch off (``python -m bench.policies``; what each earns is
in docs/benchmarks.md, "What each mechanism earns").

- ``ring_order``: every sensor-day has a fixed place on a ring (``ring_place``) and each invocation
  starts at a random place of its own (``ring_order``), so two invocations walking one backlog move
  round the ring one behind the other instead of meeting on the same day items (off: the groups in
  the order the batch names them);
- ``defer_contended``: a group whose write met another writer (a contended transaction) is written
  again at the end of the batch, by when the other has moved on, rather than retried at once (off:
  retried in its place, with the backoff);
- ``bet_on_created_days``: while most days a lookup found missing were created by another
  invocation before this one wrote them, a day found missing starts at the update
  (``memory.CreatedDays``);
- ``keep_frozen_pages``: a compact day's pages before the one being filled never change again, so a
  container keeps their identities after one read (``memory.FrozenPages``; off: read at each write
  that needs them).
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from sensor_digest.store.day_view import DayKey

G = TypeVar("G", bound=tuple[DayKey, Sequence[object]])


@dataclass(frozen=True)
class Policies:
    """Which saving mechanisms a counter uses (all, by default: see the module)."""

    ring_order: bool = True
    defer_contended: bool = True
    bet_on_created_days: bool = True
    keep_frozen_pages: bool = True

    def order(self, groups: list[G]) -> list[G]:
        """The order a wave's groups are written in."""
        return ring_order(groups) if self.ring_order else list(groups)


ALL = Policies()


def ring_place(key: DayKey) -> int:
    """A sensor-day's fixed place on the ring, the same in every container."""
    return zlib.crc32(f"{key[0]}#{key[1]}".encode())


def ring_order(groups: list[G]) -> list[G]:
    """``groups`` round the ring from a random place: two invocations of one backlog start at
    places of their own and then move the same way, so they rarely write the same day item at once
    (with a shuffle each, every one of their writes could meet the other's)."""
    ring = sorted(groups, key=lambda group: ring_place(group[0]))
    start = random.randrange(len(ring)) if ring else 0  # noqa: S311 - a place to start, not a secret
    return ring[start:] + ring[:start]
