"""Alarm evaluation on DynamoDB Local through the real ingest handler: a rule stored as the command
line stores it, reports sent as SQS delivers them (again and again), the alarm item and its
announcement read back. Engine: DynamoDB Local; SQS (the dead-letter queue): moto."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from sensor_digest.alarms.announce import Announcer
from sensor_digest.alarms.model import State
from sensor_digest.alarms.rules import AlarmRule, RuleSet
from sensor_digest.alarms.store import AlarmStore, RuleStore
from sensor_digest_tools.aws.stream_reader import StreamReader
from sensor_digest_tools.lambda_runtime.events import QueuedMessage
from sensor_digest_tools.local.event_bus import LocalEventBus
from tests.support.messages import FakeContext, sqs_event
from tests.support.tables import Tables

HOT = {"name": "hot", "reading": "temperature", "sensors": "*", "condition": "above", "threshold": 30, "clear": 28}


def report(sensor: int, minute: int, value: str, event: str | None = None) -> QueuedMessage:
    body = (
        f'{{"sensor_id": {sensor}, "timestamp": "2024-05-01T09:{minute:02d}:00Z", '
        f'"event_id": "{event or f"s{sensor}-m{minute}"}", "readings": {{"temperature": {value}}}}}'
    )
    return QueuedMessage(body=body)


@pytest.fixture
def rules(ddb: Any, tables: Tables) -> Any:
    def store(*raw: dict[str, Any]) -> RuleSet:
        rule_store = RuleStore(ledger_table_name=tables.ledger, client=ddb)
        return rule_store.save(
            RuleSet.of(AlarmRule.parse(r) for r in raw), expected=rule_store.version(consistent=True), by="test", now=0
        )

    return store


def announced(
    ddb: Any, tables: Tables, engine_endpoint: str, reader: StreamReader | None = None
) -> list[dict[str, Any]]:
    """Every event the announcer puts for what the stream holds so far (a fresh bus)."""
    bus = LocalEventBus()
    announcer = Announcer(events=bus, alarms=AlarmStore(table_name=tables.table, client=ddb))  # type: ignore[arg-type]
    records = (reader or StreamReader(engine_endpoint, tables.table)).poll()
    answer = announcer.handle_event({"Records": records}).response()
    assert answer == {"batchItemFailures": []}
    return [e["detail"] for e in bus.events]


def test_a_breach_and_its_clear_are_two_transitions_announced_once_each(
    ingest_handler: Any, rules: Any, ddb: Any, tables: Tables, engine_endpoint: str
) -> None:
    rules(HOT)
    messages = [report(7, 0, "29.5"), report(7, 1, "31.25"), report(7, 2, "32"), report(7, 3, "28")]
    answer = ingest_handler(sqs_event(messages), FakeContext())
    assert answer == {"batchItemFailures": []}
    # Then: redelivered whole (a lost delete), nothing moves again
    assert ingest_handler(sqs_event(messages), FakeContext()) == {"batchItemFailures": []}
    alarm = AlarmStore(table_name=tables.table, client=ddb).get(7, "hot")
    assert alarm is not None and alarm.state is State.NORMAL and alarm.version == 1
    events = announced(ddb, tables, engine_endpoint)
    assert [(e["previous"], e["state"], e["value"], e["report_time"]) for e in events] == [
        ("NORMAL", "ACTIVE", Decimal("31.25"), "2024-05-01T09:01:00Z"),
        ("ACTIVE", "NORMAL", Decimal("28"), "2024-05-01T09:03:00Z"),
    ]
    assert len({e["transition_id"] for e in events}) == 2


def test_a_sensor_without_a_rule_gets_no_alarm_item(ingest_handler: Any, rules: Any, ddb: Any, tables: Tables) -> None:
    rules({**HOT, "sensors": [8]})
    assert ingest_handler(sqs_event([report(7, 0, "99")]), FakeContext()) == {"batchItemFailures": []}
    store = AlarmStore(table_name=tables.table, client=ddb)
    assert store.get(7, "hot") is None
    assert ingest_handler(sqs_event([report(8, 0, "99")]), FakeContext()) == {"batchItemFailures": []}
    assert store.get(8, "hot").state is State.ACTIVE  # type: ignore[union-attr]
