"""``sensor-digest summary rebuild``: recompute summary items from the day items.

For repair, backfill, and the migration of the single ``SUMMARY`` item that earlier versions
wrote. Each day whose month item lacks it, or holds less, is written with the summary path's own
three-step map upsert (``SummaryWriter``), so elements only ever move up and the rebuild is safe
while the pipeline runs: whatever the stream writes meanwhile is never moved back. A legacy item
is deleted once its sensor's months are rebuilt.

``exact=True`` (``--exact``) also lowers and removes, so that each month item's ``DailyCounts`` is
exactly its day items (the repair after an overcount: a day item corrected by hand, which the
summary path, moving elements only up, never follows). Per month, over what was read (``plan_month``):

- an element missing or lower than its day item is raised by the same upsert as above;
- an element higher than its day item is set to it, and an element of a day without a day item is
  removed, in one ``TransactWriteItems``: an ``Update`` of the month item (``SET`` / ``REMOVE`` of
  those elements only, on ``attribute_exists(DailyCounts)``) and a ``ConditionCheck`` on each of
  those days: ``DataCount = :n`` (the value written), ``attribute_not_exists(DataCount)`` (for a
  removal). A month has at most 31 days: at most 32 actions. Keys that name no day of the month
  (written by hand; the summary path never writes one) are removed in the same ``Update``.

Why this is safe while the pipeline runs: a lowered element is set to its day item's count *at
the commit* (the check is part of the transaction), and every write of the summary path carries a
count the day item had before, or has later: before the commit it is overwritten with the
current count, after it it only raises. A day raised between the reads and the commit fails its
check, even when its stream record was applied or found stale meanwhile (the case where writing
the value read would lose the raise for good); the month is then read again (``GetItem`` and a
``Query`` of its days, both consistent) and planned again, a bounded number of times. Elements the
transaction does not name (a day created after the reads) are the summary path's, untouched.
One thing no rebuild can undo: a stream record older than a hand correction that the summary
path applies after the rebuild (a batch retried from its checkpoint) raises its element again,
so run it once the summary function has caught up with the correction.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sensor_digest.errors import Contention, SensorDigestError, TransientFault
from sensor_digest.store import dynamo, schema
from sensor_digest.store.reads import get_item, month_items, sensor_days, sensors_with_data
from sensor_digest.store.schema import is_day
from sensor_digest.summary import SummaryWriter

MAX_BACKOFF_SECONDS = 1.0


@dataclass
class RebuildReport:
    """What a rebuild did."""

    sensors: int = 0  # looked at
    days: int = 0  # day items read
    written: int = 0  # elements raised to their day item
    already_current: int = 0  # elements that held their day item's count already
    legacy_removed: int = 0  # single SUMMARY items of earlier versions, migrated and deleted
    months: set[tuple[int, str]] = field(default_factory=set)  # month items touched
    # --exact only
    lowered: int = 0
    removed: int = 0
    retries: int = 0
    junk_removed: int = 0  # items under SUMMARY# that name no month (written by hand)
    failed: list[str] = field(default_factory=list)  # one line per sensor whose rebuild stopped


@dataclass(frozen=True)
class MonthPlan:
    """What makes one month item's ``DailyCounts`` equal its day items, from what was read."""

    raise_to: dict[str, int]
    """Days whose element is missing or lower: the summary path's upsert (it only moves up)."""
    lower_to: dict[str, int]
    """Days whose element is higher than the day item: set, the day item's count checked."""
    remove_days: tuple[str, ...]
    """Days of the month in the map without a day item: removed, the day item's absence checked."""
    remove_other: tuple[str, ...]
    """Keys that name no day of this month (never written by the summary path): removed."""
    current: int
    """Days whose element already equals its day item."""

    @property
    def lowers(self) -> bool:
        """Whether it takes the checked transaction (anything to lower or remove)."""
        return bool(self.lower_to or self.remove_days or self.remove_other)


