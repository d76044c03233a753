"""The three-step map upsert: a month's sensor-days into its month item's ``DailyCounts`` map, all
of a batch's days of one month item in one write (one writer per month item per batch).

1. ``SET DailyCounts.#d1 = :n1, DailyCounts.#d2 = :n2, ...`` if ``DailyCounts`` exists and each
   element is missing or lower (or not a number at all: a hand-made element holds no count);
2. when the map is missing: ``SET DailyCounts = {d1: n1, ...}`` if ``DailyCounts`` does not exist
   (or is no map: a hand-made value of another type holds no count);
3. when another writer created the map in between: step 1 again.

A failed condition in step 1 is told apart by what DynamoDB returns with it
(``ReturnValuesOnConditionCheckFailure=ALL_OLD``): no map means step 2; elements that already
hold their day's count or more are stale, which is a success: they are dropped and the others
written again on the same condition. Elements only ever move up, so replays, duplicates and
reordering cannot move one backwards. One write per month item also means one writer of it in a
batch, which moto's conditional writes need (they are not atomic across threads; DynamoDB's are).

``SET m = if_not_exists(m, :e), m.#d = :v`` would be one request, but DynamoDB rejects two
overlapping document paths in one expression (moto accepts it); hence the three steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from sensor_digest.errors import MalformedItem, TransientFault
from sensor_digest.store import dynamo, schema
from sensor_digest.upsert import Answer, ThreeStepUpsert, UpsertStep

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass
class UpsertOutcome:
    """What became of one sensor-day's element."""

    written: bool = False
    stale: bool = False
    requests: int = 0
    steps: list[str] = field(default_factory=list)


@dataclass
class MonthOutcome:
    """What became of a month item's days: those written, those found stale (held already)."""

    written: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    requests: int = 0
    steps: list[str] = field(default_factory=list)


class SummaryWriter:
    """Writes sensor-days into the sensor's month items with the three-step map upsert."""

    def __init__(self, *, table_name: str, client: DynamoDBClient) -> None:
        self._table = table_name
        self._client = client

    def upsert_month(self, sensor_id: int, month: str, counts: Mapping[str, int]) -> MonthOutcome:
        """The days ``counts`` (day -> count) of one month item (``YYYY-MM``), in one write."""
        write = MapUpsert(self._client, self._table, sensor_id, month, counts)
        try:
            write.run(max_attempts=len(counts) + 3)
        finally:
            write.outcome.steps = write.steps
        return write.outcome

    def upsert(self, sensor_id: int, day: str, count: int) -> UpsertOutcome:
        """One sensor-day alone."""
        month = self.upsert_month(sensor_id, schema.month_of(day), {day: count})
        return UpsertOutcome(
            written=day in month.written, stale=day in month.stale, requests=month.requests, steps=month.steps
        )


class MapUpsert(ThreeStepUpsert):
    """Some elements of one month item's ``DailyCounts``, through the three steps."""

    labels: ClassVar[dict[UpsertStep, str]] = {
        UpsertStep.UPDATE_IF_EXISTS: "update-element",
        UpsertStep.CREATE_IF_MISSING: "create-map",
        UpsertStep.UPDATE_AFTER_RACE: "update-element-again",
    }

    def __init__(self, client: Any, table: str, sensor_id: int, month: str, counts: Mapping[str, int]) -> None:
        super().__init__()
        self._client = client
        self._table = table
        self._key = schema.summary_key(sensor_id, month)
        self.pending = dict(sorted(counts.items()))
        self.outcome = MonthOutcome()

    def nothing_left(self) -> bool:
        return not self.pending  # every element was stale

    def update_if_exists(self) -> Answer:
        return self._update_elements(after_race=False)

    def create_if_missing(self) -> Answer:
        """Create the map holding these elements: ``NEXT`` when another writer's map exists."""
        refused = self._update(
            "SET #dc = :map",
            "attribute_not_exists(#dc) OR NOT attribute_type(#dc, :mtype)",  # none, or one that is no map
            names={},
            values={":map": {"M": {day: {"N": str(n)} for day, n in self.pending.items()}}, ":mtype": {"S": "M"}},
        )
        if refused is not None:
            return Answer.NEXT
        self._done_written()
        return Answer.DONE

    def update_after_race(self) -> Answer:
        return self._update_elements(after_race=True)

    def _update_elements(self, *, after_race: bool) -> Answer:
        names: dict[str, str] = {}
        values: dict[str, Any] = {":number": {"S": "N"}, ":mtype": {"S": "M"}}
        sets, conditions = [], ["attribute_type(#dc, :mtype)"]
        for i, (day, n) in enumerate(self.pending.items()):
            names[f"#d{i}"], values[f":n{i}"] = day, {"N": str(n)}
            sets.append(f"#dc.#d{i} = :n{i}")
            # an element that is not a number (a hand-made write) holds no count: it is replaced
            conditions.append(
                f"(attribute_not_exists(#dc.#d{i}) OR #dc.#d{i} < :n{i} OR NOT attribute_type(#dc.#d{i}, :number))"
            )
        current = self._update(f"SET {', '.join(sets)}", " AND ".join(conditions), names=names, values=values)
        if current is None:
            self._done_written()
            return Answer.DONE
        if not _is_map(current):  # no map yet (or one that is none): create it; after the race, a fault
            if after_race:
                raise TransientFault("DailyCounts vanished after another writer created it")
            return Answer.NEXT
        stale = [day for day, n in self.pending.items() if _held(current, day) >= n]
        if not stale:
            raise TransientFault(f"no element of {sorted(self.pending)} holds its count, yet the condition failed")
        for day in stale:  # the element already holds this count or more: the record is stale
            del self.pending[day]
            self.outcome.stale.append(day)
        return Answer.AGAIN

    def _done_written(self) -> None:
        self.outcome.written.extend(self.pending)
        self.pending = {}

    def _update(
        self, expression: str, condition: str, *, names: dict[str, str], values: dict[str, Any]
    ) -> dict[str, Any] | None:
        """``None`` when written; else the item as it was (``{}`` if absent)."""
        self.outcome.requests += 1
        return dynamo.conditional_write(
            "UpdateItem",
            lambda: self._client.update_item(
                TableName=self._table,
                Key=self._key,
                UpdateExpression=expression,
                ConditionExpression=condition,
                ExpressionAttributeNames={"#dc": schema.DAILY_COUNTS, **names},
                ExpressionAttributeValues=values,
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            ),
        )


def _is_map(item: Mapping[str, Any]) -> bool:
    stored = item.get(schema.DAILY_COUNTS)
    return isinstance(stored, Mapping) and "M" in stored


def _held(item: Mapping[str, Any], day: str) -> int:
    """What a month item's element of ``day`` holds: -1 for none, or one that is no number."""
    try:
        held = schema.daily_count_of_item(item, day)
    except MalformedItem:
        return -1
    return -1 if held is None else held
