"""The counters' decisions, without Java: each counter on the day store over moto's in-process engine,
whose writes ``test_day_store_contract.py`` holds to DynamoDB Local's. What only the engine shows (races,
expression limits, 38 digits, the end-to-end scenarios) stays in tests/dynamodb_local."""

from __future__ import annotations

import json
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sensor_digest.counting import DayCounter, LedgerCounter, OrderedCounter, PlainCounter
from sensor_digest.ingest import FifoGroupOrdering, InboundMessage, IngestService
from sensor_digest.ingest.report import BatchReport
from sensor_digest.store import schema
from sensor_digest.store.day_view import Kind, view_of
from sensor_digest.store.identities import DAY_IDS
from sensor_digest.store.reads import day_counts
from tests.support.counting import DeadLettered
from tests.support.moto_tier import MotoAws

DAY = "2024-05-01"
QUEUE = "arn:aws:sqs:us-east-1:1:q.fifo"


def ledger(aws: MotoAws) -> LedgerCounter:
    return LedgerCounter(table_name=aws.table, ledger_table_name=aws.ledger, client=aws.ddb, marker_ttl_seconds=60)


def report(event: int, sensor: int = 1, hour: int = 12, **extra: Any) -> str:
    return json.dumps({"sensor_id": sensor, "timestamp": f"{DAY}T{hour:02}:00:00Z", "event_id": f"e{event}", **extra})


def run(counter: DayCounter, messages: list[InboundMessage]) -> BatchReport:
    ordering = FifoGroupOrdering() if isinstance(counter, OrderedCounter) else None
    service = IngestService(
        counter=counter, dead_letters=DeadLettered(), default_zone=ZoneInfo("UTC"), ordering=ordering
    )
    return service.process(messages)


def batch(events: range, sensor: int = 1, receive_count: int = 1) -> list[InboundMessage]:
    return [
        InboundMessage(message_id=f"m{sensor}-{e}-{receive_count}", body=report(e, sensor), receive_count=receive_count)
        for e in events
    ]


def test_a_report_sent_again_in_a_later_batch_is_a_duplicate_found_by_the_refused_write(moto_aws: MotoAws) -> None:
    counter = ledger(moto_aws)
    assert run(counter, batch(range(5))).counted == 5

    again = run(ledger(moto_aws), batch(range(3, 8)))  # a new container: nothing remembered

    assert (again.counted, again.duplicates) == (3, 2)
    assert day_counts(moto_aws.ddb, moto_aws.table) == {(1, DAY): 8}


def test_a_day_past_its_own_room_moves_on_to_a_page_and_a_redelivery_there_is_known(moto_aws: MotoAws) -> None:
    counter = ledger(moto_aws)
    first = run(counter, batch(range(DAY_IDS + 10)))
    view = view_of(moto_aws.ddb.get_item(TableName=moto_aws.table, Key=schema.day_key(1, DAY))["Item"])

    redelivered = run(ledger(moto_aws), batch(range(DAY_IDS, DAY_IDS + 5), receive_count=2))

    assert first.counted == DAY_IDS + 10
    assert (view.kind, view.page, view.day_ids) == (Kind.COMPACT, 1, DAY_IDS)
    assert (redelivered.counted, redelivered.duplicates) == (0, 5)
    assert day_counts(moto_aws.ddb, moto_aws.table) == {(1, DAY): DAY_IDS + 10}


def test_one_report_twice_in_a_batch_counts_once_and_its_twin_shares_its_fate(moto_aws: MotoAws) -> None:
    messages = [InboundMessage(message_id=f"m{i}", body=report(1)) for i in range(3)]

    result = run(ledger(moto_aws), messages)

    assert (result.counted, result.duplicates) == (1, 2)


def fifo(sequence: int, event: int) -> InboundMessage:
    return InboundMessage(
        message_id=f"f{sequence}", body=report(event), sequence_number=str(sequence), group_id="1", source=QUEUE
    )


def test_ordered_mode_skips_what_the_day_applied_and_counts_what_follows(moto_aws: MotoAws) -> None:
    counter = OrderedCounter(table_name=moto_aws.table, client=moto_aws.ddb)
    assert run(counter, [fifo(s, s) for s in range(10, 15)]).counted == 5

    again = run(OrderedCounter(table_name=moto_aws.table, client=moto_aws.ddb), [fifo(s, s) for s in range(12, 18)])

    assert (again.counted, again.duplicates) == (3, 3)
    assert day_counts(moto_aws.ddb, moto_aws.table) == {(1, DAY): 8}


def test_at_least_once_counts_a_redelivery_again(moto_aws: MotoAws) -> None:
    counter = PlainCounter(table_name=moto_aws.table, client=moto_aws.ddb)
    run(counter, batch(range(4)))

    again = run(PlainCounter(table_name=moto_aws.table, client=moto_aws.ddb), batch(range(4), receive_count=2))

    assert again.counted == 4
    assert day_counts(moto_aws.ddb, moto_aws.table) == {(1, DAY): 8}


@pytest.mark.parametrize("make", [ledger, lambda aws: PlainCounter(table_name=aws.table, client=aws.ddb)])
def test_a_day_item_written_by_hand_rejects_its_reports_with_the_repair(moto_aws: MotoAws, make: Any) -> None:
    item = {**schema.day_key(1, DAY), schema.DATA_COUNT: {"S": "twelve"}}
    moto_aws.ddb.put_item(TableName=moto_aws.table, Item=item)

    result = run(make(moto_aws), batch(range(2)))

    assert (result.counted, result.rejected, result.failed_ids) == (0, 2, [])
    assert all(schema.DATA_COUNT in reason for _, reason in result.refused)
