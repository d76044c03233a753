"""``sensor-digest import FILE``: a history file into a pipeline's tables, streamed (docs/import.md).

The file is read twice, never held: once for its identity (its content's SHA-256) and its lines (the
progress bar's total), then row by row, ``CHUNK_ROWS`` rows a chunk (``history/chunks.py``: read and
dated), each valid row written to the partition of its sensor-day in a temporary folder
(``history/spill.py``); then the partitions are counted one by one (``history/counter.py``), each
sensor-day from all of its rows at once. Rejected rows go to the error report (JSON lines: line,
reason, row), in line order. A step whose reads or writes fail (throttling, an engine that does not
answer) is tried again ``CHUNK_TRIES`` times, then the import stops: what was written stands, and
the same command again counts the rest, nothing twice (each row's identity is kept on its day).
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from typing import IO, Any, TypeVar
from zoneinfo import ZoneInfo

from sensor_digest.backoff import Backoff, RetryPolicy
from sensor_digest.errors import SensorDigestError, StoreFault, UnreadableInput
from sensor_digest.history.chunks import Dating, read_rows, refused_rows
from sensor_digest.history.counter import HistoryCounter, Overlap, PartitionCount
from sensor_digest.history.pins import ZonePins
from sensor_digest.history.reading import Skipped, lines_of, rows_of
from sensor_digest.history.record import Before, Figures, Records
from sensor_digest.history.rows import Rejected, Row
from sensor_digest.history.source import SourceObject, file_object
from sensor_digest.history.spill import Entry, decode_all, encode, partition_of, partitions_for
from sensor_digest.profiles import ProfileCache, Profiles

T = TypeVar("T")

CHUNK_ROWS = 20_000
"""Rows a chunk of a local import: the unit of its reading phase's memory. A row's identity, and how
its sensor-day is written, do not depend on it."""
BLOCK_BYTES = 1024 * 1024
CHUNK_TRIES = 5
PROFILES_KEPT_SECONDS = 24 * 3600.0
"""How long a local import keeps a sensor's profile once read (an import's length, in practice)."""
RETRY = Backoff(attempts=CHUNK_TRIES, base_seconds=0.5, cap_seconds=8.0, least=0.5)


@dataclass(frozen=True)
class Scanned:
    """A file read through once: the object it is, its size and its lines."""

    source: SourceObject
    size: int
    lines: int
    stamp: tuple[int, int, int]  # size, modification time (ns), inode, as the scan began


def stamp_of(stream: IO[bytes]) -> tuple[int, int, int]:
    """What tells that an open file changed: its size, modification time and inode."""
    found = os.fstat(stream.fileno())
    return (found.st_size, found.st_mtime_ns, found.st_ino)


CHANGED = (
    "the file changed while it was imported: stop writing to it, or import a copy. A changed file is "
    "another object: its rows without an event_id count again"
)


def scan_file(path: Path, on_bytes: Callable[[int], None] | None = None) -> Scanned:
    """The file's identity (its content's SHA-256), size and lines, in one pass of 1 MB blocks;
    ``UnreadableInput`` when it changed meanwhile."""
    digest, size, lines, last = hashlib.sha256(), 0, 0, b"\n"
    with path.open("rb") as stream:
        stamp = stamp_of(stream)
        for block in iter(lambda: stream.read(BLOCK_BYTES), b""):
            digest.update(block)
            size += len(block)
            lines += block.count(b"\n")
            last = block[-1:]
            if on_bytes is not None:
                on_bytes(len(block))
        if stamp_of(stream) != stamp or size != stamp[0]:
            raise UnreadableInput(CHANGED)
    if size and last != b"\n":
        lines += 1
    return Scanned(file_object(digest.hexdigest(), str(path)), size, lines, stamp)


@dataclass
class Progress:
    """What the progress bar shows: the phase (``reading`` the file's lines, then ``counting`` its valid
    rows partition by partition), how far it is of its total, and the figures so far."""

    lines: int = 0
    total: int = 0
    figures: Figures = field(default_factory=Figures)
    phase: str = "reading"


@dataclass
class Outcome:
    """How a local import ended: the object, its figures (all 0 when it was skipped), the error report
    (``None``: no row was rejected), and, when an earlier import left nothing to do, what it did
    (``before``)."""

    source: SourceObject
    figures: Figures
    errors: Path | None = None
    before: Before | None = None


class ReportUnwritable(SensorDigestError):
    """The error report cannot be written where it was asked for (it is the file imported, a folder,
    in a folder that is not there or not writable): said in one line, before any row is counted."""


class ErrorReport:
    """The rejected rows, as JSON lines, in line order: those the rules refused as the file is read
    (kept aside in the import's folder), then merged with those their day refused when the report is
    closed; the file is made only if there is one (an earlier run's report at the path is replaced).
    Never the file imported (``source``)."""

    def __init__(self, path: Path, source: Path) -> None:
        if path.resolve() == source.resolve() or (path.exists() and path.samefile(source)):
            raise ReportUnwritable(f"{path} is the file being imported: the error report would replace it")
        if path.is_symlink() or (path.exists() and not path.is_file()):  # /dev/null, a fifo, a link
            raise ReportUnwritable(f"{path} is not a regular file: the error report replaces what is there")
        self.path = path
        self.rows = 0
        self._aside: IO[str] | None = None
        self._refused: list[Rejected] = []
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise ReportUnwritable(f"the error report {path} cannot be written: {exc.strerror}") from None

    def write(self, rejected: list[Rejected]) -> None:
        """Rows refused as they were read, in line order."""
        if not rejected:
            return
        if self._aside is None:
            self._aside = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - closed by close()
        for row in rejected:
            self._aside.write(json.dumps(row.entry(), ensure_ascii=False) + "\n")
        self.rows += len(rejected)

    def refused(self, rejected: list[Rejected]) -> None:
        """Rows their day refused (in any order)."""
        self._refused += rejected
        self.rows += len(rejected)

    def close(self) -> None:
        if not self.rows:
            return
        later = iter([json.dumps(r.entry(), ensure_ascii=False) + "\n" for r in sorted(self._refused, key=_line)])
        aside: Iterable[str] = ()
        if self._aside is not None:
            self._aside.seek(0)
            aside = self._aside
        try:
            with self.path.open("w", encoding="utf-8") as out:
                out.writelines(heapq.merge(aside, later, key=lambda text: json.loads(text)["line"]))
        except OSError as exc:
            raise ReportUnwritable(f"the error report {self.path} cannot be written: {exc.strerror}") from None
        finally:
            if self._aside is not None:
                self._aside.close()


def _line(row: Rejected) -> int:
    return row.line


class Partitions:
    """A file's valid rows by partition (``spill.partition_of``), in a folder of their own: each
    partition a file of entries (``spill.encode``) in row order, read back as often as asked."""

    FLUSH_LINES = 50_000

    def __init__(self, folder: Path, count: int) -> None:
        self.folder = folder
        self.count = count
        self.entries = 0
        self._held: dict[int, list[str]] = {}
        self._lines = 0

    def add(self, entries: Iterable[Entry]) -> None:
        for entry in entries:
            self._held.setdefault(partition_of(entry.key, self.count), []).append(encode(entry) + "\n")
            self._lines += 1
            self.entries += 1
        if self._lines >= self.FLUSH_LINES:
            self.flush()

    def flush(self) -> None:
        for partition, lines in self._held.items():
            with self._path(partition).open("a", encoding="utf-8") as out:
                out.writelines(lines)
        self._held, self._lines = {}, 0

    def rows(self, partition: int) -> Callable[[], Iterator[Entry]]:
        path = self._path(partition)

        def read() -> Iterator[Entry]:
            if path.exists():
                with path.open(encoding="utf-8") as lines:
                    yield from decode_all(lines)

        return read

    def _path(self, partition: int) -> Path:
        return self.folder / f"{partition:05d}.jsonl"


def chunks_of(rows: Iterator[Row], size: int = CHUNK_ROWS) -> Iterator[tuple[int, list[Row]]]:
    """The rows in chunks of positions ``k * size`` to ``(k + 1) * size - 1``: ``(k, rows)``."""
    for index, group in groupby(rows, key=lambda row: row.position // size):
        yield index, list(group)


@dataclass(eq=False, kw_only=True)
class FileImport:
    """One file into one pair of tables (see the module)."""

    counter: HistoryCounter
    records: Records
    dating: Dating
    chunk_rows: int = CHUNK_ROWS
    retry: Backoff = RETRY
    folder: Path | None = None

    @classmethod
    def over(
        cls,
        client: Any,
        table: str,
        ledger: str,
        *,
        zone: ZoneInfo,
        reject_unknown: bool = False,
        chunk_rows: int = CHUNK_ROWS,
        retry: Backoff = RETRY,
        workers: int = 8,
        counting_retry: RetryPolicy | None = None,
        overlap: Overlap = Overlap.REFUSE,
        folder: Path | None = None,
    ) -> FileImport:
        """The import into ``table`` and ``ledger`` through ``client``: sensors' profiles read there, rows
        of a sensor without one (or without a pinned zone) dated in ``zone``; its partitions in a
        temporary folder under ``folder`` (the system's temporary folder by default)."""
        counter = HistoryCounter(
            table_name=table,
            ledger_table_name=ledger,
            client=client,
            max_workers=workers,
            retry=counting_retry,
            overlap=overlap,
        )
        # read once an import: a sensor's rows are dated in the zone of its first import whatever its
        # profile says later, so a profile changed meanwhile moves nothing of this import's
        registry = Profiles(table_name=table, client=client, consistent=False)
        profiles = ProfileCache(registry, ttl=PROFILES_KEPT_SECONDS)
        dating = Dating(zone, profiles, ZonePins(ledger, client), reject_unknown=reject_unknown)
        records = Records(ledger, client)
        return cls(counter=counter, records=records, dating=dating, chunk_rows=chunk_rows, retry=retry, folder=folder)

    def run(
        self,
        path: Path,
        fmt: str,
        errors: Path,
        *,
        again: bool = False,
        scanned: Scanned | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        stop: threading.Event | None = None,
    ) -> Outcome:
        """Import ``path`` (``UnreadableInput`` when no row of it can be read; ``TransientFault`` when a
        step could not be done after its tries; ``KeyboardInterrupt`` through ``stop``)."""
        scanned = scanned or scan_file(path)
        source = scanned.source
        record = self._tried(lambda: self.records.get(source))
        if record is not None and record.done and not again:
            before = Before()
            before.add(record.figures, record.finished_at)
            return Outcome(source, Figures(), before=before)
        report = ErrorReport(errors, path)  # refused before anything is written
        self._tried(lambda: self.records.start(source))
        progress = Progress(total=scanned.lines)
        told = on_progress or (lambda _: None)
        skipped = Skipped()
        try:
            with tempfile.TemporaryDirectory(prefix="sensor-digest-import-", dir=self.folder) as folder:
                partitions = Partitions(Path(folder), partitions_for(scanned.lines))
                self._read(path, scanned, fmt, source, partitions, report, progress, skipped, told, stop)
                progress.phase, progress.lines, progress.total = "counting", 0, partitions.entries
                told(progress)
                for partition in range(partitions.count):
                    if stop is not None and stop.is_set():
                        raise KeyboardInterrupt
                    rows = partitions.rows(partition)
                    counted: PartitionCount = self._tried(lambda: self.counter.count(rows))  # noqa: B023
                    report.refused(refused_rows(counted.refused))
                    progress.figures.add(counted.figures())  # its rejected rows: the report's, at the end
                    progress.lines += counted.counted + counted.already + counted.duplicates + len(counted.refused)
                    told(progress)
        finally:
            progress.figures.rejected = report.rows
            report.close()
        progress.figures.blank = skipped.blank
        self._tried(lambda: self.records.finish(source, progress.figures))
        return Outcome(source, progress.figures, errors if report.rows else None)

    def _read(
        self,
        path: Path,
        scanned: Scanned,
        fmt: str,
        source: SourceObject,
        partitions: Partitions,
        report: ErrorReport,
        progress: Progress,
        skipped: Skipped,
        told: Callable[[Progress], None],
        stop: threading.Event | None,
    ) -> None:
        """The reading phase: every row read and dated, the valid ones into their partitions, the refused
        ones into the report; ``UnreadableInput`` when the file changed meanwhile."""
        with path.open("rb") as stream:
            if stamp_of(stream) != scanned.stamp:
                raise UnreadableInput(CHANGED)
            rows = rows_of(lines_of(iter(lambda: stream.read(BLOCK_BYTES), b"")), fmt, skipped)
            for _, chunk in chunks_of(rows, self.chunk_rows):
                if stop is not None and stop.is_set():
                    raise KeyboardInterrupt
                read = self._tried(lambda: read_rows(source.object_id, chunk, fmt, self.dating))  # noqa: B023
                if stamp_of(stream) != scanned.stamp:  # its rows may be the new content's: none is counted
                    raise UnreadableInput(f"{CHANGED} (nothing of it was counted)")
                report.write(read.rejected)
                partitions.add(read.entries)
                progress.figures.rows += read.rows
                progress.figures.zone_kept += read.zone_kept
                progress.lines = chunk[-1].line
                told(progress)
        partitions.flush()

    def _tried(self, work: Callable[[], T]) -> T:
        for attempt in range(self.retry.attempts):
            try:
                return work()
            except StoreFault:  # any failure of the store, a refusal too, is tried again before it ends the import
                if attempt + 1 >= self.retry.attempts:
                    raise
                self.retry.wait(attempt)
        raise AssertionError("unreachable")  # pragma: no cover


def default_errors_path(path: Path) -> Path:
    """Where a file's error report goes unless told: beside it, ``<name>.rejected.jsonl``."""
    return path.with_name(path.name + ".rejected.jsonl")


__all__ = ["CHUNK_ROWS", "FileImport", "Outcome", "Progress", "Scanned", "UnreadableInput", "scan_file"]
