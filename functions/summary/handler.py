"""Lambda entry point of the summary path: DynamoDB Streams batch in, partial batch response out.

Same shape as ``ingest/handler.py`` (``sensor_digest/entry.py``).
"""

from __future__ import annotations

from sensor_digest import names
from sensor_digest.config import SummarySettings
from sensor_digest.entry import LambdaEntry
from sensor_digest.summary import SummaryService, build_service

__all__ = ["build_service", "handler", "reset", "service"]

entry: LambdaEntry[SummaryService] = LambdaEntry(
    names.SUMMARY_SERVICE, lambda session: build_service(SummarySettings.from_env(), session), "stream batch done"
)
service = entry.service
handler = entry.handler
reset = entry.reset
