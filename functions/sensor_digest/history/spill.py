"""The import's two phases meet here: a row read and dated (``Entry``), written to the partition of its
sensor-day, and read back by the phase that counts it (docs/import.md, "Any order, any size").

An import first reads every row of an object (``chunks.read_rows``), then counts partition by partition:
all the rows of a sensor-day land in one partition (``partition_of``), so each sensor-day is written
once per import, in a few large writes, whatever order its rows came in. Locally a partition is a file
of a temporary folder; on AWS an S3 object per chunk of rows and partition. Either way an entry is one
JSON line (``encode``, ``decode``), in the order its rows were read.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from sensor_digest.messages import SensorMessage

DayKey = tuple[int, str]

PARTITION_ROWS = 200_000
"""Rows a partition holds on average: the unit of the counting phase's memory."""
MAX_PARTITIONS = 1_000


@dataclass(frozen=True)
class Entry:
    """A valid row, dated: what its count adds (``count``, ``hour``, ``readings``: a tally reads them),
    its identity on its day (8 bytes), and where it came from (``line``, its ``event_id`` when it names
    one, its text for the error report)."""

    sensor_id: int
    day: str
    hour: str
    identity: bytes
    count: int
    readings: tuple[tuple[str, Decimal], ...]
    line: int
    event_id: str | None
    text: str

    @property
    def key(self) -> DayKey:
        return (self.sensor_id, self.day)

    @classmethod
    def of(cls, message: SensorMessage, identity: bytes, line: int, text: str) -> Entry:
        event_id = message.event_id if message.named else None
        day, hour, readings = message.day, message.hour, message.readings
        return cls(message.sensor_id, day, hour, identity, message.count, readings, line, event_id, text)


def encode(entry: Entry) -> str:
    """An entry as one JSON line (its readings as the exact decimal text)."""
    readings = [[name, str(value)] for name, value in entry.readings]
    fields = [entry.sensor_id, entry.day, entry.hour, entry.identity.hex(), entry.count, readings]
    return json.dumps([*fields, entry.line, entry.event_id, entry.text], ensure_ascii=False, separators=(",", ":"))


class SpillError(ValueError):
    """A line of a partition that no import wrote (a spill object changed by hand)."""


def decode(line: str) -> Entry:
    """The entry of one JSON line of ``encode``; ``SpillError`` for anything else."""
    try:
        value: Any = json.loads(line)
        sensor, day, hour, identity, count, readings, at, event_id, text = value
        read = tuple((str(name), Decimal(str(number))) for name, number in readings)
        key = (int(sensor), str(day), str(hour), bytes.fromhex(identity))
        entry = Entry(*key, int(count), read, int(at), event_id, text)
    except (ValueError, TypeError, InvalidOperation) as exc:
        raise SpillError(f"a spilled row cannot be read ({exc}): {line[:200]!r}") from None
    if len(entry.identity) != 8 or not isinstance(entry.text, str) or not isinstance(entry.event_id, str | None):
        raise SpillError(f"a spilled row is not as the import writes it: {line[:200]!r}")
    return entry


def decode_all(lines: Iterable[str]) -> Iterator[Entry]:
    for line in lines:
        if line.strip():
            yield decode(line)


def partitions_for(rows: int) -> int:
    """How many partitions an object of ``rows`` rows is counted in."""
    return max(1, min(MAX_PARTITIONS, math.ceil(rows / PARTITION_ROWS)))


def partition_of(key: DayKey, partitions: int) -> int:
    """The partition of a sensor-day: the same in every process, for every path."""
    return zlib.crc32(f"{key[0]}#{key[1]}".encode()) % partitions
