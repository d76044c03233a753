"""Lambda entry point of the scheduled silence check: an EventBridge scheduled event in, the number
of silent registered sensors out as the ``silentSensors`` metric (``sensor_digest/silence/``)."""

from __future__ import annotations

from sensor_digest import names
from sensor_digest.config import SilenceSettings
from sensor_digest.entry import from_environment
from sensor_digest.silence.service import build_service

__all__ = ["build_service", "handler", "reset", "service"]

entry = from_environment(names.SILENCE_SERVICE, build_service, SilenceSettings.from_env, "silence checked")
service = entry.service
handler = entry.handler
reset = entry.reset
