"""The tables a test gets (``Tables``, made by the ``tables`` fixture), and reading them back."""

from __future__ import annotations

from dataclasses import dataclass

from sensor_digest.store.reads import by_sensor, day_counts, scan_all, summaries

__all__ = ["Tables", "by_sensor", "day_counts", "scan_all", "summaries"]


@dataclass(frozen=True)
class Tables:
    table: str
    ledger: str
