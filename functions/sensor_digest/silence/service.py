"""The scheduled silence check as a Lambda service: an EventBridge event in, the silent sensors
counted out (the ``silentSensors`` metric, which the stack's alarm watches) and logged, with the
sensors it could not decide (``silenceUnchecked``, named in the log line)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sensor_digest import names
from sensor_digest.config import SilenceSettings
from sensor_digest.silence.check import CONNECTIONS, SilenceCheck, SilencePage
from sensor_digest.store.dynamo import ClientSource, make_client

LOGGED_SILENT = 50  # the silent sensors named in the log line (all are counted)


@dataclass(frozen=True)
class SilenceReport:
    """One check: the metrics, the log line, the answer."""

    page: SilencePage

    def response(self) -> dict[str, Any]:
        return {"silent": len(self.page.silent), "checked": self.page.checked, "unchecked": len(self.page.unchecked)}

    def metrics(self) -> Mapping[str, int]:
        return {
            names.METRIC_SILENT_SENSORS: len(self.page.silent),
            names.METRIC_SILENCE_CHECKED: self.page.checked,
            names.METRIC_SILENCE_UNCHECKED: len(self.page.unchecked),
        }

    def log_fields(self) -> Mapping[str, Any]:
        return {
            "silent": len(self.page.silent),
            "checked": self.page.checked,
            "requests": self.page.requests,
            "sensors": [s.as_json() for s in self.page.silent[:LOGGED_SILENT]],
            "unchecked": [u.as_json() for u in self.page.unchecked[:LOGGED_SILENT]],
        }


class SilenceService:
    def __init__(self, check: SilenceCheck) -> None:
        self.check = check

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> SilenceReport:
        return SilenceReport(self.check.run())


def build_service(settings: SilenceSettings, session: ClientSource) -> SilenceService:
    """The check of these settings, its client from ``session`` (see ``silence/handler.py``)."""
    check = SilenceCheck(
        table_name=settings.table_name,
        client=make_client(session, max_pool_connections=CONNECTIONS),
        default_hours=settings.silence_hours,
        default_zone=settings.timezone,
    )
    return SilenceService(check)
