"""The read API: day counts, monthly summaries and registered sensors over HTTP.

``rules.py`` (what a request may ask), ``tokens.py`` (page tokens bound to their request),
``service.py`` (the routes, one ``Query`` each), and ``build_service`` (the wiring).
"""

from __future__ import annotations

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
    return ApiService(table_name=settings.table_name, client=client, silence=silence, default_zone=settings.timezone)
