"""The fate of every message of one batch, and Lambda's partial batch response.

A report fills while the batch is worked on, group by group from several threads (``tally``,
``end`` under its lock), so that a batch cut short by the invocation's time can still answer
for what is done (``ended_ids``) and list the rest.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sensor_digest import names

AUDIT_LINE_BYTES = 64 * 1024
"""About how much of the audit trail one log line carries (CloudWatch Logs takes events of up to
256 KB)."""


@dataclass
class BatchReport:
    """The fate of every message of one batch, and what it cost."""

    counted: int = 0
    duplicates: int = 0
    rejected: int = 0
    failed_ids: list[str] = field(default_factory=list)
    requests: int = 0
    groups: int = 0
    retries: int = 0
    deferred: int = 0  # groups whose transaction met another writer's, written again at the end of the batch
    transitions: int = 0  # alarm transitions the batch's reports made (alarms/evaluator.py)
    ended_ids: set[str] = field(default_factory=set)  # counted, duplicate or kept in the DLQ
    settled_ids: set[str] = field(default_factory=set)  # counted or duplicate (what alarms evaluate)
    alarms_evaluated: bool = False  # the alarm step has run (``IngestService._evaluate_alarms``)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (message id, reason): a write refused
    audit: list[list[Any]] = field(default_factory=list)  # [sensor_id, day, [[event_id, count], ...]] counted
    answered: bool = False  # the handler answered before the batch's end (``IngestService.cut_short``)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def end(self, *, counted: Iterable[str] = (), duplicates: Iterable[str] = (), rejected: Iterable[str] = ()) -> None:
        """Messages that ended: counted, duplicates of counted ones, kept in the dead-letter queue."""
        counted, duplicates, rejected = list(counted), list(duplicates), list(rejected)
        with self.lock:
            self.counted += len(counted)
            self.duplicates += len(duplicates)
            self.rejected += len(rejected)
            self.ended_ids.update(counted, duplicates, rejected)
            self.settled_ids.update(counted, duplicates)

    def take_audit(self) -> list[list[list[Any]]]:
        """The audit trail of the groups counted so far, taken: what each counted report contributed
        and where, ``[sensor_id, day, [[event_id, count], ...]]`` (the origin messageId stands for a
        missing event_id), in lines of about ``AUDIT_LINE_BYTES``. One ``counted`` log line per batch
        or per 64 KB of it: a line per group would cost a fleet, whose groups are one report each,
        ten times the log bytes."""
        with self.lock:
            groups, self.audit = self.audit, []
        lines: list[list[list[Any]]] = []
        line: list[list[Any]] = []
        size = 0
        for group in groups:
            line.append(group)
            size += 32 + sum(len(str(event_id)) + 16 for event_id, _ in group[2])
            if size >= AUDIT_LINE_BYTES:
                lines.append(line)
                line, size = [], 0
        return [*lines, line] if line else lines

    @property
    def failed(self) -> int:
        return len(self.failed_ids)

    def metrics(self) -> dict[str, int]:
        return {
            names.METRIC_COUNTED: self.counted,
            names.METRIC_DUPLICATE: self.duplicates,
            names.METRIC_REJECTED: self.rejected,
            names.METRIC_FAILED: self.failed,
        }

    def log_fields(self) -> dict[str, int]:
        return {
            "counted": self.counted,
            "duplicates": self.duplicates,
            "rejected": self.rejected,
            "failed": self.failed,
            "groups": self.groups,
            "requests": self.requests,
            "retries": self.retries,
            "deferred": self.deferred,
            "transitions": self.transitions,
        }

    def response(self) -> dict[str, list[dict[str, str]]]:
        """Lambda's partial batch response (each failed message once, in the order given)."""
        return {"batchItemFailures": [{"itemIdentifier": mid} for mid in dict.fromkeys(self.failed_ids)]}