def plan_month(month: str, held: Mapping[str, int | None], days: Mapping[str, int]) -> MonthPlan:
    """The plan for ``month`` (``YYYY-MM``) given its item's map as read (``held``, ``{}`` when there
    is none; ``None`` for an element that is not a number, which holds no count) and its day items
    as read (``days``: day -> ``DataCount``; keys that are no day of ``month`` are ignored)."""
    days = {d: n for d, n in days.items() if is_day(d) and schema.month_of(d) == month}
    counts = {d: -1 if n is None else n for d, n in held.items()}
    extra = sorted(k for k in counts if k not in days)
    return MonthPlan(
        raise_to={d: n for d, n in sorted(days.items()) if counts.get(d, -1) < n},
        lower_to={d: n for d, n in sorted(days.items()) if counts.get(d, -1) > n},
        remove_days=tuple(k for k in extra if is_day(k) and schema.month_of(k) == month),
        remove_other=tuple(k for k in extra if not (is_day(k) and schema.month_of(k) == month)),
        current=sum(1 for d, n in days.items() if counts.get(d) == n),
    )


def exact_actions(table: str, sensor_id: int, month: str, plan: MonthPlan) -> list[dict[str, Any]]:
    """The transaction that lowers and removes what ``plan`` says, checking each day it names."""
    names = {"#dc": schema.DAILY_COUNTS}
    values: dict[str, Any] = {}
    sets, removes = [], []
    for i, (day, n) in enumerate(plan.lower_to.items()):
        names[f"#l{i}"] = day
        values[f":l{i}"] = {"N": str(n)}
        sets.append(f"#dc.#l{i} = :l{i}")
    for i, key in enumerate(plan.remove_days + plan.remove_other):
        names[f"#r{i}"] = key
        removes.append(f"#dc.#r{i}")
    clauses = ([f"SET {', '.join(sets)}"] if sets else []) + ([f"REMOVE {', '.join(removes)}"] if removes else [])
    update: dict[str, Any] = {
        "TableName": table,
        "Key": schema.summary_key(sensor_id, month),
        "UpdateExpression": " ".join(clauses),
        "ConditionExpression": "attribute_exists(#dc)",
        "ExpressionAttributeNames": names,
    }
    if values:
        update["ExpressionAttributeValues"] = values
    checks: list[dict[str, Any]] = [
        {
            "ConditionCheck": {
                "TableName": table,
                "Key": schema.day_key(sensor_id, day),
                "ConditionExpression": "#n = :n",
                "ExpressionAttributeNames": {"#n": schema.DATA_COUNT},
                "ExpressionAttributeValues": {":n": {"N": str(n)}},
            }
        }
        for day, n in plan.lower_to.items()
    ]
    checks += [
        {
            "ConditionCheck": {
                "TableName": table,
                "Key": schema.day_key(sensor_id, day),
                "ConditionExpression": "attribute_not_exists(#n) OR #n = :zero",  # 0: no report either
                "ExpressionAttributeNames": {"#n": schema.DATA_COUNT},
                "ExpressionAttributeValues": {":zero": {"N": "0"}},
            }
        }
        for day in plan.remove_days
    ]
    return [{"Update": update}, *checks]


def rebuild(
    client: Any,
    table: str,
    sensor_ids: Iterable[int] | None = None,
    *,
    exact: bool = False,
    max_attempts: int = 8,
    sleep: Callable[[float], None] = time.sleep,
) -> RebuildReport:
    """Rebuild these sensors' month items (every sensor's when ``None``); ``exact``: see the module."""
    if exact:
        return ExactRebuild(client, table, max_attempts=max_attempts, sleep=sleep).run(sensor_ids)
    writer = SummaryWriter(table_name=table, client=client)
    report = RebuildReport()
    for sensor_id in sorted(sensor_ids) if sensor_ids is not None else sensors_with_data(client, table):
        report.sensors += 1
        try:
            _raise_sensor(client, table, writer, sensor_id, report)
        except SensorDigestError as exc:  # a malformed item, a fault: named, and the others go on
            report.failed.append(f"sensor {sensor_id}: {exc}")
    return report


def _raise_sensor(client: Any, table: str, writer: SummaryWriter, sensor_id: int, report: RebuildReport) -> None:
    """Raise one sensor's month items to its day items (elements only move up)."""
    days = dict(sensor_days(client, table, sensor_id, "0000-00-00", "9999-12-31"))
    held = {day: n for daily in month_items(client, table, sensor_id).values() for day, n in (daily or {}).items()}
    behind: dict[str, dict[str, int]] = {}  # month -> its days whose element is missing or lower
    for day, count in sorted(days.items()):
        report.days += 1
        if (held.get(day) or -1) >= count:  # a malformed element (None) holds no count
            report.already_current += 1
        else:
            behind.setdefault(schema.month_of(day), {})[day] = count
    for month, counts in behind.items():  # one write per month item
        outcome = writer.upsert_month(sensor_id, month, counts)
        report.written += len(outcome.written)
        report.already_current += len(outcome.stale)
        report.months.add((sensor_id, month))
    _remove_legacy(client, table, sensor_id, report)


