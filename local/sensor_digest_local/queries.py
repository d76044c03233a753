"""Reading results back: day counts, summaries, dead letters (for the CLI, the demo and the tests)."""

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


def dead_letters(sqs: Any, url: str, *, consume: bool = False, limit: int = 10_000) -> list[dict[str, Any]]:
    """The DLQ's messages (body, error, ids). Listing leaves them in place: each received message
    is made visible again at once; ``consume`` deletes them instead."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    while len(out) < limit:
        got = sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=10,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
            VisibilityTimeout=30,
            WaitTimeSeconds=0,
        ).get("Messages", [])
        fresh = [m for m in got if m["MessageId"] not in seen]
        if not fresh:
            for m in got:
                _settle(sqs, url, m, consume)
            break
        for m in fresh:
            seen.add(m["MessageId"])
            attrs = m.get("MessageAttributes", {})
            out.append(
                {
                    "message_id": m["MessageId"],
                    "body": m["Body"],
                    "error": attrs.get("error", {}).get("StringValue"),
                    "source_message_id": attrs.get("source_message_id", {}).get("StringValue") or m["MessageId"],
                    "receipt_handle": m["ReceiptHandle"],
                }
            )
    if not consume:
        for entry in out:
            sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=entry["receipt_handle"], VisibilityTimeout=0)
    else:
        for entry in out:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=entry["receipt_handle"])
    return out


def _settle(sqs: Any, url: str, message: dict[str, Any], consume: bool) -> None:
    if not consume:
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0)
