"""The order in which a batch's groups are written: every sensor-day has a fixed place on a ring
(``ring_place``) and each invocation starts at a random place of its own (``ring_order``), jumping half
its remaining ring ahead when it meets another writer (``jump_away``). See ``base.py``."""

from __future__ import annotations

import random
import zlib
from collections import deque

from sensor_digest.counting.outcomes import DayKey
from sensor_digest.messages import SensorMessage


def ring_place(key: DayKey) -> int:
    """A sensor-day's fixed place on the ring, the same in every container."""
    return zlib.crc32(f"{key[0]}#{key[1]}".encode())


def ring_order(groups: list[tuple[DayKey, list[SensorMessage]]]) -> list[tuple[DayKey, list[SensorMessage]]]:
    """``groups`` round the ring from a random place: two invocations of one backlog start at
    places of their own and then move the same way, so they rarely write the same day item at once
    (with a shuffle each, every one of their writes could meet the other's)."""
    ring = sorted(groups, key=lambda group: ring_place(group[0]))
    start = random.randrange(len(ring)) if ring else 0  # noqa: S311 - a place to start, not a secret
    return ring[start:] + ring[:start]


def jump_away(pending: deque[tuple[DayKey, list[SensorMessage]]]) -> None:
    """Half the groups still to write moved behind the other half: an invocation that met another
    one on the ring continues half a ring away from it, instead of walking beside it and meeting
    it on every day item."""
    pending.rotate(-(len(pending) // 2))
