"""``sensor-digest summary rebuild``: recompute summary items from the day items.

For repair, backfill, and the migration of the single ``SUMMARY`` item that earlier versions
wrote. Each day whose month item lacks it, or holds less, is written with the summary path's own
three-step map upsert (``SummaryWriter``), so elements only ever move up and the rebuild is safe
while the pipeline runs: whatever the stream writes meanwhile is never moved back. A legacy item
is deleted once its sensor's months are rebuilt.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sensor_digest import layout
from sensor_digest.summary import SummaryWriter
from sensor_digest_ops.queries import sensor_days, summary_months


@dataclass
class RebuildReport:
    sensors: int = 0
    days: int = 0
    written: int = 0
    already_current: int = 0
    legacy_removed: int = 0
    months: set[tuple[int, str]] = field(default_factory=set)


def sensors_with_data(client: Any, table: str) -> list[int]:
    """Every sensor that has a day item or a legacy summary (a Scan: for this command only)."""
    found: set[int] = set()
    for page in client.get_paginator("scan").paginate(
        TableName=table,
        ProjectionExpression="#s, #d",
        ExpressionAttributeNames={"#s": layout.SENSOR_ID, "#d": layout.DATE},
    ):
        for item in page["Items"]:
            if layout.is_legacy_summary(item) or str(item[layout.DATE]["S"])[:1].isdigit():
                found.add(layout.sensor_of_item(item))
    return sorted(found)


def rebuild(client: Any, table: str, sensor_ids: Iterable[int] | None = None) -> RebuildReport:
    writer = SummaryWriter(table_name=table, client=client)
    report = RebuildReport()
    for sensor_id in sorted(sensor_ids) if sensor_ids is not None else sensors_with_data(client, table):
        report.sensors += 1
        days = dict(sensor_days(client, table, sensor_id, "0000-00-00", "9999-12-31"))
        held = {day: n for daily in summary_months(client, table, sensor_id).values() for day, n in daily.items()}
        for day, count in sorted(days.items()):
            report.days += 1
            if held.get(day, -1) >= count:
                report.already_current += 1
                continue
            outcome = writer.upsert(sensor_id, day, count)
            report.written += outcome.written
            report.already_current += outcome.stale
            report.months.add((sensor_id, layout.month_of(day)))
        legacy = client.get_item(TableName=table, Key=layout.legacy_summary_key(sensor_id), ConsistentRead=True)
        if "Item" in legacy:
            client.delete_item(TableName=table, Key=layout.legacy_summary_key(sensor_id))
            report.legacy_removed += 1
    return report
