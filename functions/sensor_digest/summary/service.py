"""The summary path: per sensor, one item per calendar month whose map ``DailyCounts`` holds the
count of each of that month's days (``schema.summary_key``).

A stream batch is coalesced (per sensor-day only the highest count matters, ``plan``) and each
sensor-day is written once with the three-step map upsert (``map_upsert.py``), concurrently; the
first record whose write failed is where the batch checkpoints (``SummaryReport.response``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from sensor_digest import names
from sensor_digest.errors import TransientFault
from sensor_digest.logs import LOG
from sensor_digest.stream_filter import DayCount, day_count_of
from sensor_digest.summary.map_upsert import SummaryWriter, UpsertOutcome


@dataclass
class SummaryReport:
    records: int = 0
    ignored: int = 0
    coalesced: int = 0
    written: int = 0
    stale: int = 0
    failed: int = 0
    requests: int = 0
    checkpoint: str | None = None
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
    """Coalesces a stream batch and upserts each sensor-day; reports where to checkpoint."""

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
        report.coalesced = len(writes)
        failed_at: list[int] = []
        for index, outcome in self._run(writes):
            if isinstance(outcome, TransientFault):
                report.failed += 1
                report.reasons.append(outcome.reason)
                failed_at.append(index)
                continue
            report.requests += outcome.requests
            report.written += outcome.written
            report.stale += outcome.stale
        if failed_at:
            first = min(failed_at)
            report.checkpoint = str(records[first]["dynamodb"]["SequenceNumber"])
            LOG.warning("summary writes failed; checkpointing", checkpoint=report.checkpoint, reasons=report.reasons)
        return report

    @staticmethod
    def plan(day_counts: list[tuple[int, DayCount]]) -> list[tuple[int, DayCount]]:
        """Coalesce: per sensor-day only its highest count, tagged with the index of the first record
        it covers (where to checkpoint if its write fails)."""
        first_index: dict[tuple[int, str], int] = {}
        highest: dict[tuple[int, str], int] = {}
        for index, found in day_counts:
            key = (found.sensor_id, found.day)
            first_index.setdefault(key, index)
            highest[key] = max(highest.get(key, found.count), found.count)
        return [(first_index[k], DayCount(k[0], k[1], n)) for k, n in highest.items()]

    def _run(self, writes: list[tuple[int, DayCount]]) -> list[tuple[int, UpsertOutcome | TransientFault]]:
        if len(writes) <= 1 or self._max_workers == 1:
            return [(i, self._safe(w)) for i, w in writes]
        with ThreadPoolExecutor(max_workers=min(self._max_workers, len(writes))) as pool:
            futures = [(i, pool.submit(self._safe, w)) for i, w in writes]
            return [(i, f.result()) for i, f in futures]

    def _safe(self, write: DayCount) -> UpsertOutcome | TransientFault:
        try:
            return self._writer.upsert(write.sensor_id, write.day, write.count)
        except TransientFault as fault:
            return fault
        except Exception as exc:  # a bug fails this write (and checkpoints), never the whole batch
            LOG.exception("summary upsert raised", sensor_id=write.sensor_id, day=write.day)
            return TransientFault(f"internal error: {type(exc).__name__}")
