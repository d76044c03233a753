"""The three-step map upsert: one sensor-day's count into its month item's ``DailyCounts`` map.

1. ``SET DailyCounts.#day = :n`` if ``DailyCounts`` exists and the element is missing or lower
   (or not a number at all: a hand-made element holds no count);
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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from sensor_digest.errors import TransientFault
from sensor_digest.store import dynamo, schema
from sensor_digest.upsert import Answer, ThreeStepUpsert, UpsertStep

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass
class UpsertOutcome:
    written: bool = False
    stale: bool = False
    requests: int = 0
    steps: list[str] = field(default_factory=list)


class SummaryWriter:
    """Writes sensor-days into the sensor's month items, each with the three-step map upsert."""

    def __init__(self, *, table_name: str, client: DynamoDBClient) -> None:
        self._table = table_name
        self._client = client

    def upsert(self, sensor_id: int, day: str, count: int) -> UpsertOutcome:
        write = MapUpsert(self._client, self._table, sensor_id, day, count)
        try:
            write.run(max_attempts=3)
        finally:
            write.outcome.steps = write.steps
        return write.outcome


class MapUpsert(ThreeStepUpsert):
    """One element of one month item's ``DailyCounts``, through the three steps."""

    labels: ClassVar[dict[UpsertStep, str]] = {
        UpsertStep.UPDATE_IF_EXISTS: "update-element",
        UpsertStep.CREATE_IF_MISSING: "create-map",
        UpsertStep.UPDATE_AFTER_RACE: "update-element-again",
    }

    def __init__(self, client: Any, table: str, sensor_id: int, day: str, count: int) -> None:
        super().__init__()
        self._client = client
        self._table = table
        self._key = schema.summary_key(sensor_id, schema.month_of(day))
        self._day = day
        self._count = count
        self.outcome = UpsertOutcome()

    def update_if_exists(self) -> Answer:
        return self._update_element(after_race=False)

    def create_if_missing(self) -> Answer:
        """Create the map holding this element: ``NEXT`` when another writer's map exists."""
        refused = self._update(
            "SET #dc = :map",
            "attribute_not_exists(#dc)",
            names={},
            values={":map": {"M": {self._day: {"N": str(self._count)}}}},
        )
        self.outcome.written = refused is None
        return Answer.DONE if refused is None else Answer.NEXT

    def update_after_race(self) -> Answer:
        return self._update_element(after_race=True)

    def _update_element(self, *, after_race: bool) -> Answer:
        current = self._update(
            "SET #dc.#day = :n",
            # an element that is not a number (a hand-made write) holds no count: it is replaced
            "attribute_exists(#dc) AND (attribute_not_exists(#dc.#day) OR #dc.#day < :n"
            " OR NOT attribute_type(#dc.#day, :number))",
            names={"#day": self._day},
            values={":n": {"N": str(self._count)}, ":number": {"S": "N"}},
        )
        if current is None:
            self.outcome.written = True
            return Answer.DONE
        if schema.DAILY_COUNTS not in current:  # no map yet: create it (or, after the race, it vanished: a fault)
            if after_race:
                raise TransientFault("DailyCounts vanished after another writer created it")
            return Answer.NEXT
        held = schema.daily_count_of_item(current, self._day)  # this element only: the others are not ours
        held = -1 if held is None else held
        if held >= self._count:  # the element already holds this count or more: the record is stale
            self.outcome.stale = True
            return Answer.DONE
        raise TransientFault(f"element {self._day} holds {held} < {self._count}, yet the condition failed")

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
