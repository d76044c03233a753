"""The silence check: which registered sensors are silent past their threshold (``rules.py``),
from reads only, never a ``Scan`` of the digest table.

One page of the check is at most 100 registered sensors:

1. one ``Query`` of the ``Profiles`` index (the registered sensors, their zones);
2. one ``BatchGetItem`` of their profiles' ``SilenceHours`` and ``RegisteredAt`` (the index does not
   project them);
3. their days, newest first, back to their last report (``days.py``): batched reads of their day
   items of today and yesterday, then of their month summaries and the day they name; a ``Query``
   of the partition only for a sensor none of these answers, several at once.

A whole check (``run``) reads ``PAGES_AT_ONCE`` pages at once: each page's index ``Query`` follows
the last one's, the rest of its reads overlap the others'.

One sensor whose reads fail (throttled past the retries) or whose items cannot be read costs that
sensor alone: it is listed as ``unchecked`` with the reason, and the check goes on with the others.

Every read is eventually consistent (a report of the last second may be missed: the next check
sees it). ``python -m bench.silence`` measures what a check costs per 1,000 sensors, and how long a
check of 100,000 sensors silent for days takes (``--at-scale``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import InitVar, dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING, Any

from sensor_digest import zones
from sensor_digest.errors import MalformedItem, UnknownTimeZone
from sensor_digest.logs import LOG
from sensor_digest.silence.days import READ_WORKERS, DayHours, DayReads, hours_of_day_item
from sensor_digest.silence.rules import Silent, check_hours, registration_time, silence_of
from sensor_digest.store import dynamo, reads, schema

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

__all__ = ["CONNECTIONS", "READ_WORKERS", "SilenceCheck", "SilencePage", "Unchecked", "Watched", "hours_of_day_item"]

PAGE_SENSORS = 100
PAGES_AT_ONCE = 4  # pages a whole check reads at once (their batched reads overlap)
CONNECTIONS = READ_WORKERS + PAGES_AT_ONCE + 2  # what a client of the check's pools at most (its pool's size)
PROFILE_PROJECTION = (schema.SENSOR_ID, schema.SILENCE_HOURS, schema.REGISTERED_AT)


@dataclass(frozen=True)
class Watched:
    """A registered sensor as the check sees it: its zone, its threshold (``None``: none) and when it
    was registered (``None``: a profile from before registration times were kept)."""

    sensor_id: int
    zone: tzinfo
    threshold: int | None
    registered: datetime | None = None


@dataclass(frozen=True)
class Unchecked:
    """A registered sensor the check could not decide: its reads failed, or its items could not be read."""

    sensor_id: int
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {"sensor_id": self.sensor_id, "error": self.reason}


@dataclass
class SilencePage:
    """One page: the silent sensors among the page's registered ones, how many were checked, where
    the next page starts (``None``: the last), the requests it took, and the sensors it could not
    decide."""

    silent: list[Silent] = field(default_factory=list)
    checked: int = 0
    after: int | str | None = None  # the last sensor of the page (a malformed id as DynamoDB writes it)
    requests: int = 0
    unchecked: list[Unchecked] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list, repr=False)  # the index's, until checked


def _add(total: SilencePage, page: SilencePage) -> None:
    total.silent += page.silent
    total.checked += page.checked
    total.requests += page.requests
    total.unchecked += page.unchecked


@dataclass(eq=False, kw_only=True)
class SilenceCheck:
    table_name: str
    client: DynamoDBClient
    default_hours: int | None
    default_zone: tzinfo
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    workers: InitVar[int] = READ_WORKERS  # the reads' (``days.workers``)
    days: DayReads = field(init=False)

    def __post_init__(self, workers: int) -> None:
        self.days = DayReads(table_name=self.table_name, client=self.client, workers=workers)

    def run(self) -> SilencePage:
        """Every registered sensor, page by page: all the silent ones, how many were checked. Up to
        ``PAGES_AT_ONCE`` pages are checked at once (each page's index ``Query`` starts after the
        last page's), and the older-day ``Query``s of all of them share ``workers`` threads; with
        one worker, one read at a time."""
        total = SilencePage()
        if self.days.workers == 1:
            after: int | str | None = None
            while True:
                page = self.page(limit=PAGE_SENSORS, after=after)
                _add(total, page)
                if page.after is None:
                    return total
                after = page.after
        with ThreadPoolExecutor(self.days.workers) as queries, ThreadPoolExecutor(PAGES_AT_ONCE) as pages:
            waiting: deque[Future[SilencePage]] = deque()
            out = self._index(PAGE_SENSORS, None)
            while True:
                waiting.append(pages.submit(self._checked, out, queries))
                while len(waiting) >= PAGES_AT_ONCE:
                    _add(total, waiting.popleft().result())
                if out.after is None:
                    break
                out = self._index(PAGE_SENSORS, out.after)
            while waiting:
                _add(total, waiting.popleft().result())
        return total

    def page(self, *, limit: int, after: int | str | None) -> SilencePage:
        """At most ``limit`` registered sensors after sensor ``after``, checked (see the module)."""
        return self._checked(self._index(limit, after), None)

    def _index(self, limit: int, after: int | str | None) -> SilencePage:
        """A page begun: the ``Profiles`` index's entries of at most ``limit`` sensors after ``after``."""
        out = SilencePage()
        index = reads.profiles_page(self.client, self.table_name, limit=limit, after=after)
        out.requests += 1
        last = index.last_key and index.last_key.get(schema.SENSOR_ID, {}).get("N")
        out.after = (int(last) if last.isdigit() else last) if last else None
        out.entries = index.items
        return out

    def _checked(self, out: SilencePage, queries: Executor | None) -> SilencePage:
        """The page's sensors checked: the silent ones in ``out.silent``, those undecided in ``out.unchecked``."""
        watched = self._watched(out.entries, out)
        out.entries = []
        out.checked = len(watched)
        now = self.clock()
        days = self._days(watched, now, out, queries)
        failed = {u.sensor_id for u in out.unchecked}
        for sensor in watched:
            if sensor.sensor_id in failed:
                continue
            try:
                found = silence_of(
                    sensor.sensor_id,
                    days[sensor.sensor_id],
                    now=now,
                    zone=sensor.zone,
                    threshold=sensor.threshold,
                    registered=sensor.registered,
                )
            except Exception as exc:  # one sensor's days that cannot be read cost that sensor alone
                out.unchecked.append(_unchecked(sensor.sensor_id, exc))
                continue
            if found is not None:
                out.silent.append(found)
        return out

    # -- reads ----------------------------------------------------------------------------

    def _watched(self, entries: list[dict[str, Any]], out: SilencePage) -> list[Watched]:
        """The page's registered sensors with their zones, thresholds (their profiles' own, else the
        default) and registration times."""
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
        profiles = dynamo.batch_get(self.client, self.table_name, keys, consistent=False, projection=PROFILE_PROJECTION)
        out.requests += (len(keys) + 99) // 100
        own = {schema.sensor_of_item(item): item for item in profiles}
        return [
            Watched(
                sensor,
                zone,
                threshold_of(own.get(sensor, {})) or self.default_hours,
                registration_time(own.get(sensor, {}).get(schema.REGISTERED_AT, {}).get("S")),
            )
            for sensor, zone in sorted(zones_by_id.items())
        ]

    def _zone_of(self, entry: Mapping[str, Any]) -> tzinfo:
        name = entry.get(schema.TIME_ZONE, {}).get("S")
        try:
            return zones.load(str(name)) if name else self.default_zone
        except UnknownTimeZone:
            return self.default_zone  # ingest rejects that sensor's reports until its profile is mended

    def _days(
        self, watched: list[Watched], now: datetime, out: SilencePage, queries: Executor | None
    ) -> dict[int, list[DayHours]]:
        """Each watched sensor's days, newest first, as far back as its last report (``days.py``)."""
        days: dict[int, list[DayHours]] = {w.sensor_id: [] for w in watched}
        open_, spent = self.days.recent([w for w in watched if w.threshold is not None], now, days)
        out.requests += spent
        if open_ and self.days.use_summaries:
            open_, spent = self.days.from_summaries(open_, now, days)
            out.requests += spent
        for sensor_id, earlier, spent, problem in self.days.earlier(open_, now, queries):
            out.requests += spent
            if problem is not None:
                out.unchecked.append(_unchecked(sensor_id, problem))
            days[sensor_id] += earlier
        return days


def _unchecked(sensor_id: int, problem: Exception) -> Unchecked:
    reason = getattr(problem, "reason", None) or f"{type(problem).__name__}: {problem}"
    LOG.warning("sensor left unchecked", sensor_id=sensor_id, reason=str(reason)[:300])
    return Unchecked(sensor_id, str(reason)[:300])


def threshold_of(item: Mapping[str, Any]) -> int | None:
    """A profile's own threshold (``SilenceHours``), ``None`` when it has none or one out of range."""
    raw = item.get(schema.SILENCE_HOURS, {}).get("N")
    try:
        return check_hours(int(raw)) if raw is not None else None
    except ValueError:
        return None
