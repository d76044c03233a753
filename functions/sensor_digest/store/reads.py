"""Every read of the tables outside the hot path's own lookups, through the DynamoDB boundary
(``dynamo.call``: a ``ClientError`` becomes a ``StoreFault`` whose cause is the ``ClientError``).

Queries on one sensor's partition (``sensor_days``, ``summary_months``) serve the command line and
the rebuild; the read API reads the same ranges a page at a time (``sensor_items_page``, through
the same item filters ``days_of_items`` and ``months_of_items``) and the registered sensors from
the ``Profiles`` index (``profiles_page``), one ``Query`` per request; the scans (``scan_all``,
``sensors_with_data``, ``profile_items``) serve operators' commands, the demo's checks and the tests,
never a Lambda request path.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sensor_digest.errors import MalformedItem
from sensor_digest.store import dynamo, schema


def _pages(client: Any, operation: str, **request: Any) -> Iterator[dict[str, Any]]:
    """Every page of a paginated ``Query`` or ``Scan``, each request through the boundary."""
    pages = iter(client.get_paginator(operation.lower()).paginate(**request))
    while True:
        page = dynamo.call(operation, lambda: next(pages, None))
        if page is None:
            return
        yield page


def scan_all(client: Any, table: str) -> list[schema.Item]:
    """Every item of the table (consistent reads)."""
    return [item for page in _pages(client, "Scan", TableName=table, ConsistentRead=True) for item in page["Items"]]


def day_counts(client: Any, table: str) -> dict[tuple[int, str], int]:
    """Every day item's count, by (sensor, day)."""
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


def _sensor_range(table: str, sensor_id: int, low: str, high: str) -> dict[str, Any]:
    """The ``Query`` of a sensor's items whose sort key lies between ``low`` and ``high`` (inclusive)."""
    return {
        "TableName": table,
        "KeyConditionExpression": "#s = :s AND #d BETWEEN :a AND :b",
        "ExpressionAttributeNames": {"#s": schema.SENSOR_ID, "#d": schema.DATE},
        "ExpressionAttributeValues": {":s": {"N": str(sensor_id)}, ":a": {"S": low}, ":b": {"S": high}},
    }


def sensor_items(client: Any, table: str, sensor_id: int, low: str, high: str) -> Iterator[schema.Item]:
    """A sensor's items whose sort key lies between ``low`` and ``high`` (inclusive): one ``Query``."""
    for page in _pages(client, "Query", **_sensor_range(table, sensor_id, low, high), ConsistentRead=True):
        yield from page["Items"]


@dataclass(frozen=True)
class Page:
    """One ``Query`` page: its items, and the key it stopped after (``None``: nothing follows)."""

    items: list[schema.Item]
    last_key: schema.Item | None


def _page(client: Any, request: dict[str, Any], limit: int, start_key: schema.Item | None) -> Page:
    request = {**request, "Limit": limit, **({"ExclusiveStartKey": start_key} if start_key else {})}
    response = dynamo.call("Query", lambda: client.query(**request))
    return Page(items=list(response.get("Items", [])), last_key=response.get("LastEvaluatedKey") or None)


def sensor_items_page(
    client: Any, table: str, sensor_id: int, low: str, high: str, *, limit: int, after: str | None = None
) -> Page:
    """At most ``limit`` of a sensor's items between ``low`` and ``high`` (inclusive), after sort key
    ``after``: one eventually consistent ``Query`` (a count may lag a write by a moment)."""
    start = schema.day_key(sensor_id, after) if after is not None else None
    return _page(client, _sensor_range(table, sensor_id, low, high), limit, start)


def profiles_page(client: Any, table: str, *, limit: int, after: int | str | None = None) -> Page:
    """At most ``limit`` entries of the ``Profiles`` index (the registered sensors, by id), after sensor
    ``after``: one ``Query`` of the sparse index, eventually consistent as every index read is."""
    request = {
        "TableName": table,
        "IndexName": schema.PROFILE_INDEX,
        "KeyConditionExpression": "#l = :l",
        "ExpressionAttributeNames": {"#l": schema.PROFILE_LIST},
        "ExpressionAttributeValues": {":l": {"S": schema.PROFILE_LIST_VALUE}},
    }
    return _page(client, request, limit, schema.profile_index_key(after) if after is not None else None)


