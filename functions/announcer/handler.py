"""Lambda entry point of the alarm announcer: DynamoDB Streams batch in (alarm writes that made
transitions), one EventBridge event per transition out, partial batch response returned.

Same shape as ``summary/handler.py`` (``sensor_digest/entry.py``).
"""

from __future__ import annotations

from typing import Any

from sensor_digest import names
from sensor_digest.alarms.announce import Announcer, build_service
from sensor_digest.config import AnnouncerSettings, pipeline_name
from sensor_digest.entry import from_environment

__all__ = ["build_service", "handler", "reset", "service"]


def _build(settings: AnnouncerSettings, session: Any) -> Announcer:
    """The events name the pipeline the construct set (``SENSOR_DIGEST_PIPELINE``), read with the service."""
    return build_service(settings, session, pipeline=pipeline_name())


entry = from_environment(names.ANNOUNCER_SERVICE, _build, AnnouncerSettings.from_env, "alarms announced")
service = entry.service
handler = entry.handler
reset = entry.reset
