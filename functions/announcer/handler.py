"""Lambda entry point of the alarm announcer: DynamoDB Streams batch in (alarm writes that made
transitions), one EventBridge event per transition out, partial batch response returned.

Same shape as ``summary/handler.py`` (``sensor_digest/entry.py``).
"""

from __future__ import annotations

from sensor_digest import names
from sensor_digest.alarms.announce import build_service
from sensor_digest.config import AnnouncerSettings
from sensor_digest.entry import from_environment

__all__ = ["build_service", "handler", "reset", "service"]

entry = from_environment(names.ANNOUNCER_SERVICE, build_service, AnnouncerSettings.from_env, "alarms announced")
service = entry.service
handler = entry.handler
reset = entry.reset
