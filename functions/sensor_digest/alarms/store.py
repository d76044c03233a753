"""Where alarms live, and every call that reads or writes them.

- The **rule set** is one ledger item (``schema.RULES_KEY``: the rules as JSON, a version, who and
  when), with its version alone in a second, small one (``RULES_VERSION_KEY``); both are written in
  one transaction on condition that the version is still the one read, so an apply is whole or
  nothing and two racing applies cannot both win. ``RuleCache`` gives a container the rules without a
  read per report: it reads the small version item at most every ``refresh_seconds`` and the rule
  set only when the version moved.
- An **alarm** is the digest table's item ``(SensorId, ALARM#<rule>)``; an alarm never written is
  NORMAL. Every write puts the whole item (under 1 KB: one write unit) on condition that its
  ``Version`` is still the one read, and a refused write hands back the item as it was
  (``AlarmChanged``), so two writers racing on one alarm make one transition, and the loser decides
  again from what the winner wrote. ``Alerting`` (the state, while not NORMAL) keys the sparse
  ``Alarms`` index that lists alarms by state.
- The **log** of an alarm's transitions is one item per transition (``ALARMLOG#<rule>#<version>``),
  written by the announcer once it has announced it (a put of the same content: a repeat writes
  nothing new).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import partial
from typing import TYPE_CHECKING, Any

from sensor_digest import exact_json
from sensor_digest.alarms.model import Alarm, State, Transition, iso
from sensor_digest.alarms.rules import InvalidRule, RuleSet
from sensor_digest.errors import MalformedItem, ReasonedError, TransientFault
from sensor_digest.logs import LOG
from sensor_digest.store import dynamo, schema

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

MAX_RULES_BYTES = 300_000  # the rule set's JSON, well inside DynamoDB's 400 KB item
DEFAULT_REFRESH_SECONDS = 60.0


class RulesChanged(ReasonedError):
    """The rule set moved since it was read: read it again and decide again."""


class AlarmChanged(Exception):
    """A conditional alarm write found another version: ``current`` is the alarm as it now is."""

    def __init__(self, current: Alarm) -> None:
        super().__init__(f"alarm {current.id} moved to version {current.version}")
        self.current = current


def rules_json(rules: RuleSet) -> str:
    """The rule set as the stored JSON text (exact decimals, as written)."""
    return exact_json.dumps(rules.document())


def _decode(text: str) -> object:
    return json.loads(text, parse_float=Decimal)


class RuleStore:
    def __init__(self, *, ledger_table_name: str, client: DynamoDBClient) -> None:
        self._table = ledger_table_name
        self._client = client

    def version(self, *, consistent: bool = False) -> int:
        item = dynamo.call(
            "GetItem",
            partial(
                self._client.get_item,
                TableName=self._table,
                Key=schema.ledger_key(schema.RULES_VERSION_KEY),
                ConsistentRead=consistent,
            ),
        ).get("Item")
        return 0 if not item else schema.number_of(item, schema.VERSION)

    def load(self) -> RuleSet:
        """The stored rule set (strongly consistent); an empty one at version 0 before any."""
        item = dynamo.call(
            "GetItem",
            partial(
                self._client.get_item,
                TableName=self._table,
                Key=schema.ledger_key(schema.RULES_KEY),
                ConsistentRead=True,
            ),
        ).get("Item")
        if not item:
            return RuleSet()
        version = schema.number_of(item, schema.VERSION)
        try:
            return RuleSet.parse(_decode(schema.text_of(item, schema.RULES)), version)
        except (InvalidRule, ValueError) as bad:
            raise MalformedItem(
                f"the alarm rule set ({schema.RULES_KEY}) cannot be read: {bad}; apply a rule file again", schema.RULES
            ) from None

    def save(self, rules: RuleSet, *, expected: int, by: str, now: int) -> RuleSet:
        """Store ``rules`` as version ``expected + 1``, on condition that ``expected`` is the stored
        version (0: none stored); ``RulesChanged`` when it is not."""
        text = rules_json(rules)
        if len(text.encode()) > MAX_RULES_BYTES:
            raise InvalidRule(f"the rule set is {len(text.encode())} bytes as JSON; at most {MAX_RULES_BYTES}")
        version = expected + 1
        condition = (
            {"ConditionExpression": "attribute_not_exists(#k)", "ExpressionAttributeNames": {"#k": schema.LEDGER_KEY}}
            if expected == 0
            else {
                "ConditionExpression": "#v = :v",
                "ExpressionAttributeNames": {"#v": schema.VERSION},
                "ExpressionAttributeValues": {":v": {"N": str(expected)}},
            }
        )
        stamp = {
            schema.VERSION: {"N": str(version)},
            schema.CHANGED_BY: {"S": by},
            schema.CHANGED_AT: {"S": iso(now)},
        }
        actions = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": {**schema.ledger_key(schema.RULES_KEY), schema.RULES: {"S": text}, **stamp},
                    **condition,
                }
            },
            {"Put": {"TableName": self._table, "Item": {**schema.ledger_key(schema.RULES_VERSION_KEY), **stamp}}},
        ]
        codes = dynamo.transact(self._client, actions)
        if codes is not None:
            fault = dynamo.cancellation_fault(codes)
            if fault is not None:
                raise fault
            raise RulesChanged("the alarm rules changed since they were read; read them again")
        return RuleSet(rules.rules, version)


@dataclass
class RuleCache:
    """A container's rules: the version item read at most every ``refresh_seconds``, the rules when it moved.
    A read that fails keeps the rules known (a fault before any read is raised)."""

    store: RuleStore
    refresh_seconds: float = DEFAULT_REFRESH_SECONDS
    clock: Callable[[], float] = time.monotonic
    _rules: RuleSet | None = None
    _checked: float = float("-inf")

    def rules(self) -> RuleSet:
        now = self.clock()
        if self._rules is not None and now - self._checked < self.refresh_seconds:
            return self._rules
        try:
            version = self.store.version()
            if self._rules is None or version != self._rules.version:
                self._rules = self.store.load()
        except TransientFault:
            if self._rules is None:
                raise
            LOG.warning("alarm rules not refreshed; the ones known stay", version=self._rules.version)
        self._checked = now
        return self._rules

    def forget(self) -> None:
        self._rules, self._checked = None, float("-inf")


# -- alarm items ------------------------------------------------------------------------------------


def _n(value: int | Decimal) -> dict[str, str]:
    return {"N": str(value)}


def transition_value(t: Transition) -> dict[str, Any]:
    out: dict[str, Any] = {
        "Id": {"S": t.id},
        "Previous": {"S": t.previous.value},
        "State": {"S": t.state.value},
        "At": _n(t.at),
        "By": {"S": t.by},
        "Cause": {"S": t.cause},
        "Severity": _n(t.severity),
    }
    if t.value is not None:
        out["Value"] = _n(t.value)
    if t.report_time is not None:
        out["ReportTime"] = _n(t.report_time)
    return {"M": out}


def transition_of(value: Any, where: str) -> Transition:
    try:
        m = value["M"]
        return Transition(
            id=m["Id"]["S"],
            previous=State(m["Previous"]["S"]),
            state=State(m["State"]["S"]),
            at=int(m["At"]["N"]),
            by=m["By"]["S"],
            cause=m["Cause"]["S"],
            severity=int(m["Severity"]["N"]),
            value=Decimal(m["Value"]["N"]) if "Value" in m else None,
            report_time=int(m["ReportTime"]["N"]) if "ReportTime" in m else None,
        )
    except (KeyError, TypeError, ValueError, ArithmeticError):
        raise MalformedItem(f"{where}: a transition without the alarm log's shape", schema.MADE) from None


def alarm_item(alarm: Alarm) -> schema.Item:
    item: schema.Item = {
        **schema.alarm_key(alarm.sensor_id, alarm.rule),
        schema.ALARM_STATE: {"S": alarm.state.value},
        schema.READING: {"S": alarm.reading},
        schema.SEVERITY: _n(alarm.severity),
        schema.VERSION: _n(alarm.version),
    }
    if alarm.state is not State.NORMAL:
        item[schema.ALERTING] = {"S": alarm.state.value}
    if alarm.seen is not None:
        item[schema.SEEN_AT] = _n(alarm.seen[0])
        item[schema.SEEN_ID] = {"S": alarm.seen[1]}
    if alarm.pending_since is not None:
        item[schema.PENDING_SINCE] = _n(alarm.pending_since)
        item[schema.PENDING_COUNT] = _n(alarm.pending_count)
    if alarm.snoozed_until is not None:
        item[schema.SNOOZED_UNTIL] = _n(alarm.snoozed_until)
    if alarm.since is not None:
        item[schema.STATE_SINCE] = _n(alarm.since)
    if alarm.made:
        item[schema.MADE] = {"L": [transition_value(t) for t in alarm.made]}
        item[schema.ANNOUNCE] = _n(alarm.version)
    return item


def alarm_of(item: schema.Item) -> Alarm:
    """The alarm an item holds; ``MalformedItem`` naming what is wrong."""
    where = schema.describe(item)
    rule = schema.text_of(item, schema.DATE).removeprefix(schema.ALARM_PREFIX)
    try:
        state = State(schema.text_of(item, schema.ALARM_STATE))
    except ValueError:
        raise MalformedItem(f"{where}: {schema.ALARM_STATE} is no alarm state", schema.ALARM_STATE) from None
    seen = (
        (schema.number_of(item, schema.SEEN_AT), schema.text_of(item, schema.SEEN_ID))
        if schema.SEEN_AT in item
        else None
    )
    made = item.get(schema.MADE, {}).get("L", [])
    return Alarm(
        sensor_id=schema.sensor_of_item(item),
        rule=rule,
        reading=schema.text_of(item, schema.READING),
        severity=schema.number_of(item, schema.SEVERITY),
        state=state,
        version=schema.number_of(item, schema.VERSION),
        seen=seen,
        pending_since=schema.number_of(item, schema.PENDING_SINCE) if schema.PENDING_SINCE in item else None,
        pending_count=schema.number_of(item, schema.PENDING_COUNT) if schema.PENDING_COUNT in item else 0,
        snoozed_until=schema.number_of(item, schema.SNOOZED_UNTIL) if schema.SNOOZED_UNTIL in item else None,
        since=schema.number_of(item, schema.STATE_SINCE) if schema.STATE_SINCE in item else None,
        made=tuple(transition_of(t, where) for t in made),
    )


def is_alarm_item(item: schema.Item) -> bool:
    return str(item.get(schema.DATE, {}).get("S", "")).startswith(schema.ALARM_PREFIX)


@dataclass(frozen=True)
class AlarmPage:
    alarms: list[Alarm]
    next_key: dict[str, Any] | None


class AlarmStore:
    def __init__(self, *, table_name: str, client: DynamoDBClient) -> None:
        self._table = table_name
        self._client = client

    def get_many(
        self, keys: Iterable[tuple[int, str]], *, expired: Callable[[], bool] | None = None
    ) -> dict[tuple[int, str], schema.Item]:
        """The stored items of these (sensor, rule) alarms, strongly consistent, to be read one by one
        (``alarm_of``: one malformed item is that alarm's problem alone); absent ones are not in it."""
        wanted = {(s, r): schema.alarm_key(s, r) for s, r in keys}
        if not wanted:
            return {}
        found = dynamo.batch_get(self._client, self._table, list(wanted.values()), consistent=True, expired=expired)
        by_key = {(item[schema.SENSOR_ID]["N"], item[schema.DATE]["S"]): item for item in found}
        return {
            key: by_key[(k[schema.SENSOR_ID]["N"], k[schema.DATE]["S"])]
            for key, k in wanted.items()
            if (k[schema.SENSOR_ID]["N"], k[schema.DATE]["S"]) in by_key
        }

    def get(self, sensor_id: int, rule: str) -> Alarm | None:
        item = dynamo.call(
            "GetItem",
            partial(
                self._client.get_item, TableName=self._table, Key=schema.alarm_key(sensor_id, rule), ConsistentRead=True
            ),
        ).get("Item")
        return alarm_of(item) if item else None

    def write(self, before: Alarm, after: Alarm) -> Alarm:
        """Store ``after`` as ``before``'s next version; ``AlarmChanged`` (with the alarm as it is)
        when the stored version is not ``before``'s."""
        stored = replace(after, version=before.version + 1)
        if before.version == 0:
            condition: dict[str, Any] = {
                "ConditionExpression": "attribute_not_exists(#s)",
                "ExpressionAttributeNames": {"#s": schema.SENSOR_ID},
            }
        else:
            condition = {
                "ConditionExpression": "#v = :v",
                "ExpressionAttributeNames": {"#v": schema.VERSION},
                "ExpressionAttributeValues": {":v": _n(before.version)},
            }
        written = dynamo.single_write(
            self._client,
            "PutItem",
            {
                "TableName": self._table,
                "Item": alarm_item(stored),
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                **condition,
            },
        )
        if not written.written:
            raise AlarmChanged(alarm_of(written.item))
        return stored

    def of_sensor(self, sensor_id: int) -> list[Alarm]:
        """A sensor's stored alarms (one ``Query``)."""
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "#s = :s AND begins_with(#d, :p)",
            "ExpressionAttributeNames": {"#s": schema.SENSOR_ID, "#d": schema.DATE},
            "ExpressionAttributeValues": {":s": _n(sensor_id), ":p": {"S": schema.ALARM_PREFIX}},
            "ConsistentRead": True,
        }
        items = dynamo.call("Query", partial(self._client.query, **request)).get("Items", [])
        return [alarm_of(i) for i in items]

    def in_state(self, state: State, *, limit: int, start: dict[str, Any] | None = None) -> AlarmPage:
        """A page of the alarms in ``state`` (not NORMAL) from the ``Alarms`` index, by sensor."""
        request: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": schema.ALARM_INDEX,
            "KeyConditionExpression": "#a = :a",
            "ExpressionAttributeNames": {"#a": schema.ALERTING},
            "ExpressionAttributeValues": {":a": {"S": state.value}},
            "Limit": limit,
        }
        if start:
            request["ExclusiveStartKey"] = start
        page = dynamo.call("Query", partial(self._client.query, **request))
        return AlarmPage([alarm_of(i) for i in page.get("Items", [])], page.get("LastEvaluatedKey"))

    def log(self, alarm: Alarm, transitions: Sequence[Transition], version: int) -> None:
        """Keep ``transitions`` (of the alarm's ``version``) in its log: one put each."""
        for index, t in enumerate(transitions):
            item = {
                **schema.alarm_log_key(alarm.sensor_id, alarm.rule, version, index),
                schema.TRANSITION: transition_value(t),
            }
            dynamo.call("PutItem", partial(self._client.put_item, TableName=self._table, Item=item))

    def history(
        self, sensor_id: int, rule: str, *, limit: int, start: dict[str, Any] | None = None
    ) -> tuple[list[Transition], dict[str, Any] | None]:
        """The alarm's logged transitions, newest first (one ``Query`` page)."""
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "#s = :s AND begins_with(#d, :p)",
            "ExpressionAttributeNames": {"#s": schema.SENSOR_ID, "#d": schema.DATE},
            "ExpressionAttributeValues": {
                ":s": _n(sensor_id),
                ":p": {"S": f"{schema.ALARM_LOG_PREFIX}{rule}#"},
            },
            "ScanIndexForward": False,
            "Limit": limit,
            "ConsistentRead": True,
        }
        if start:
            request["ExclusiveStartKey"] = start
        page = dynamo.call("Query", partial(self._client.query, **request))
        items = page.get("Items", [])
        return [transition_of(i[schema.TRANSITION], schema.describe(i)) for i in items], page.get("LastEvaluatedKey")
