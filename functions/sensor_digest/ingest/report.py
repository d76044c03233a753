"""The fate of every message of one batch, and Lambda's partial batch response.

A report fills while the batch is worked on, group by group from several threads (``tally``,
``settle`` under its lock), so that a batch cut short by the invocation's time can still answer
for what is done (``settled_ids``) and list the rest.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from sensor_digest import names


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
    settled_ids: set[str] = field(default_factory=set)  # counted, duplicate or kept in the DLQ
    refused: list[tuple[str, str]] = field(default_factory=list)  # (message id, reason): a write refused
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def settle(
        self, *, counted: Iterable[str] = (), duplicates: Iterable[str] = (), rejected: Iterable[str] = ()
    ) -> None:
        """Messages that ended: counted, duplicates of counted ones, kept in the dead-letter queue."""
        counted, duplicates, rejected = list(counted), list(duplicates), list(rejected)
        with self.lock:
            self.counted += len(counted)
            self.duplicates += len(duplicates)
            self.rejected += len(rejected)
            self.settled_ids.update(counted, duplicates, rejected)

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
        }

    def response(self) -> dict[str, list[dict[str, str]]]:
        """Lambda's partial batch response (each failed message once, in the order given)."""
        return {"batchItemFailures": [{"itemIdentifier": mid} for mid in dict.fromkeys(self.failed_ids)]}
