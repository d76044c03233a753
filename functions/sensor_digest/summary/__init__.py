"""The summary path: the table's stream in, month items' ``DailyCounts`` kept up to date.

``service.py`` (coalesce a stream batch, write each sensor-day, checkpoint), ``map_upsert.py``
(the three-step map upsert of one element), and ``build_service`` (the wiring).
"""

from __future__ import annotations

from sensor_digest.config import SummarySettings
from sensor_digest.logs import LOG
from sensor_digest.store.dynamo import ClientSource, make_client
from sensor_digest.summary.map_upsert import MapUpsert, MonthOutcome, SummaryWriter, UpsertOutcome
from sensor_digest.summary.service import SummaryReport, SummaryService

__all__ = [
    "LOG",
    "MapUpsert",
    "MonthOutcome",
    "SummaryReport",
    "SummaryService",
    "SummaryWriter",
    "UpsertOutcome",
    "build_service",
]


def build_service(settings: SummarySettings, session: ClientSource) -> SummaryService:
    """The summary service of these settings, its client from ``session`` (see ``summary/handler.py``)."""
    writer = SummaryWriter(table_name=settings.table_name, client=make_client(session, max_pool_connections=10))
    return SummaryService(writer=writer, max_workers=8)