def _remove_legacy(client: Any, table: str, sensor_id: int, report: RebuildReport) -> None:
    if get_item(client, table, schema.legacy_summary_key(sensor_id)) is not None:
        client.delete_item(TableName=table, Key=schema.legacy_summary_key(sensor_id))
        report.legacy_removed += 1


class ExactRebuild:
    """``rebuild(exact=True)``: each month item set to exactly its day items (see the module)."""

    def __init__(
        self, client: Any, table: str, *, max_attempts: int = 8, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self._client = client
        self._table = table
        self._writer = SummaryWriter(table_name=table, client=client)
        self._attempts = max_attempts
        self._sleep = sleep

    def run(self, sensor_ids: Iterable[int] | None) -> RebuildReport:
        report = RebuildReport()
        if sensor_ids is None:
            sensor_ids = sensors_with_data(self._client, self._table, with_summaries=True)
        for sensor_id in sorted(sensor_ids):
            report.sensors += 1
            try:
                self.sensor(sensor_id, report)
            except SensorDigestError as exc:  # a malformed item, a fault: named, and the others go on
                report.failed.append(f"sensor {sensor_id}: {exc}")
        return report

    def sensor(self, sensor_id: int, report: RebuildReport) -> None:
        days = self._days(sensor_id, "0000-00-00", "9999-12-31")
        held = month_items(self._client, self._table, sensor_id, whole_prefix=True)  # SUMMARY#garbage too
        report.days += len(days)
        for junk in sorted(m for m in held if not schema.is_month(m)):  # names no month: no summary item
            self._client.delete_item(TableName=self._table, Key=schema.summary_key(sensor_id, junk))
            report.junk_removed += 1
        for month in sorted({schema.month_of(d) for d in days} | {m for m in held if schema.is_month(m)}):
            in_month = {d: n for d, n in days.items() if schema.month_of(d) == month}
            self.month(sensor_id, month, held.get(month) or {}, in_month, report)
        _remove_legacy(self._client, self._table, sensor_id, report)

    def month(
        self, sensor_id: int, month: str, held: Mapping[str, int | None], days: Mapping[str, int], report: RebuildReport
    ) -> None:
        """Make one month item exact, starting from what was read; re-read after a cancellation."""
        for attempt in range(self._attempts):
            plan = plan_month(month, held, days)
            if plan.raise_to:
                outcome = self._writer.upsert_month(sensor_id, month, plan.raise_to)
                report.written += len(outcome.written)
                if outcome.written:
                    report.months.add((sensor_id, month))
            if not plan.lowers:
                report.already_current += plan.current
                return
            refusals = dynamo.transact_refusals(self._client, exact_actions(self._table, sensor_id, month, plan))
            if refusals is None:
                report.already_current += plan.current
                report.lowered += len(plan.lower_to)
                report.removed += len(plan.remove_days) + len(plan.remove_other)
                report.months.add((sensor_id, month))
                return
            fault = dynamo.cancellation_fault([r.code for r in refusals], [r.message for r in refusals])
            if fault is not None and not isinstance(fault, Contention):
                raise fault  # neither a moved day nor throttling / a conflict: nothing a retry cures
            report.retries += 1
            if attempt + 1 < self._attempts:
                self._sleep(random.uniform(0, min(MAX_BACKOFF_SECONDS, 0.01 * 2**attempt)))
            held, days = self._read_month(sensor_id, month)
        raise TransientFault(
            f"sensor {sensor_id}, month {month}: its day items kept changing during the exact rebuild "
            f"({self._attempts} attempts); what was written stands, run it again"
        )

    def _read_month(self, sensor_id: int, month: str) -> tuple[dict[str, int | None], dict[str, int]]:
        """The month item's map and the month's day items, both read again (consistent reads)."""
        item = get_item(self._client, self._table, schema.summary_key(sensor_id, month))
        held = (schema.daily_counts_as_read(item) or {}) if item else {}
        return held, self._days(sensor_id, f"{month}-01", f"{month}-31")

    def _days(self, sensor_id: int, first: str, last: str) -> dict[str, int]:
        return {day: n for day, n in sensor_days(self._client, self._table, sensor_id, first, last) if is_day(day)}
