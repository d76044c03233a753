"""Reading the tables back: day counts and summaries (for the command line, the demo and the tests)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sensor_digest.store import schema


def scan_all(client: Any, table: str) -> list[dict[str, Any]]:
    """Every item of the table (consistent reads)."""
    items: list[dict[str, Any]] = []
    for page in client.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        items.extend(page["Items"])
    return items


def day_counts(client: Any, table: str) -> dict[tuple[int, str], int]:
    return {
        (sensor, day): count
        for sensor, day, count in filter(None, map(schema.day_count_of_item, scan_all(client, table)))
    }


def summaries(client: Any, table: str) -> dict[int, dict[str, int]]:
    """Every sensor's summary, its months' ``DailyCounts`` merged (the legacy single item aside)."""
    out: dict[int, dict[str, int]] = {}
    for item in scan_all(client, table):
        daily = schema.daily_counts_of_item(item) if schema.is_summary(item) else None
        if daily is not None:
            out.setdefault(schema.sensor_of_item(item), {}).update(daily)
    return {sensor: dict(sorted(days.items())) for sensor, days in out.items()}


def by_sensor(counts: dict[tuple[int, str], int]) -> dict[int, dict[str, int]]:
    """Day counts regrouped as each sensor's ``DailyCounts``: what its summary must equal."""
    out: dict[int, dict[str, int]] = {}
    for (sensor, day), n in counts.items():
        out.setdefault(sensor, {})[day] = n
    return out


def _sensor_items(client: Any, table: str, sensor_id: int, low: str, high: str) -> Iterator[dict[str, Any]]:
    """A sensor's items whose sort key lies between ``low`` and ``high`` (inclusive): one ``Query``."""
    for page in client.get_paginator("query").paginate(
        TableName=table,
        KeyConditionExpression="#s = :s AND #d BETWEEN :a AND :b",
        ExpressionAttributeNames={"#s": schema.SENSOR_ID, "#d": schema.DATE},
        ExpressionAttributeValues={":s": {"N": str(sensor_id)}, ":a": {"S": low}, ":b": {"S": high}},
        ConsistentRead=True,
    ):
        yield from page["Items"]


def sensor_days(client: Any, table: str, sensor_id: int, first: str, last: str) -> list[tuple[str, int]]:
    """A sensor's day counts from ``first`` to ``last`` (inclusive), by date."""
    items = _sensor_items(client, table, sensor_id, first, last)
    return [(day, count) for _, day, count in filter(None, map(schema.day_count_of_item, items))]


def summary_months(
    client: Any, table: str, sensor_id: int, first: str | None = None, last: str | None = None
) -> dict[str, dict[str, int]]:
    """A sensor's summary items from month ``first`` to ``last`` (``YYYY-MM``, inclusive; all when
    absent), by month: one ``Query`` on the sensor, its sort keys ``SUMMARY#...``."""
    low = schema.summary_key(sensor_id, first or "0000-00")[schema.DATE]["S"]
    high = schema.summary_key(sensor_id, last or "9999-99")[schema.DATE]["S"]
    out: dict[str, dict[str, int]] = {}
    for item in _sensor_items(client, table, sensor_id, low, high):
        daily = schema.daily_counts_of_item(item)
        if daily is not None:
            out[schema.summary_month_of_item(item)] = daily
    return out
