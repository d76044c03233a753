"""The fate of every message of one batch, and Lambda's partial batch response."""

from __future__ import annotations

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
        }

    def response(self) -> dict[str, list[dict[str, str]]]:
        """Lambda's partial batch response (each failed message once, in the order given)."""
        return {"batchItemFailures": [{"itemIdentifier": mid} for mid in dict.fromkeys(self.failed_ids)]}
