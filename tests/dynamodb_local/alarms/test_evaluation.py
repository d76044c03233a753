"""Alarm evaluation on DynamoDB Local through the real ingest handler: a rule stored as the command
line stores it, reports sent as SQS delivers them (again and again), the alarm item and its
announcement read back. Engine: DynamoDB Local; SQS (the dead-letter queue): moto."""

from __future__ import annotations

import itertools
import json
import threading
from decimal import Decimal
from typing import Any

import pytest
from announcer import handler as announcer_handler

from sensor_digest import ingest
from sensor_digest.alarms.announce import Announcer
from sensor_digest.alarms.model import State
from sensor_digest.alarms.rules import AlarmRule, RuleSet
from sensor_digest.alarms.store import AlarmStore, RuleStore
from sensor_digest.config import AnnouncerSettings, DeliveryMode, IngestSettings
from sensor_digest_tools.aws.stream_reader import StreamReader
from sensor_digest_tools.lambda_runtime.events import QueuedMessage
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from sensor_digest_tools.local.event_bus import LocalEventBus
from tests.support.faults import FaultySession
from tests.support.fifo import Sequencer, fifo_handler
from tests.support.messages import FakeContext, sqs_event
from tests.support.sqs import DeadLetters
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


def alarm_writes(kind: str, times: int = 1) -> Any:
    """A fault rule: the first ``times`` alarm item writes meet ``kind``."""
    left = [times]

    def rule(operation: str, kwargs: dict[str, Any]) -> str | None:
        item = kwargs.get("Item") or {}
        if operation == "put_item" and item.get("Date", {}).get("S", "").startswith("ALARM#") and left[0] > 0:
            left[0] -= 1
            return kind
        return None

    return rule


def listed(answer: dict[str, Any]) -> int:
    return len(answer["batchItemFailures"])


@pytest.mark.parametrize("kind", ["throttle", "timeout_after"])
def test_an_alarm_write_that_fails_lists_the_report_and_its_redelivery_makes_the_transition_once(
    kind: str, rules: Any, ddb: Any, tables: Tables, engine_endpoint: str, ingest_settings: IngestSettings, session: Any
) -> None:
    # Given: the alarm's write is throttled (nothing written) or times out after committing
    rules(HOT)
    handler = lambda_handler(ingest.build_service(ingest_settings, FaultySession(session, alarm_writes(kind))))
    batch = [report(7, 1, "31")]
    # When: the first delivery counts the report and cannot finish its alarm's write
    assert listed(handler(sqs_event(batch), FakeContext())) == 1
    # Then: the redelivery (found counted) evaluates it, and a third delivery moves nothing
    assert listed(handler(sqs_event(batch), FakeContext())) == 0
    assert listed(handler(sqs_event(batch), FakeContext())) == 0
    assert [(e["state"], e["value"]) for e in announced(ddb, tables, engine_endpoint)] == [("ACTIVE", Decimal(31))]
    assert AlarmStore(table_name=tables.table, client=ddb).get(7, "hot").version == 1  # type: ignore[union-attr]


