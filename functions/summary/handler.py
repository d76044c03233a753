"""Lambda entry point of the summary path: DynamoDB Streams batch in, partial batch response out.

Same shape as ``ingest/handler.py`` (``sensor_digest/entry.py``).
"""

from __future__ import annotations

from sensor_digest import names
from sensor_digest.config import SummarySettings
from sensor_digest.entry import from_environment
from sensor_digest.summary import build_service

__all__ = ["build_service", "handler", "reset", "service"]

entry = from_environment(names.SUMMARY_SERVICE, build_service, SummarySettings.from_env, "stream batch done")
service = entry.service
handler = entry.handler
reset = entry.reset
