"""A chunk of imported rows from text to counts: each row read by the message rules (``rows.py``), dated
in its sensor's zone as ingest dates a report (``Dating``), and the valid ones counted
(``counting/history.py``); what was refused, with its line and reason. The local import and the
deployed import's batch function both run a chunk through ``import_chunk``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import tzinfo

from sensor_digest.counting.history import Chunk, ChunkCount, HistoryCounter
from sensor_digest.errors import MalformedItem, RejectedMessage
from sensor_digest.history.rows import Rejected, Row, pending_of, shown
from sensor_digest.messages import PendingMessage, SensorMessage
from sensor_digest.profiles import ProfileCache


class Dating:
    """A report's day and hour in its sensor's registered zone, else the digest's (``DIGEST_TIMEZONE``);
    an unregistered sensor's rows are refused where ingest refuses its reports (``UNKNOWN_SENSORS=reject``)."""

    def __init__(self, default_zone: tzinfo, profiles: ProfileCache | None, *, reject_unknown: bool = False) -> None:
        self._zone = default_zone
        self._profiles = profiles
        self._reject_unknown = reject_unknown

    def prefetch(self, sensor_ids: Sequence[int]) -> None:
        """The profiles of these sensors, read at once (``TransientFault`` if they cannot be: no day can
        be trusted without them). A malformed profile is left to ``zone_of`` (its rows are refused)."""
        if self._profiles is None or not sensor_ids:
            return
        try:
            self._profiles.prefetch(sensor_ids)
        except MalformedItem:
            return

    def zone_of(self, sensor_id: int) -> tzinfo:
        zone = self._profiles.zone(sensor_id) if self._profiles is not None else None
        if zone is not None:
            return zone
        if self._reject_unknown and self._profiles is not None:
            raise RejectedMessage(f"sensor {sensor_id} is not registered (UNKNOWN_SENSORS=reject)")
        return self._zone

    def date(self, pending: PendingMessage) -> SensorMessage:
        """The report with its day; ``RejectedMessage`` with the reason otherwise."""
        try:
            return pending.in_zone(self.zone_of(pending.sensor_id))
        except MalformedItem as bad:
            raise RejectedMessage(
                f"sensor {pending.sensor_id}'s profile cannot be read ({bad}); remove it with "
                f"`sensor-digest sensors delete --sensor {pending.sensor_id}`, register it again, then import again"
            ) from None


@dataclass
class ReadChunk:
    """A chunk's rows read and dated: the chunk of valid reports, the rows refused so far, and the row
    each report came from."""

    chunk: Chunk
    rows: int
    rejected: list[Rejected] = field(default_factory=list)
    row_of: dict[str, Row] = field(default_factory=dict)


@dataclass
class ChunkResult:
    """A chunk's rows, counted: ``rows`` read, the ``count`` of the valid ones, and every row refused
    (by the rules, or by its day item), with its line and reason, in line order."""

    rows: int = 0
    count: ChunkCount = field(default_factory=ChunkCount)
    rejected: list[Rejected] = field(default_factory=list)


def read_chunk(object_id: bytes, rows: Sequence[Row], fmt: str, dating: Dating, *, first: int, last: int) -> ReadChunk:
    """Read and date the rows at positions ``first`` to ``last`` of an object (``rows``: those of them
    that hold a row); ``TransientFault`` when the sensors' profiles cannot be read."""
    pending: list[tuple[Row, PendingMessage]] = []
    rejected: list[Rejected] = []
    for row in rows:
        try:
            pending.append((row, pending_of(row, fmt)))
        except RejectedMessage as rejection:
            rejected.append(Rejected(row.line, rejection.reason, shown(row)))
        except Exception as exc:  # a parser bug on hostile input: the row is kept with the reason
            rejected.append(Rejected(row.line, f"unexpected error while reading the row: {exc!r}", shown(row)))
    dating.prefetch(sorted({p.sensor_id for _, p in pending}))
    messages: list[SensorMessage] = []
    row_of: dict[str, Row] = {}
    for row, report in pending:
        try:
            message = dating.date(report)
        except RejectedMessage as rejection:
            rejected.append(Rejected(row.line, rejection.reason, shown(row)))
            continue
        messages.append(message)
        row_of[message.message_id] = row
    return ReadChunk(Chunk(object_id, first, last, messages), len(rows), rejected, row_of)


def count_chunk(counter: HistoryCounter, read: ReadChunk) -> ChunkResult:
    """Count a chunk read; ``TransientFault`` when the tables could not be read or written: what was
    written stands, and the chunk counted again counts the rest (its tokens find what was)."""
    count = counter.count(read.chunk)
    rejected = list(read.rejected)
    for message, reason in count.refused:
        row = read.row_of[message.message_id]
        rejected.append(Rejected(row.line, f"its day item refuses the count: {reason}", shown(row)))
    rejected.sort(key=lambda r: r.line)
    return ChunkResult(read.rows, count, rejected)


def import_chunk(
    counter: HistoryCounter, object_id: bytes, rows: Sequence[Row], fmt: str, dating: Dating, *, first: int, last: int
) -> ChunkResult:
    """``read_chunk``, then ``count_chunk``."""
    return count_chunk(counter, read_chunk(object_id, rows, fmt, dating, first=first, last=last))