def test_eight_invocations_racing_on_one_report_make_one_transition(
    ingest_handler: Any, rules: Any, ddb: Any, tables: Tables, engine_endpoint: str
) -> None:
    rules(HOT)
    batch = [report(7, 1, "31")]
    gate = threading.Barrier(8)
    answers: list[dict[str, Any]] = []

    def deliver() -> None:
        gate.wait()
        answers.append(ingest_handler(sqs_event(batch), FakeContext()))

    threads = [threading.Thread(target=deliver) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    while any(listed(a) for a in answers[-1:]):  # a delivery that met the others' transactions comes back
        answers.append(ingest_handler(sqs_event(batch), FakeContext()))
    assert [e["state"] for e in announced(ddb, tables, engine_endpoint)] == ["ACTIVE"]


def test_racing_invocations_with_different_reports_make_a_chain_of_transitions_each_cause_once(
    ingest_handler: Any, rules: Any, ddb: Any, tables: Tables, engine_endpoint: str
) -> None:
    # Given: ten reports of one sensor that flip the alarm, each delivered twice, by ten invocations at once
    rules(HOT)
    values = ["31", "20", "35", "25", "40", "10", "33", "29", "50", "1"]
    batches = [[report(7, m, v)] for m, v in enumerate(values)]
    gate = threading.Barrier(10)
    lock = threading.Lock()
    unfinished: list[list[QueuedMessage]] = []

    def deliver(batch: list[QueuedMessage]) -> None:
        gate.wait()
        for _ in range(2):
            if listed(ingest_handler(sqs_event(batch), FakeContext())):
                with lock:
                    unfinished.append(batch)

    threads = [threading.Thread(target=deliver, args=(b,)) for b in batches]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for batch in unfinished:  # SQS would deliver these again
        while listed(ingest_handler(sqs_event(batch), FakeContext())):
            pass
    events = announced(ddb, tables, engine_endpoint)
    # Then: every transition has its own cause, each follows the one before, and they are in report time order
    causes = [e["transition_id"] for e in events]
    assert len(causes) == len(set(causes)) >= 1
    assert all(a["state"] == b["previous"] for a, b in itertools.pairwise(events))
    assert [e["report_time"] for e in events] == sorted(e["report_time"] for e in events)
    alarm = AlarmStore(table_name=tables.table, client=ddb).get(7, "hot")
    assert alarm is not None and alarm.state.value == events[-1]["state"]


def test_at_least_once_counting_overcounts_a_redelivery_but_moves_the_alarm_once(
    rules: Any, ddb: Any, tables: Tables, engine_endpoint: str, ingest_settings: IngestSettings, session: Any
) -> None:
    rules(HOT)
    settings = IngestSettings(**{**ingest_settings.__dict__, "delivery_mode": DeliveryMode.AT_LEAST_ONCE})
    handler = lambda_handler(ingest.build_service(settings, session))
    batch = [report(7, 1, "31")]
    for _ in range(3):
        assert listed(handler(sqs_event(batch), FakeContext())) == 0
    assert [e["state"] for e in announced(ddb, tables, engine_endpoint)] == ["ACTIVE"]


def test_ordered_mode_moves_the_alarm_once_under_a_redelivered_batch(
    rules: Any, ddb: Any, tables: Tables, engine_endpoint: str, session: Any, fifo_dlq: DeadLetters
) -> None:
    rules(HOT)
    handler = fifo_handler(tables, session, fifo_dlq.url)
    sequencer = Sequencer()
    batch = [
        sequencer.message(7, event_id=f"f{i}", timestamp=f"2024-05-01T09:0{i}:00Z", readings={"temperature": v})
        for i, v in enumerate([31, 27, 32])
    ]
    for _ in range(2):
        assert listed(handler(sqs_event(batch), FakeContext())) == 0
    assert [(e["previous"], e["state"]) for e in announced(ddb, tables, engine_endpoint)] == [
        ("NORMAL", "ACTIVE"),
        ("ACTIVE", "NORMAL"),
        ("NORMAL", "ACTIVE"),
    ]


class RefusingBus(LocalEventBus):
    """A bus that refuses the entries of sensor ``refused`` while ``refusals`` last (one per entry)."""

    def __init__(self, refused: int, refusals: int) -> None:
        super().__init__()
        self.refused, self.refusals, self.calls = refused, refusals, 0

    def put_events(self, *, Entries: list[dict[str, Any]]) -> dict[str, Any]:
        self.calls += 1
        answers, taken = [], []
        for entry in Entries:
            if json.loads(entry["Detail"])["sensor_id"] == self.refused and self.refusals > 0:
                self.refusals -= 1
                answers.append({"ErrorCode": "InternalFailure", "ErrorMessage": "injected"})
            else:
                taken.append(entry)
                answers.append({})
        if taken:
            super().put_events(Entries=taken)
        return {"FailedEntryCount": sum("ErrorCode" in a for a in answers), "Entries": answers}


def test_a_refused_announcement_checkpoints_its_record_and_the_retry_puts_it_once(
    ingest_handler: Any, rules: Any, ddb: Any, tables: Tables, engine_endpoint: str
) -> None:
    rules(HOT)
    assert listed(ingest_handler(sqs_event([report(7, 1, "31"), report(8, 1, "32")]), FakeContext())) == 0
    records = StreamReader(engine_endpoint, tables.table).poll()
    alarm_records = [r for r in records if r["dynamodb"]["Keys"]["Date"]["S"].startswith("ALARM#")]
    refused = int(alarm_records[1]["dynamodb"]["Keys"]["SensorId"]["N"])
    store = AlarmStore(table_name=tables.table, client=ddb)
    bus = RefusingBus(refused, refusals=3)  # every attempt of one invocation
    first = Announcer(events=bus, alarms=store).handle_event({"Records": records})  # type: ignore[arg-type]
    checkpoint = alarm_records[1]["dynamodb"]["SequenceNumber"]
    assert first.response() == {"batchItemFailures": [{"itemIdentifier": checkpoint}]}
    # Lambda hands the batch over again from the checkpoint
    retry = Announcer(events=bus, alarms=store).handle_event({"Records": alarm_records[1:]})  # type: ignore[arg-type]
    assert retry.response() == {"batchItemFailures": []}
    assert sorted(e["detail"]["sensor_id"] for e in bus.events) == [7, 8]
    assert len(store.history(refused, "hot", limit=10)[0]) == 1


def test_an_entry_refused_once_is_put_again_alone(
    ingest_handler: Any, rules: Any, ddb: Any, tables: Tables, engine_endpoint: str
) -> None:
    # Given: one write with two transitions (a breach and its clear), the first entry refused once
    rules(HOT)
    assert listed(ingest_handler(sqs_event([report(7, 1, "31"), report(7, 2, "20")]), FakeContext())) == 0
    bus = RefusingBus(7, refusals=1)
    store = AlarmStore(table_name=tables.table, client=ddb)
    records = StreamReader(engine_endpoint, tables.table).poll()
    answer = Announcer(events=bus, alarms=store).handle_event({"Records": records})  # type: ignore[arg-type]
    # Then: both announced once, in one invocation
    assert answer.response() == {"batchItemFailures": []}
    assert sorted(e["detail"]["state"] for e in bus.events) == ["ACTIVE", "NORMAL"] and bus.calls == 2


def test_the_deployed_announcer_names_its_pipeline_in_each_event(
    ingest_handler: Any, rules: Any, ddb: Any, tables: Tables, engine_endpoint: str, session: Any
) -> None:
    # Given: the announcer as announcer/handler.py builds it where the construct set SENSOR_DIGEST_PIPELINE
    rules(HOT)
    assert listed(ingest_handler(sqs_event([report(7, 1, "31")]), FakeContext())) == 0
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SENSOR_DIGEST_PIPELINE", "Plant-A")
        announcer = announcer_handler._build(AnnouncerSettings(table_name=tables.table), session)
    bus = LocalEventBus()
    announcer._events = bus  # type: ignore[assignment]  # the default bus, kept here
    records = StreamReader(engine_endpoint, tables.table).poll()
    assert announcer.handle_event({"Records": records}).response() == {"batchItemFailures": []}
    assert [e["detail"]["pipeline"] for e in bus.events] == ["Plant-A"]
