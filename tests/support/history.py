"""What the history import's tests share: a generated history file and its truth (``history_file``), a
``FileImport`` over a test's tables (and its client, which a test may wrap in the fault layer), and the
tables read back as the truth reads (counts, hours)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from sensor_digest.backoff import Backoff
from sensor_digest.history.counter import Overlap
from sensor_digest.store import schema
from sensor_digest_tools.local.history import HistoryTruth, write_history
from sensor_digest_tools.ops.history import FileImport
from tests.support.tables import Tables, day_counts, scan_all

NO_WAIT = Backoff(attempts=3, base_seconds=0.0, least=1.0, sleep=lambda _: None)


def history_file(folder: Path, name: str, **fleet: Any) -> tuple[Path, HistoryTruth]:
    """The history ``folder / name`` written for ``fleet`` (``write_history``'s sensors, days, per_day,
    order, fmt, poison, ...), and its truth."""
    path = folder / name
    return path, write_history(path, **fleet)


def file_import(
    client: Any,
    tables: Tables,
    *,
    chunk_rows: int = 1000,
    reject_unknown: bool = False,
    zone: str = "UTC",
    retry: Backoff = NO_WAIT,
    workers: int = 4,
    overlap: Overlap = Overlap.REFUSE,
) -> FileImport:
    """The local import over ``tables`` through ``client``, in chunks of ``chunk_rows``."""
    return FileImport.over(
        client,
        tables.table,
        tables.ledger,
        zone=ZoneInfo(zone),
        reject_unknown=reject_unknown,
        chunk_rows=chunk_rows,
        retry=retry,
        workers=workers,
        counting_retry=retry,
        overlap=overlap,
    )


def hours(client: Any, tables: Tables) -> dict[tuple[int, str], Counter[str]]:
    """Every day item's hours, by (sensor, day)."""
    out: dict[tuple[int, str], Counter[str]] = {}
    for item in scan_all(client, tables.table):
        found = schema.day_count_of_item(item)
        if found is None:
            continue
        sensor, day, _ = found
        out[(sensor, day)] = Counter(schema.hour_counts_of_item(item) or {})
    return out


def assert_matches(
    client: Any, tables: Tables, truth: HistoryTruth, extra: Counter[tuple[int, str]] | None = None
) -> None:
    """The tables hold exactly the truth's counts (plus ``extra``), and every day's hours."""
    expected = Counter(truth.counts)
    expected.update(extra or Counter())
    assert day_counts(client, tables.table) == dict(expected)
    if extra is None:
        assert hours(client, tables) == truth.hours
