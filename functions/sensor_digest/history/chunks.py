"""A chunk of an object's rows from text to entries: each row read by the message rules (``rows.py``),
dated as ingest dates a report but in the zone of its sensor's first import (``Dating``), and given its
identity (``identity_of``); what was refused, with its line and reason. The local import and the deployed
import's read step both run a chunk through ``read_rows``, the same code on the same text; their counting
phase then counts the entries partition by partition (``spill.py``, ``counter.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import KW_ONLY, dataclass, field
from zoneinfo import ZoneInfo

from sensor_digest import zones
from sensor_digest.errors import MalformedItem, RejectedMessage, UnknownTimeZone
from sensor_digest.history.pins import ZonePins
from sensor_digest.history.rows import Rejected, Row, pending_of, shown
from sensor_digest.history.spill import Entry
from sensor_digest.messages import PendingMessage, SensorMessage
from sensor_digest.profiles import ProfileCache, dating_zone
from sensor_digest.store import schema
from sensor_digest.store.identities import import_event_hash, import_row_hash


@dataclass(eq=False)
class Dating:
    """A report's day and hour, in the zone its sensor's imported rows are dated in for good: the one
    its first import used (``pins``), which was its registered zone then, else the digest's
    (``DIGEST_TIMEZONE``, locally ``--timezone``). A re-run, or another object carrying the same reports,
    so dates each row on the day it counted on, whatever changed in the profiles since. An
    unregistered sensor's rows are refused where ingest refuses its reports (``UNKNOWN_SENSORS=reject``)."""

    default_zone: ZoneInfo
    profiles: ProfileCache | None
    pins: ZonePins
    _: KW_ONLY
    reject_unknown: bool = False
    max_workers: int = 8

    def prefetch(self, sensor_ids: Sequence[int]) -> None:
        """The profiles and pins of these sensors, read at once, and the pins of those that have none
        written (``TransientFault`` if they cannot be: no day can be trusted without them). A sensor
        whose rows are refused gets no pin (``date`` says why)."""
        if not sensor_ids:
            return
        if self.profiles is not None:
            with contextlib.suppress(MalformedItem):  # ``date`` rejects its rows, with the reason
                self.profiles.prefetch(sensor_ids)
        self.pins.prefetch(sensor_ids)
        unpinned = []
        for sensor_id in sensor_ids:
            if self.pins.get(sensor_id) is None:
                try:
                    unpinned.append((sensor_id, self._current(sensor_id).key))
                except (RejectedMessage, MalformedItem):
                    continue
        if len(unpinned) <= 1:
            for sensor_id, zone in unpinned:
                self.pins.pin(sensor_id, zone)
            return
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(unpinned))) as pool:
            list(pool.map(lambda pair: self.pins.pin(*pair), unpinned))

    def _current(self, sensor_id: int) -> ZoneInfo:
        """The zone the sensor's profile gives now, else the default; ``RejectedMessage`` for a sensor
        whose rows are refused, ``MalformedItem`` for a profile that cannot be read."""
        return dating_zone(self.profiles, sensor_id, self.default_zone, reject_unknown=self.reject_unknown)

    def zone_of(self, sensor_id: int) -> tuple[ZoneInfo, bool]:
        """The zone the sensor's rows are dated in, and whether it is kept from an earlier import while
        the profile (or the default) now gives another."""
        current = self._current(sensor_id)
        pinned = self.pins.pin(sensor_id, current.key)
        if pinned == current.key:
            return current, False
        try:
            return zones.load(pinned), True
        except UnknownTimeZone as exc:
            raise RejectedMessage(
                f"the zone pinned for sensor {sensor_id}'s imported rows ({schema.IMPORT_ZONE_PREFIX}{sensor_id} in "
                f"the ledger) cannot be loaded: {exc.reason}; put back the zone its first import used"
            ) from None

    def date(self, pending: PendingMessage) -> tuple[SensorMessage, bool]:
        """The report with its day, and whether its zone is kept (``zone_of``); ``RejectedMessage`` with
        the reason otherwise."""
        try:
            zone, kept = self.zone_of(pending.sensor_id)
        except MalformedItem as bad:
            raise RejectedMessage(
                f"sensor {pending.sensor_id}'s profile cannot be read ({bad}); remove it with "
                f"`sensor-digest sensors delete --sensor {pending.sensor_id}`, register it again, then import again"
            ) from None
        return pending.in_zone(zone), kept


@dataclass
class ReadRows:
    """A chunk's rows read and dated: the valid ones as entries, the refused ones with their reason, and how
    many rows kept the zone of their sensor's first import where its profile now gives another."""

    entries: list[Entry] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    rows: int = 0
    zone_kept: int = 0


def read_rows(object_id: bytes, rows: Sequence[Row], fmt: str, dating: Dating) -> ReadRows:
    """Read and date ``rows`` of an object; ``TransientFault`` when the sensors' profiles cannot be read."""
    pending: list[tuple[Row, PendingMessage]] = []
    out = ReadRows(rows=len(rows))
    for row in rows:
        try:
            pending.append((row, pending_of(row, fmt)))
        except RejectedMessage as rejection:
            out.rejected.append(Rejected(row.line, rejection.reason, shown(row)))
        except Exception as exc:  # a parser bug on hostile input: the row is kept with the reason
            out.rejected.append(Rejected(row.line, f"unexpected error while reading the row: {exc!r}", shown(row)))
    dating.prefetch(sorted({p.sensor_id for _, p in pending}))
    for row, report in pending:
        try:
            message, zone_kept = dating.date(report)
        except RejectedMessage as rejection:
            out.rejected.append(Rejected(row.line, rejection.reason, shown(row)))
            continue
        out.zone_kept += zone_kept
        out.entries.append(Entry.of(message, identity_of(object_id, row, message), row.line, shown(row)))
    out.rejected.sort(key=lambda r: r.line)  # refused by the rules first, then by dating: in line order
    return out


def identity_of(object_id: bytes, row: Row, message: SensorMessage) -> bytes:
    """A row's identity: its ``event_id`` (of its sensor: the day item that keeps it names the sensor),
    else its object and its place there."""
    return import_event_hash(message.event_id) if message.named else import_row_hash(object_id, row.position)


def refused_rows(refused: Sequence[tuple[Entry, str]]) -> list[Rejected]:
    """Rows their day refused, as the error report lists them."""
    return [Rejected(entry.line, reason, entry.text) for entry, reason in refused]