@dataclass(frozen=True)
class Unreadable:
    """An item (or one element of it) without the contract's shape: which ``month`` and/or ``day`` it
    holds, and what is wrong with it (``MalformedItem``'s words)."""

    reason: str
    day: str | None = None
    month: str | None = None
    foreign: bool = False  # an element that is no day of its month: named by the read API, skipped elsewhere


def days_read(items: Iterable[schema.Item]) -> tuple[list[tuple[str, int]], list[Unreadable]]:
    """The day counts among ``items``, in their order, and the day items that cannot be read (a
    ``DataCount`` that is no whole number, or is negative), each alone. Items whose sort key is not a
    day (a hand-made ``2024-05-01\\n`` sorts inside a day range) are not day items; a ``DataCount`` of 0
    (written by hand) is no day with reports, as the silence check reads it: left out."""
    days: list[tuple[str, int]] = []
    unreadable: list[Unreadable] = []
    for item in filter(_is_day_item, items):
        try:
            found = schema.day_count_of_item(item)
        except MalformedItem as bad:
            unreadable.append(Unreadable(str(bad), day=schema.text_of(item, schema.DATE)))
            continue
        if found is not None and found[2] > 0:  # has_reports
            days.append((found[1], found[2]))
    return days, unreadable


def days_of_items(items: Iterable[schema.Item]) -> list[tuple[str, int]]:
    """``days_read``'s day counts; ``MalformedItem`` for the first day item that cannot be read."""
    days, unreadable = days_read(items)
    if unreadable:
        raise MalformedItem(unreadable[0].reason)
    return days


def sensor_days(client: Any, table: str, sensor_id: int, first: str, last: str) -> list[tuple[str, int]]:
    """A sensor's day counts from ``first`` to ``last`` (inclusive), by date (``days_of_items``)."""
    return days_of_items(sensor_items(client, table, sensor_id, first, last))


def _is_day_item(item: schema.Item) -> bool:
    return schema.is_day(str(item.get(schema.DATE, {}).get("S", "")))


def has_reports(item: schema.Item) -> bool:
    """Whether ``item`` is a day with reports, as every reader takes it (``days_read``): its sort key
    a day, its ``DataCount`` a whole number above 0. One that cannot be read is none (``days_read``
    names it); one of 0 was written by hand."""
    if not _is_day_item(item):
        return False
    try:
        found = schema.day_count_of_item(item)
    except MalformedItem:
        return False
    return found is not None and found[2] > 0


def month_range(sensor_id: int, first: str | None = None, last: str | None = None) -> tuple[str, str]:
    """The sort keys that bound a sensor's summary items from month ``first`` to ``last``
    (``YYYY-MM``, inclusive; all when absent)."""
    low = schema.summary_key(sensor_id, first or "0000-00")[schema.DATE]["S"]
    high = schema.summary_key(sensor_id, last or "9999-99")[schema.DATE]["S"]
    return low, high


def month_items(
    client: Any,
    table: str,
    sensor_id: int,
    first: str | None = None,
    last: str | None = None,
    *,
    whole_prefix: bool = False,
) -> dict[str, dict[str, int | None] | None]:
    """A sensor's summary items from month ``first`` to ``last`` (``YYYY-MM``, inclusive; all when
    absent) as stored: every item under ``SUMMARY#`` by what follows the prefix, every element, one
    that is not an integer as ``None``, a ``DailyCounts`` that is no map as ``None``
    (``schema.daily_counts_as_read``). One ``Query``. ``whole_prefix``: every item whose key begins
    with ``SUMMARY#``, also one that sorts outside the months (``SUMMARY#garbage``, written by hand)."""
    if not whole_prefix:
        return _months_as_stored(sensor_items(client, table, sensor_id, *month_range(sensor_id, first, last)))
    request = {
        "TableName": table,
        "KeyConditionExpression": "#s = :s AND begins_with(#d, :p)",
        "ExpressionAttributeNames": {"#s": schema.SENSOR_ID, "#d": schema.DATE},
        "ExpressionAttributeValues": {":s": {"N": str(sensor_id)}, ":p": {"S": schema.SUMMARY_PREFIX}},
        "ConsistentRead": True,
    }
    return _months_as_stored(item for page in _pages(client, "Query", **request) for item in page["Items"])


def _months_as_stored(items: Iterable[schema.Item]) -> dict[str, dict[str, int | None] | None]:
    return {
        schema.summary_month_of_item(item): schema.daily_counts_as_read(item)
        for item in items
        if schema.DAILY_COUNTS in item
    }


