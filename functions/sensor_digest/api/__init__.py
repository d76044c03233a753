"""The read API: day counts, monthly summaries, registered sensors and alarms over HTTP.

``rules.py`` (what a request may ask), ``tokens.py`` (page tokens bound to their request),
``service.py`` (the routes, one ``Query`` each), ``alarms.py`` (the alarm routes, the operator's
actions among them), and ``build_service`` (the wiring).
"""

from __future__ import annotations

from sensor_digest.alarms.operations import AlarmOperations
from sensor_digest.alarms.store import AlarmStore, RuleStore
from sensor_digest.api.service import ApiReport, ApiService
from sensor_digest.config import ApiSettings
from sensor_digest.silence.check import CONNECTIONS, SilenceCheck
from sensor_digest.store.dynamo import ClientSource, make_client

__all__ = ["ApiReport", "ApiService", "build_service"]


def build_service(settings: ApiSettings, session: ClientSource) -> ApiService:
    """The API service of these settings, its client from ``session`` (see ``api/handler.py``)."""
    client = make_client(session, max_pool_connections=CONNECTIONS)
    silence = SilenceCheck(
        table_name=settings.table_name,
        client=client,
        default_hours=settings.silence_hours,
        default_zone=settings.timezone,
    )
    alarms = AlarmOperations(
        rules=RuleStore(ledger_table_name=settings.ledger_table_name, client=client),
        alarms=AlarmStore(table_name=settings.table_name, client=client),
    )
    return ApiService(
        table_name=settings.table_name,
        client=client,
        silence=silence,
        default_zone=settings.timezone,
        alarms=alarms,
    )
