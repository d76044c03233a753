"""The summary path: per sensor, one item per calendar month whose map ``DailyCounts`` holds the
count of each of that month's days (``schema.summary_key``).

A stream batch is coalesced (per sensor-day only the highest count matters, ``plan``), and each
month item's days are written in one write with the three-step map upsert (``map_upsert.py``),
month items concurrently, one writer per month item; the first record whose write failed is where
the batch checkpoints (``SummaryReport.response``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from sensor_digest import names
from sensor_digest.errors import StoreFault, TransientFault
from sensor_digest.logs import LOG
from sensor_digest.store import schema
from sensor_digest.stream_filter import DayCount, day_count_of
from sensor_digest.summary.map_upsert import MonthOutcome, SummaryWriter


@dataclass
class SummaryReport:
    """What became of a stream batch, by sensor-day."""

    records: int = 0  # in the batch
    ignored: int = 0  # records that are no day item (the summary's own, removals, profiles)
    coalesced: int = 0  # sensor-days left once each keeps its highest count
    written: int = 0  # elements written
    stale: int = 0  # elements that held their count (or more) already: nothing to write
    failed: int = 0  # sensor-days whose write failed: the batch checkpoints before the first
    requests: int = 0
    checkpoint: str | None = None  # the stream SequenceNumber to retry from
    reasons: list[str] = field(default_factory=list)

    def metrics(self) -> dict[str, int]:
        return {
            names.METRIC_SUMMARY_WRITTEN: self.written,
            names.METRIC_SUMMARY_STALE: self.stale,
            names.METRIC_SUMMARY_IGNORED: self.ignored,
            names.METRIC_SUMMARY_FAILED: self.failed,
        }

    def log_fields(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "ignored": self.ignored,
            "coalesced": self.coalesced,
            "written": self.written,
            "stale": self.stale,
            "failed": self.failed,
            "checkpoint": self.checkpoint,
        }

    def response(self) -> dict[str, list[dict[str, str]]]:
        """Lambda's partial batch response: the first record that did not succeed, if any."""
        failures = [] if self.checkpoint is None else [{"itemIdentifier": self.checkpoint}]
        return {"batchItemFailures": failures}


class SummaryService:
    """Coalesces a stream batch and upserts each month item's days; reports where to checkpoint."""

    def __init__(self, *, writer: SummaryWriter, max_workers: int = 8) -> None:
        self._writer = writer
        self._max_workers = max_workers

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> SummaryReport:
        """A DynamoDB Streams event in Lambda's shape: its records, processed as one batch (its
        single-item writes take no transaction, so ``remaining_ms`` bounds nothing here)."""
        return self.process([r for r in event.get("Records") or [] if isinstance(r, dict)])

    def process(self, records: Sequence[Mapping[str, Any]]) -> SummaryReport:
        report = SummaryReport(records=len(records))
        day_counts: list[tuple[int, DayCount]] = []
        for index, record in enumerate(records):
            found = day_count_of(record)
            if found is None:
                report.ignored += 1
            else:
                day_counts.append((index, found))
        writes = self.plan(day_counts)
        report.coalesced = sum(len(write.counts) for write in writes)
        failed_at: list[int] = []
        for write, outcome in self._run(writes):
            if isinstance(outcome, StoreFault):
                report.failed += len(write.counts)
                report.reasons.append(outcome.reason)
                failed_at.append(write.first_index)
                continue
            report.requests += outcome.requests
            report.written += len(outcome.written)
            report.stale += len(outcome.stale)
        if failed_at:
            first = min(failed_at)
            report.checkpoint = str(records[first]["dynamodb"]["SequenceNumber"])
            LOG.warning("summary writes failed; checkpointing", checkpoint=report.checkpoint, reasons=report.reasons)
        return report

    @staticmethod
    def plan(day_counts: list[tuple[int, DayCount]]) -> list[MonthWrite]:
        """Coalesce: per sensor-day only its highest count; per month item one write of its days,
        tagged with the index of the first record it covers (where to checkpoint if it fails)."""
        first_index: dict[tuple[int, str], int] = {}
        highest: dict[tuple[int, str], int] = {}
        for index, found in day_counts:
            key = (found.sensor_id, found.day)
            first_index.setdefault(key, index)
            highest[key] = max(highest.get(key, found.count), found.count)
        months: dict[tuple[int, str], MonthWrite] = {}
        for (sensor_id, day), count in highest.items():
            month = months.setdefault(
                (sensor_id, schema.month_of(day)),
                MonthWrite(sensor_id, schema.month_of(day), first_index[(sensor_id, day)]),
            )
            month.counts[day] = count
            month.first_index = min(month.first_index, first_index[(sensor_id, day)])
        return list(months.values())

    def _run(self, writes: list[MonthWrite]) -> list[tuple[MonthWrite, MonthOutcome | StoreFault]]:
        if len(writes) <= 1 or self._max_workers == 1:
            return [(w, self._safe(w)) for w in writes]
        with ThreadPoolExecutor(max_workers=min(self._max_workers, len(writes))) as pool:
            futures = [(w, pool.submit(self._safe, w)) for w in writes]
            return [(w, f.result()) for w, f in futures]

    def _safe(self, write: MonthWrite) -> MonthOutcome | StoreFault:
        try:
            return self._writer.upsert_month(write.sensor_id, write.month, write.counts)
        except StoreFault as fault:
            return fault
        except Exception as exc:  # a bug fails this write (and checkpoints), never the whole batch
            LOG.exception("summary upsert raised", sensor_id=write.sensor_id, month=write.month)
            return TransientFault(f"internal error: {type(exc).__name__}")


@dataclass
class MonthWrite:
    """One month item's share of a batch: its days' highest counts, and the first record they cover."""

    sensor_id: int
    month: str
    first_index: int
    counts: dict[str, int] = field(default_factory=dict)