def summary_months(
    client: Any, table: str, sensor_id: int, first: str | None = None, last: str | None = None
) -> dict[str, dict[str, int]]:
    """A sensor's summary by month (``month_items``), only month items and the days of their month:
    a hand-made ``SUMMARY#2024-05\\n`` or an element that names no day of its month is left out
    (``summary rebuild --exact`` removes them); ``MalformedItem`` for a day whose element is not a
    number (the same repair mends it)."""
    return months_of_items(sensor_id, sensor_items(client, table, sensor_id, *month_range(sensor_id, first, last)))


def months_read(sensor_id: int, items: Iterable[schema.Item]) -> tuple[dict[str, dict[str, int]], list[Unreadable]]:
    """The months among a sensor's ``items``, as ``summary_months`` reads them, and what of them
    cannot be read, each alone: a month item whose ``DailyCounts`` is no map (the month is left
    out), an element that is no day of the month, no number or negative (the month keeps its
    other days)."""
    out: dict[str, dict[str, int]] = {}
    unreadable: list[Unreadable] = []
    for month, daily in _months_as_stored(items).items():
        if not schema.is_month(month):
            continue
        item = f"sensor {sensor_id}'s summary item {schema.SUMMARY_PREFIX}{month}"
        if daily is None:
            unreadable.append(Unreadable(f"{item}: {schema.DAILY_COUNTS} is no map", month=month))
            continue
        out[month] = {}
        for d, n in daily.items():
            if not (schema.is_day(d) and schema.month_of(d) == month):
                reason = f"{item}: element {d[:40]!r} is no day of {month}"
                unreadable.append(Unreadable(reason, month=month, foreign=True))
            elif n is None:
                unreadable.append(Unreadable(f"{item}: element {d} is not a number", day=d, month=month))
            elif n < 0:
                unreadable.append(Unreadable(f"{item}: element {d} is negative ({n})", day=d, month=month))
            else:
                out[month][d] = n
    return out, unreadable


def months_of_items(sensor_id: int, items: Iterable[schema.Item]) -> dict[str, dict[str, int]]:
    """``months_read``'s months; ``MalformedItem`` for the first thing of them that cannot be read
    (an element that is no day of its month is skipped, as a sort key that is no month is)."""
    months, unreadable = months_read(sensor_id, items)
    unreadable = [u for u in unreadable if not u.foreign]
    if unreadable:
        raise MalformedItem(unreadable[0].reason)
    return months


def get_item(client: Any, table: str, key: schema.Item, *, consistent: bool = True) -> schema.Item | None:
    """One item by its key (a consistent read unless told); ``None`` when there is none."""
    response = dynamo.call("GetItem", lambda: client.get_item(TableName=table, Key=key, ConsistentRead=consistent))
    item: schema.Item | None = response.get("Item")
    return item or None


def sensors_with_data(client: Any, table: str, *, with_summaries: bool = False) -> list[int]:
    """Every sensor that has a day item with a count (a day item without ``DataCount`` holds no
    report), or a legacy summary (and, ``with_summaries``, a month item): a Scan, for the rebuild
    command only."""
    found: set[int] = set()
    for page in _pages(
        client,
        "Scan",
        TableName=table,
        ProjectionExpression="#s, #d, #c",
        ExpressionAttributeNames={"#s": schema.SENSOR_ID, "#d": schema.DATE, "#c": schema.DATA_COUNT},
    ):
        for item in page["Items"]:
            if (
                schema.is_legacy_summary(item)
                or (str(item[schema.DATE]["S"])[:1].isdigit() and schema.DATA_COUNT in item)
                or (with_summaries and schema.is_summary(item))
            ):
                found.add(schema.sensor_of_item(item))
    return sorted(found)


def profile_items(client: Any, table: str) -> list[schema.Item]:
    """Every sensor profile item (a Scan: for the command line, never for the Lambda functions)."""
    return [
        item
        for page in _pages(
            client,
            "Scan",
            TableName=table,
            FilterExpression="#d = :p",
            ExpressionAttributeNames={"#d": schema.DATE},
            ExpressionAttributeValues={":p": {"S": schema.PROFILE_SORT_KEY}},
            ConsistentRead=True,
        )
        for item in page["Items"]
    ]
