"""The silence check: which registered sensors are silent past their threshold (``rules.py``),
from reads only, never a ``Scan`` of the digest table.

One page of the check is at most 100 registered sensors:

1. one ``Query`` of the ``Profiles`` index (the registered sensors, their zones);
2. one ``BatchGetItem`` of their profiles' ``SilenceHours`` (the index does not project it);
3. one ``BatchGetItem`` of their day items of today in their own zones (``HourCounts``); then,
   for the sensors with no report today, one of yesterday's;
4. for a sensor with no report today or yesterday, one ``Query`` of its partition, newest day first
   (``Date < yesterday``: profile and summary sort keys sort after every day), for the day it last
   reported.

Every read is eventually consistent (a report of the last second may be missed: the next check
sees it). ``python -m bench.silence`` measures what a check costs per 1,000 sensors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from functools import partial
from typing import TYPE_CHECKING, Any

from sensor_digest import zones
from sensor_digest.errors import MalformedItem, UnknownTimeZone
from sensor_digest.logs import LOG
from sensor_digest.silence.rules import Silent, check_hours, local_days, silence_of
from sensor_digest.store import dynamo, reads, schema

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

PAGE_SENSORS = 100
DAY_PROJECTION = (schema.SENSOR_ID, schema.DATE, schema.DATA_COUNT, schema.HOUR_COUNTS)
EARLIER_DAYS_READ = 5  # day items read back past yesterday (an empty day item holds no report)
DayHours = tuple[str, Mapping[str, int] | None]


@dataclass(frozen=True)
class Watched:
    """A registered sensor as the check sees it: its zone and its threshold (``None``: none)."""

    sensor_id: int
    zone: tzinfo
    threshold: int | None


@dataclass
class SilencePage:
    """One page: the silent sensors among the page's registered ones, how many were checked, where
    the next page starts (``None``: the last), and the requests it took."""

    silent: list[Silent] = field(default_factory=list)
    checked: int = 0
    after: int | str | None = None  # the last sensor of the page (a malformed id as DynamoDB writes it)
    requests: int = 0


def hours_of_day_item(item: Mapping[str, Any]) -> Mapping[str, int] | None:
    """What a day item says of its reports by hour: ``{}`` none (no count), ``None`` some at unknown
    hours (a day item from before hours, a map that is not one, or one holding fewer reports than
    ``DataCount``: the map was created by a write after the upgrade, the day's earlier reports
    have no hour)."""
    try:
        found = schema.day_count_of_item(item) if item else None
        if found is None or found[2] <= 0:
            return {}
        hours = schema.hour_counts_of_item(item)
        return hours if hours is not None and sum(hours.values()) >= found[2] else None
    except MalformedItem as bad:
        LOG.warning("day item read as reported at unknown hours", reason=str(bad))
        return None


class SilenceCheck:
    def __init__(
        self,
        *,
        table_name: str,
        client: DynamoDBClient,
        default_hours: int | None,
        default_zone: tzinfo,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._table = table_name
        self._client = client
        self._default = default_hours
        self._zone = default_zone
        self._clock = clock

    def run(self) -> SilencePage:
        """Every registered sensor, page by page: all the silent ones, how many were checked."""
        total = SilencePage()
        after: int | str | None = None
        while True:
            page = self.page(limit=PAGE_SENSORS, after=after)
            total.silent += page.silent
            total.checked += page.checked
            total.requests += page.requests
            if page.after is None:
                return total
            after = page.after

    def page(self, *, limit: int, after: int | str | None) -> SilencePage:
        """At most ``limit`` registered sensors after sensor ``after``, checked (see the module)."""
        out = SilencePage()
        index = reads.profiles_page(self._client, self._table, limit=limit, after=after)
        out.requests += 1
        last = index.last_key and index.last_key.get(schema.SENSOR_ID, {}).get("N")
        out.after = (int(last) if last.isdigit() else last) if last else None
        watched = self._watched(index.items, out)
        out.checked = len(watched)
        now = self._clock()
        days = self._days(watched, now, out)
        for sensor in watched:
            found = silence_of(
                sensor.sensor_id, days[sensor.sensor_id], now=now, zone=sensor.zone, threshold=sensor.threshold
            )
            if found is not None:
                out.silent.append(found)
        return out

    # -- reads ----------------------------------------------------------------------------

    def _watched(self, entries: list[dict[str, Any]], out: SilencePage) -> list[Watched]:
        """The page's registered sensors with their zones and thresholds (their profiles' own, else
        the default)."""
        zones_by_id: dict[int, tzinfo] = {}
        for entry in entries:
            try:
                sensor = schema.sensor_of_item(entry)
            except MalformedItem:
                continue
            zones_by_id[sensor] = self._zone_of(entry)
        if not zones_by_id:
            return []
        keys = [schema.profile_key(sensor) for sensor in sorted(zones_by_id)]
        profiles = dynamo.batch_get(
            self._client, self._table, keys, consistent=False, projection=(schema.SENSOR_ID, schema.SILENCE_HOURS)
        )
        out.requests += (len(keys) + 99) // 100
        own = {schema.sensor_of_item(item): threshold_of(item) for item in profiles}
        return [Watched(sensor, zone, own.get(sensor) or self._default) for sensor, zone in sorted(zones_by_id.items())]

    def _zone_of(self, entry: Mapping[str, Any]) -> tzinfo:
        name = entry.get(schema.TIME_ZONE, {}).get("S")
        try:
            return zones.load(str(name)) if name else self._zone
        except UnknownTimeZone:
            return self._zone  # ingest rejects that sensor's reports until its profile is mended

    def _days(self, watched: list[Watched], now: datetime, out: SilencePage) -> dict[int, list[DayHours]]:
        """Each watched sensor's days, newest first, as far back as its last report (or its first day)."""
        days: dict[int, list[DayHours]] = {w.sensor_id: [] for w in watched}
        open_ = [w for w in watched if w.threshold is not None]
        for back in (0, 1):  # today, then yesterday for those with no report today
            if not open_:
                break
            keys = {w.sensor_id: schema.day_key(w.sensor_id, local_days(now, w.zone)[back]) for w in open_}
            items = dynamo.batch_get(
                self._client, self._table, list(keys.values()), consistent=False, projection=DAY_PROJECTION
            )
            out.requests += (len(keys) + 99) // 100
            by_sensor = {schema.sensor_of_item(item): item for item in items}
            still = []
            for w in open_:
                day = local_days(now, w.zone)[back]
                hours = hours_of_day_item(by_sensor.get(w.sensor_id, {}))
                days[w.sensor_id].append((day, hours))
                if hours == {}:
                    still.append(w)
            open_ = still
        for w in open_:
            days[w.sensor_id] += self._earlier(w.sensor_id, local_days(now, w.zone)[1])
            out.requests += 1
        return days

    def _earlier(self, sensor_id: int, before: str) -> list[DayHours]:
        """The sensor's newest day items before ``before``: one ``Query``, newest first."""
        response = dynamo.call(
            "Query",
            partial(
                self._client.query,
                TableName=self._table,
                KeyConditionExpression="#pk = :pk AND #d < :before",
                ExpressionAttributeNames={f"#p{i}": name for i, name in enumerate(DAY_PROJECTION)}
                | {"#pk": schema.SENSOR_ID, "#d": schema.DATE},
                ExpressionAttributeValues={":pk": {"N": str(sensor_id)}, ":before": {"S": before}},
                ProjectionExpression=", ".join(f"#p{i}" for i in range(len(DAY_PROJECTION))),
                ScanIndexForward=False,
                Limit=EARLIER_DAYS_READ,
            ),
        )
        return [
            (schema.text_of(item, schema.DATE), hours_of_day_item(item))
            for item in response.get("Items", [])
            if schema.is_day(str(item.get(schema.DATE, {}).get("S", "")))
        ]


def threshold_of(item: Mapping[str, Any]) -> int | None:
    """A profile's own threshold (``SilenceHours``), ``None`` when it has none or one out of range."""
    raw = item.get(schema.SILENCE_HOURS, {}).get("N")
    try:
        return check_hours(int(raw)) if raw is not None else None
    except ValueError:
        return None
