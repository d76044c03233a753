"""Reading the tables back: day counts and summaries (for the command line, the demo and the tests)."""

from __future__ import annotations

from typing import Any

from sensor_digest import layout


def scan_all(client: Any, table: str) -> list[dict[str, Any]]:
    """Every item of the table (consistent reads)."""
    items: list[dict[str, Any]] = []
    for page in client.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        items.extend(page["Items"])
    return items


def day_counts(client: Any, table: str) -> dict[tuple[int, str], int]:
    return {
        (sensor, day): count
        for sensor, day, count in filter(None, map(layout.day_count_of_item, scan_all(client, table)))
    }


def summaries(client: Any, table: str) -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = {}
    for item in scan_all(client, table):
        daily = layout.daily_counts_of_item(item) if layout.is_summary(item) else None
        if daily is not None:
            out[layout.sensor_of_item(item)] = daily
    return out


def by_sensor(counts: dict[tuple[int, str], int]) -> dict[int, dict[str, int]]:
    """Day counts regrouped as each sensor's ``DailyCounts``: what its summary must equal."""
    out: dict[int, dict[str, int]] = {}
    for (sensor, day), n in counts.items():
        out.setdefault(sensor, {})[day] = n
    return out


def sensor_days(client: Any, table: str, sensor_id: int, first: str, last: str) -> list[tuple[str, int]]:
    """A sensor's day counts from ``first`` to ``last`` (inclusive), by date."""
    out: list[tuple[str, int]] = []
    paginator = client.get_paginator("query")
    for page in paginator.paginate(
        TableName=table,
        KeyConditionExpression="#s = :s AND #d BETWEEN :a AND :b",
        ExpressionAttributeNames={"#s": layout.SENSOR_ID, "#d": layout.DATE},
        ExpressionAttributeValues={":s": {"N": str(sensor_id)}, ":a": {"S": first}, ":b": {"S": last}},
        ConsistentRead=True,
    ):
        out.extend((day, count) for _, day, count in filter(None, map(layout.day_count_of_item, page["Items"])))
    return out


def summary_of(client: Any, table: str, sensor_id: int) -> dict[str, int] | None:
    item = client.get_item(TableName=table, Key=layout.summary_key(sensor_id), ConsistentRead=True).get("Item")
    return layout.daily_counts_of_item(item) if item else None
