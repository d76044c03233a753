"""The silence check's reads of a page's day items (``check.py`` runs them, ``rules.py`` decides):
for each registered sensor with a threshold, its days, newest first, as far back as its last report.

1. ``recent``: one ``BatchGetItem`` of the sensors' day items of today in their own zones; then, for
   those with no report today, one of yesterday's;
2. ``from_summaries``: for those with no report on either day, one ``BatchGetItem`` of their month
   summary items (``SUMMARY#`` the month of yesterday, then the month before for those it leaves
   open): the newest day before yesterday with a count is their last day with reports; one
   ``BatchGetItem`` of those day items gives its hours. A summary trails its day items by a moment
   (the stream), so a day counted in the last seconds may be missed: the next check sees it;
3. ``earlier``: for the sensors still open (silent since before last month, never reported, or a
   summary that names a day whose item holds no report), a ``Query`` of the sensor's partition,
   newest day first (``Date < yesterday``: profile and summary sort keys sort after every day): a page
   of ``EARLIER_FIRST_PAGE`` items, then pages of ``EARLIER_PAGE`` while no item read holds a report,
   to the partition's first day; ``workers`` sensors at once, each alone: a sensor whose reads fail
   costs that sensor only.

A day item without ``DataCount`` (left empty) holds no report wherever it is read, and an item that
is no day item is no day: every step reads past them (the summary holds only days with a count).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from datetime import date, datetime, timedelta, tzinfo
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from sensor_digest.errors import MalformedItem
from sensor_digest.logs import LOG
from sensor_digest.silence.rules import local_days
from sensor_digest.store import dynamo, schema

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

DAY_PROJECTION = (schema.SENSOR_ID, schema.DATE, schema.DATA_COUNT, schema.HOUR_COUNTS)
SUMMARY_PROJECTION = (schema.SENSOR_ID, schema.DATE, schema.DAILY_COUNTS)
SUMMARY_MONTHS = 2  # the month of yesterday and the one before: past them, the sensor's Query
EARLIER_FIRST_PAGE = 5  # items the first older-day Query reads: most sensors' last report is among them
EARLIER_PAGE = 100  # items each further page reads, while none read holds a report
READ_WORKERS = 16  # older-day Queries at once (the client's pool holds as many connections, and two more)
DayHours = tuple[str, Mapping[str, int] | None]


class Sensor(Protocol):
    """What the reads need of a watched sensor (``check.Watched``)."""

    @property
    def sensor_id(self) -> int: ...

    @property
    def zone(self) -> tzinfo: ...


def hours_of_day_item(item: Mapping[str, Any]) -> Mapping[str, int] | None:
    """What a day item says of its reports by hour: ``{}`` none (no item, no ``DataCount``: an empty
    item, or a count of 0), ``None`` some at unknown hours (a day item from before hours, a map that
    is not one, or one holding fewer reports than ``DataCount``: the map was created by a write
    after the upgrade, the day's earlier reports have no hour)."""
    try:
        found = schema.day_count_of_item(item) if item else None
        if found is None or found[2] <= 0:
            return {}
        hours = schema.hour_counts_of_item(item)
        return hours if hours is not None and sum(hours.values()) >= found[2] else None
    except MalformedItem as bad:
        LOG.warning("day item read as reported at unknown hours", reason=str(bad))
        return None


def last_counted_day(item: Mapping[str, Any], before: str) -> str | None:
    """The newest day of a summary item's ``DailyCounts`` before ``before`` with a count above 0;
    ``None`` when none (an element that is no day or no number is no count)."""
    daily = schema.daily_counts_as_read(item) or {}
    counted = [day for day, n in daily.items() if n and n > 0 and schema.is_day(day) and day < before]
    return max(counted, default=None)


def month_before(month: str) -> str:
    """``YYYY-MM`` of the month before ``month``."""
    first = date(int(month[:4]), int(month[5:]), 1)
    return (first - timedelta(days=1)).isoformat()[:7]


class DayReads:
    """The reads of the module, on one table, ``workers`` older-day ``Query``s at once."""

    def __init__(self, *, table_name: str, client: DynamoDBClient, workers: int = READ_WORKERS) -> None:
        self._table = table_name
        self._client = client
        self.workers = max(1, workers)
        self.use_summaries = True  # step 2 (off: every sensor open after step 1 gets its Query, as before)

    def _batch(self, keys: Sequence[dict[str, Any]], projection: Sequence[str]) -> tuple[list[dict[str, Any]], int]:
        items = dynamo.batch_get(self._client, self._table, list(keys), consistent=False, projection=projection)
        return items, (len(keys) + 99) // 100

    def recent(self, open_: list[Sensor], now: datetime, days: dict[int, list[DayHours]]) -> tuple[list[Sensor], int]:
        """Step 1: today's and yesterday's day items into ``days``; the sensors with no report on
        either, and the requests it took."""
        spent = 0
        for back in (0, 1):  # today, then yesterday for those with no report today
            if not open_:
                break
            items, n = self._batch(
                [schema.day_key(s.sensor_id, local_days(now, s.zone)[back]) for s in open_], DAY_PROJECTION
            )
            spent += n
            by_sensor = {schema.sensor_of_item(item): item for item in items}
            still = []
            for s in open_:
                hours = hours_of_day_item(by_sensor.get(s.sensor_id, {}))
                days[s.sensor_id].append((local_days(now, s.zone)[back], hours))
                if hours == {}:
                    still.append(s)
            open_ = still
        return open_, spent

    def from_summaries(
        self, open_: list[Sensor], now: datetime, days: dict[int, list[DayHours]]
    ) -> tuple[list[Sensor], int]:
        """Step 2: the last day with reports of the month summaries into ``days``; the sensors it
        leaves open, and the requests it took."""
        spent = 0
        month = {s.sensor_id: schema.month_of(local_days(now, s.zone)[1]) for s in open_}
        candidates: dict[int, str] = {}
        for _ in range(SUMMARY_MONTHS):
            wanted = [s for s in open_ if s.sensor_id not in candidates]
            if not wanted:
                break
            items, n = self._batch(
                [schema.summary_key(s.sensor_id, month[s.sensor_id]) for s in wanted], SUMMARY_PROJECTION
            )
            spent += n
            by_sensor = {schema.sensor_of_item(item): item for item in items}
            for s in wanted:
                found = last_counted_day(by_sensor.get(s.sensor_id, {}), local_days(now, s.zone)[1])
                if found is not None:
                    candidates[s.sensor_id] = found
                month[s.sensor_id] = month_before(month[s.sensor_id])
        if not candidates:
            return open_, spent
        items, n = self._batch([schema.day_key(sensor, day) for sensor, day in candidates.items()], DAY_PROJECTION)
        by_sensor = {schema.sensor_of_item(item): item for item in items}
        still = []
        for s in open_:
            hours = hours_of_day_item(by_sensor.get(s.sensor_id, {})) if s.sensor_id in candidates else {}
            if hours == {}:  # no summary day, or one whose item holds no report: the sensor's Query
                still.append(s)
            else:
                days[s.sensor_id].append((candidates[s.sensor_id], hours))
        return still, spent + n

    def earlier(
        self, open_: list[Sensor], now: datetime, pool: Executor | None = None
    ) -> list[tuple[int, list[DayHours], int, Exception | None]]:
        """Step 3, ``workers`` sensors at once (on ``pool`` when given, the threads a whole check
        shares): each sensor's days (``_earlier``), its requests, and what failed (``None``: nothing)."""

        def one(s: Sensor) -> tuple[int, list[DayHours], int, Exception | None]:
            spent = [0]
            try:
                return s.sensor_id, self._earlier(s.sensor_id, local_days(now, s.zone)[1], spent), spent[0], None
            except Exception as exc:  # a sensor whose reads fail costs that sensor alone
                return s.sensor_id, [], spent[0], exc

        if self.workers == 1 or len(open_) <= 1:
            return [one(s) for s in open_]
        if pool is not None:
            return list(pool.map(one, open_))
        with ThreadPoolExecutor(max_workers=min(self.workers, len(open_))) as own:
            return list(own.map(one, open_))

    def _earlier(self, sensor_id: int, before: str, spent: list[int]) -> list[DayHours]:
        """The sensor's day items before ``before``, newest first, down to the first that holds a
        report (or the partition's first day): pages of one ``Query``, ``spent`` counting them."""
        names = {"#s": schema.SENSOR_ID, "#d": schema.DATE, "#c": schema.DATA_COUNT, "#h": schema.HOUR_COUNTS}
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "#s = :s AND #d < :before",
            "FilterExpression": "attribute_exists(#c)",  # an empty day item holds no report
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": {":s": {"N": str(sensor_id)}, ":before": {"S": before}},
            "ProjectionExpression": ", ".join(names),
            "ScanIndexForward": False,
            "Limit": EARLIER_FIRST_PAGE,
        }
        found: list[DayHours] = []
        while True:
            response = dynamo.call("Query", partial(self._client.query, **request))
            spent[0] += 1
            for item in response.get("Items", []):
                day = str(item.get(schema.DATE, {}).get("S", ""))
                if not schema.is_day(day):
                    continue  # no day item (a hand-made sort key sorts among the days)
                found.append((day, hours_of_day_item(item)))
                if found[-1][1] != {}:
                    return found
            if not response.get("LastEvaluatedKey"):
                return found
            request = {**request, "ExclusiveStartKey": response["LastEvaluatedKey"], "Limit": EARLIER_PAGE}
