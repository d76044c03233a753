"""The summary path: one item per sensor whose map ``DailyCounts`` holds every day's count.

A stream batch is coalesced (per sensor-day only the highest ``DataCount`` matters) and each
sensor-day is written once with the three-step map upsert:

1. ``SET DailyCounts.#day = :n`` if ``DailyCounts`` exists and the element is missing or lower;
2. when the map is missing: ``SET DailyCounts = {day: n}`` if ``DailyCounts`` does not exist;
3. when another writer created the map in between: step 1 again.

A failed condition in step 1 is told apart by what DynamoDB returns with it
(``ReturnValuesOnConditionCheckFailure=ALL_OLD``): no map means step 2; a map whose element
already holds ``n`` or more means the record is stale, which is a success. Elements only ever
move up, so replays, duplicates and reordering cannot move one backwards.

``SET m = if_not_exists(m, :e), m.#d = :v`` would be one request, but DynamoDB rejects two
overlapping document paths in one expression (moto accepts it); hence the three steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from botocore.exceptions import BotoCoreError, ClientError

from sensor_digest import dynamo, layout
from sensor_digest.errors import TransientFault
from sensor_digest.streams import DayCount, day_count_of

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

LOG = Logger(child=True)


@dataclass
class UpsertOutcome:
    written: bool
    stale: bool
    requests: int
    steps: list[str]


@dataclass
class SummaryReport:
    records: int = 0
    ignored: int = 0
    coalesced: int = 0
    written: int = 0
    stale: int = 0
    failed: int = 0
    requests: int = 0
    checkpoint: str | None = None
    reasons: list[str] = field(default_factory=list)

    def response(self) -> dict[str, list[dict[str, str]]]:
        """Lambda's partial batch response: the first record that did not succeed, if any."""
        failures = [] if self.checkpoint is None else [{"itemIdentifier": self.checkpoint}]
        return {"batchItemFailures": failures}


class SummaryWriter:
    """The three-step map upsert of one sensor-day into the sensor's summary item."""

    def __init__(self, *, table_name: str, client: DynamoDBClient) -> None:
        self._table = table_name
        self._client = client

    def upsert(self, sensor_id: int, day: str, count: int) -> UpsertOutcome:
        key = layout.summary_key(sensor_id)
        names = {"#dc": layout.DAILY_COUNTS, "#day": day}
        value = {"N": str(count)}
        steps: list[str] = []
        for step in ("update-element", "create-map", "update-element-again"):
            steps.append(step)
            if step == "create-map":
                created = self._create_map(key, day, value)
                if created:
                    return UpsertOutcome(written=True, stale=False, requests=len(steps), steps=steps)
                continue
            current = self._update_element(key, names, value)
            if current is None:
                return UpsertOutcome(written=True, stale=False, requests=len(steps), steps=steps)
            daily = layout.daily_counts_of_item(current)
            if daily is not None:
                held = daily.get(day, -1)
                if held >= count:
                    return UpsertOutcome(written=False, stale=True, requests=len(steps), steps=steps)
                raise TransientFault(f"element {day} holds {held} < {count}, yet the condition failed")
            if step == "update-element-again":
                raise TransientFault("DailyCounts vanished after another writer created it")
        raise TransientFault("map upsert did not settle")  # pragma: no cover - the loop returns

    def _update_element(
        self, key: dict[str, Any], names: dict[str, str], value: dict[str, str]
    ) -> dict[str, Any] | None:
        """``None`` when written; else the item as it was when the condition failed (``{}`` if absent)."""
        try:
            self._client.update_item(
                TableName=self._table,
                Key=key,
                UpdateExpression="SET #dc.#day = :n",
                ConditionExpression="attribute_exists(#dc) AND (attribute_not_exists(#dc.#day) OR #dc.#day < :n)",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues={":n": value},  # type: ignore[dict-item]
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if dynamo.error_code(exc) == "ConditionalCheckFailedException":
                item: dict[str, Any] = exc.response.get("Item") or {}  # type: ignore[assignment]
                return item
            raise dynamo.fault_from(exc, "UpdateItem") from exc
        except BotoCoreError as exc:
            raise dynamo.fault_from(exc, "UpdateItem") from exc
        return None

    def _create_map(self, key: dict[str, Any], day: str, value: dict[str, str]) -> bool:
        done = dynamo.call(
            "UpdateItem",
            lambda: self._client.update_item(
                TableName=self._table,
                Key=key,
                UpdateExpression="SET #dc = :map",
                ConditionExpression="attribute_not_exists(#dc)",
                ExpressionAttributeNames={"#dc": layout.DAILY_COUNTS},
                ExpressionAttributeValues={":map": {"M": {day: value}}},  # type: ignore[dict-item]
            ),
            tolerate="ConditionalCheckFailedException",
        )
        return done is not None


class SummaryService:
    """Coalesces a stream batch and upserts each sensor-day; reports where to checkpoint."""

    def __init__(self, *, writer: SummaryWriter, max_workers: int = 8, coalesce: bool = True) -> None:
        self._writer = writer
        self._max_workers = max_workers
        self._coalesce = coalesce

    def process(self, records: Sequence[Mapping[str, Any]]) -> SummaryReport:
        report = SummaryReport(records=len(records))
        first_index: dict[tuple[int, str], int] = {}
        highest: dict[tuple[int, str], int] = {}
        writes: list[tuple[int, DayCount]] = []  # (index of the first record it covers, value)
        for index, record in enumerate(records):
            found = day_count_of(record)
            if found is None:
                report.ignored += 1
                continue
            key = (found.sensor_id, found.day)
            if not self._coalesce:
                writes.append((index, found))
                continue
            first_index.setdefault(key, index)
            highest[key] = max(highest.get(key, found.count), found.count)
        if self._coalesce:
            writes = [(first_index[k], DayCount(k[0], k[1], n)) for k, n in highest.items()]
        report.coalesced = len(writes)
        failed_at: list[int] = []
        for index, outcome in self._run(writes):
            if isinstance(outcome, TransientFault):
                report.failed += 1
                report.reasons.append(outcome.reason)
                failed_at.append(index)
                continue
            report.requests += outcome.requests
            report.written += outcome.written
            report.stale += outcome.stale
        if failed_at:
            first = min(failed_at)
            report.checkpoint = str(records[first]["dynamodb"]["SequenceNumber"])
            LOG.warning("summary writes failed; checkpointing", checkpoint=report.checkpoint, reasons=report.reasons)
        return report

    def _run(self, writes: list[tuple[int, DayCount]]) -> list[tuple[int, UpsertOutcome | TransientFault]]:
        if len(writes) <= 1 or self._max_workers == 1:
            return [(i, self._safe(w)) for i, w in writes]
        with ThreadPoolExecutor(max_workers=min(self._max_workers, len(writes))) as pool:
            futures = [(i, pool.submit(self._safe, w)) for i, w in writes]
            return [(i, f.result()) for i, f in futures]

    def _safe(self, write: DayCount) -> UpsertOutcome | TransientFault:
        try:
            return self._writer.upsert(write.sensor_id, write.day, write.count)
        except TransientFault as fault:
            return fault
        except Exception as exc:  # a bug fails this write (and checkpoints), never the whole batch
            LOG.exception("summary upsert raised", sensor_id=write.sensor_id, day=write.day)
            return TransientFault(f"internal error: {type(exc).__name__}")
