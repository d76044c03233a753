"""The summary path: per sensor, one item per calendar month whose map ``DailyCounts`` holds the
count of each of that month's days (``schema.summary_key``).

A stream batch is coalesced (per sensor-day only the highest count matters) and each
sensor-day is written once with the three-step map upsert (``upsert.py``):

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

from sensor_digest import upsert
from sensor_digest.config import SummarySettings
from sensor_digest.errors import TransientFault
from sensor_digest.store import dynamo, schema
from sensor_digest.store.dynamo import ClientSource, make_client
from sensor_digest.stream_filter import DayCount, day_count_of
from sensor_digest.upsert import Answer, UpsertStep

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

LOG = Logger(child=True)

STEP_LABELS = {
    UpsertStep.UPDATE_IF_EXISTS: "update-element",
    UpsertStep.CREATE_IF_MISSING: "create-map",
    UpsertStep.UPDATE_AFTER_RACE: "update-element-again",
}


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

    def metrics(self) -> dict[str, int]:
        return {
            "summaryWritten": self.written,
            "summaryStale": self.stale,
            "summaryIgnored": self.ignored,
            "summaryFailed": self.failed,
        }

    def log_fields(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "ignored": self.ignored,
            "coalesced": self.coalesced,
            "written": self.written,
            "stale": self.stale,
            "failed": self.failed,
            "checkpoint": self.checkpoint,
        }

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
        key = schema.summary_key(sensor_id, schema.month_of(day))
        value = {"N": str(count)}
        outcome = UpsertOutcome(written=False, stale=False, requests=0, steps=[])

        def attempt(step: UpsertStep) -> Answer:
            outcome.requests += 1
            outcome.steps.append(STEP_LABELS[step])
            if step is UpsertStep.CREATE_IF_MISSING:
                refused = self._create_map(key, day, value)
                outcome.written = refused is None
                return Answer.DONE if refused is None else Answer.NEXT
            current = self._update_element(key, day, value)
            if current is None:
                outcome.written = True
                return Answer.DONE
            daily = schema.daily_counts_of_item(current)
            if daily is None:  # no map yet: create it (or, after the race, it vanished: a fault)
                if step is UpsertStep.UPDATE_AFTER_RACE:
                    raise TransientFault("DailyCounts vanished after another writer created it")
                return Answer.NEXT
            held = daily.get(day, -1)
            if held >= count:  # the element already holds this count or more: the record is stale
                outcome.stale = True
                return Answer.DONE
            raise TransientFault(f"element {day} holds {held} < {count}, yet the condition failed")

        upsert.run(attempt, max_attempts=3)
        return outcome

    def _update_element(self, key: dict[str, Any], day: str, value: dict[str, str]) -> dict[str, Any] | None:
        """Steps 1 and 3: ``None`` when written; else the item as it was (``{}`` if absent)."""
        return self._update(
            key,
            "SET #dc.#day = :n",
            "attribute_exists(#dc) AND (attribute_not_exists(#dc.#day) OR #dc.#day < :n)",
            names={"#day": day},
            values={":n": value},
        )

    def _create_map(self, key: dict[str, Any], day: str, value: dict[str, str]) -> dict[str, Any] | None:
        """Step 2: ``None`` when the map was created; else another writer's map exists."""
        return self._update(
            key, "SET #dc = :map", "attribute_not_exists(#dc)", names={}, values={":map": {"M": {day: value}}}
        )

    def _update(
        self, key: dict[str, Any], expression: str, condition: str, *, names: dict[str, str], values: dict[str, Any]
    ) -> dict[str, Any] | None:
        return dynamo.conditional_write(
            "UpdateItem",
            lambda: self._client.update_item(
                TableName=self._table,
                Key=key,
                UpdateExpression=expression,
                ConditionExpression=condition,
                ExpressionAttributeNames={"#dc": schema.DAILY_COUNTS, **names},
                ExpressionAttributeValues=values,
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            ),
        )


class SummaryService:
    """Coalesces a stream batch and upserts each sensor-day; reports where to checkpoint."""

    def __init__(self, *, writer: SummaryWriter, max_workers: int = 8) -> None:
        self._writer = writer
        self._max_workers = max_workers

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> SummaryReport:
        """A DynamoDB Streams event in Lambda's shape: its records, processed as one batch (its
        single-item writes take no transaction, so ``remaining_ms`` bounds nothing here)."""
        return self.process([r for r in event.get("Records") or [] if isinstance(r, dict)])

    def process(self, records: Sequence[Mapping[str, Any]]) -> SummaryReport:
        report = SummaryReport(records=len(records))
        day_counts: list[tuple[int, DayCount]] = []
        for index, record in enumerate(records):
            found = day_count_of(record)
            if found is None:
                report.ignored += 1
            else:
                day_counts.append((index, found))
        writes = self.plan(day_counts)
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

    @staticmethod
    def plan(day_counts: list[tuple[int, DayCount]]) -> list[tuple[int, DayCount]]:
        """Coalesce: per sensor-day only its highest count, tagged with the index of the first record
        it covers (where to checkpoint if its write fails)."""
        first_index: dict[tuple[int, str], int] = {}
        highest: dict[tuple[int, str], int] = {}
        for index, found in day_counts:
            key = (found.sensor_id, found.day)
            first_index.setdefault(key, index)
            highest[key] = max(highest.get(key, found.count), found.count)
        return [(first_index[k], DayCount(k[0], k[1], n)) for k, n in highest.items()]

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


def build_service(settings: SummarySettings, session: ClientSource) -> SummaryService:
    """The summary service of these settings, its client from ``session`` (see ``summary/handler.py``)."""
    writer = SummaryWriter(table_name=settings.table_name, client=make_client(session, max_pool_connections=10))
    return SummaryService(writer=writer, max_workers=8)
