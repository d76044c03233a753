"""``sensor-digest import FILE``: a history file into a pipeline's tables, streamed (docs/import.md).

The file is read twice, never held: once for its identity (its content's SHA-256) and its lines (the
progress bar's total), then row by row, ``CHUNK_ROWS`` rows a chunk (``history/chunks.py``: read,
dated, counted). A chunk is written while the next one is read. Rejected rows go to the error report
(JSON lines: line, reason, row) as each chunk ends. A chunk whose writes fail (throttling, an engine
that does not answer) is tried again ``CHUNK_TRIES`` times, then the import stops: what was written
stands, and the same command again counts the rest, nothing twice (each row's identity is kept on
its day).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from typing import IO, Any, TypeVar
from zoneinfo import ZoneInfo

from sensor_digest.backoff import Backoff, RetryPolicy
from sensor_digest.counting.history import HistoryCounter
from sensor_digest.errors import SensorDigestError, TransientFault, UnreadableInput
from sensor_digest.history.chunks import ChunkResult, Dating, ReadChunk, count_chunk, read_chunk
from sensor_digest.history.pins import ZonePins
from sensor_digest.history.reading import Skipped, lines_of, rows_of
from sensor_digest.history.record import Before, Figures, Records
from sensor_digest.history.rows import Rejected, Row
from sensor_digest.history.service import figures_of
from sensor_digest.history.source import SourceObject, file_object
from sensor_digest.profiles import ProfileCache, Profiles

T = TypeVar("T")

CHUNK_ROWS = 20_000
"""Rows a chunk of a local import: the unit of its memory (two chunks held) and of its writes (a
chunk's rows of a sensor-day are one write). A row's identity does not depend on it."""
BLOCK_BYTES = 1024 * 1024
CHUNK_TRIES = 5
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
    """What the progress bar shows: lines read so far of the file's, and the figures so far."""

    lines: int = 0
    total: int = 0
    figures: Figures = field(default_factory=Figures)


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
    """The rejected rows, as JSON lines, in line order; the file is made at the first one (an earlier
    run's report at the path is replaced). Never the file imported (``source``)."""

    def __init__(self, path: Path, source: Path) -> None:
        if path.resolve() == source.resolve() or (path.exists() and path.samefile(source)):
            raise ReportUnwritable(f"{path} is the file being imported: the error report would replace it")
        if path.is_symlink() or (path.exists() and not path.is_file()):  # /dev/null, a fifo, a link
            raise ReportUnwritable(f"{path} is not a regular file: the error report replaces what is there")
        self.path = path
        self.rows = 0
        self._out: IO[str] | None = None
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise ReportUnwritable(f"the error report {path} cannot be written: {exc.strerror}") from None

    def write(self, rejected: list[Rejected]) -> None:
        if not rejected:
            return
        try:
            if self._out is None:
                self._out = self.path.open("w", encoding="utf-8")
            for row in rejected:
                self._out.write(json.dumps(row.entry(), ensure_ascii=False) + "\n")
            self._out.flush()
        except OSError as exc:
            raise ReportUnwritable(f"the error report {self.path} cannot be written: {exc.strerror}") from None
        self.rows += len(rejected)

    def close(self) -> None:
        if self._out is not None:
            self._out.close()


def chunks_of(rows: Iterator[Row], size: int = CHUNK_ROWS) -> Iterator[tuple[int, list[Row]]]:
    """The rows in chunks of positions ``k * size`` to ``(k + 1) * size - 1``: ``(k, rows)``."""
    for index, group in groupby(rows, key=lambda row: row.position // size):
        yield index, list(group)


class FileImport:
    """One file into one pair of tables (see the module)."""

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
    ) -> FileImport:
        """The import into ``table`` and ``ledger`` through ``client``: sensors' profiles read there, rows
        of a sensor without one (or without a pinned zone) dated in ``zone``."""
        counter = HistoryCounter(
            table_name=table, ledger_table_name=ledger, client=client, max_workers=workers, retry=counting_retry
        )
        profiles = ProfileCache(Profiles(table_name=table, client=client))
        dating = Dating(zone, profiles, ZonePins(ledger, client), reject_unknown=reject_unknown)
        return cls(counter=counter, records=Records(ledger, client), dating=dating, chunk_rows=chunk_rows, retry=retry)

    def __init__(
        self,
        *,
        counter: HistoryCounter,
        records: Records,
        dating: Dating,
        chunk_rows: int = CHUNK_ROWS,
        retry: Backoff = RETRY,
    ) -> None:
        self._counter = counter
        self._records = records
        self._dating = dating
        self._chunk_rows = chunk_rows
        self._retry = retry

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
        chunk could not be written after its tries; ``KeyboardInterrupt`` through ``stop``)."""
        scanned = scanned or scan_file(path)
        source = scanned.source
        record = self._tried(lambda: self._records.get(source))
        if record is not None and record.done and not again:
            before = Before()
            before.add(record.figures, record.finished_at)
            return Outcome(source, Figures(), before=before)
        report = ErrorReport(errors, path)  # refused before anything is written
        self._tried(lambda: self._records.start(source))
        progress = Progress(total=scanned.lines)
        skipped = Skipped()
        try:
            with path.open("rb") as stream, ThreadPoolExecutor(max_workers=1, thread_name_prefix="chunk") as writer:

                def unchanged() -> bool:
                    return stamp_of(stream) == scanned.stamp

                def ended(chunk: Future[tuple[ChunkResult, int]] | None) -> None:
                    if chunk is not None:
                        self._ended(chunk.result(), report, progress, on_progress)

                if not unchanged():
                    raise UnreadableInput(CHANGED)
                rows = rows_of(lines_of(iter(lambda: stream.read(BLOCK_BYTES), b"")), fmt, skipped)
                pending: Future[tuple[ChunkResult, int]] | None = None
                for index, chunk_rows in chunks_of(rows, self._chunk_rows):
                    if stop is not None and stop.is_set():
                        ended(pending)  # the chunk being written ends first: how far it got is told
                        raise KeyboardInterrupt
                    first = index * self._chunk_rows
                    read = self._read(source, chunk_rows, fmt, first, first + self._chunk_rows - 1)
                    if not unchanged():  # its rows may be the new content's: none is written under the old one's name
                        ended(pending)
                        raise UnreadableInput(f"{CHANGED} (rows counted up to line {progress.lines:,} stay counted)")
                    ended(pending)
                    pending = writer.submit(self._count, read, chunk_rows[-1].line)
                ended(pending)
        finally:
            report.close()
        progress.figures.rejected = report.rows
        progress.figures.blank = skipped.blank
        self._tried(lambda: self._records.finish(source, progress.figures))
        return Outcome(source, progress.figures, errors if report.rows else None)

    def _read(self, source: SourceObject, rows: list[Row], fmt: str, first: int, last: int) -> ReadChunk:
        return self._tried(lambda: read_chunk(source.object_id, rows, fmt, self._dating, first=first, last=last))

    def _count(self, read: ReadChunk, last_line: int) -> tuple[ChunkResult, int]:
        return self._tried(lambda: count_chunk(self._counter, read)), last_line

    def _tried(self, work: Callable[[], T]) -> T:
        for attempt in range(self._retry.attempts):
            try:
                return work()
            except TransientFault:
                if attempt + 1 >= self._retry.attempts:
                    raise
                self._retry.wait(attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _ended(
        done: tuple[ChunkResult, int],
        report: ErrorReport,
        progress: Progress,
        on_progress: Callable[[Progress], None] | None,
    ) -> None:
        result, last_line = done
        report.write(result.rejected)
        progress.figures.add(figures_of(result))
        progress.lines = last_line
        if on_progress is not None:
            on_progress(progress)


def default_errors_path(path: Path) -> Path:
    """Where a file's error report goes unless told: beside it, ``<name>.rejected.jsonl``."""
    return path.with_name(path.name + ".rejected.jsonl")


__all__ = ["CHUNK_ROWS", "FileImport", "Outcome", "Progress", "Scanned", "UnreadableInput", "scan_file"]
