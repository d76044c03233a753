"""Lambda entry point of the scheduled silence check: an EventBridge scheduled event in, the number
of silent registered sensors out as the ``silentSensors`` metric (``sensor_digest/silence/``)."""

from __future__ import annotations

from sensor_digest import names
from sensor_digest.config import SilenceSettings
from sensor_digest.entry import LambdaEntry
from sensor_digest.silence.service import SilenceService, build_service

__all__ = ["build_service", "handler", "reset", "service"]

entry: LambdaEntry[SilenceService] = LambdaEntry(
    names.SILENCE_SERVICE, lambda session: build_service(SilenceSettings.from_env(), session), "silence checked"
)
service = entry.service
handler = entry.handler
reset = entry.reset
