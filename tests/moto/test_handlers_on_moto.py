"""Both handlers end to end on moto (engine: moto's DynamoDB and SQS; no Java). The same
behaviours are tested on DynamoDB Local in tests/dynamodb_local, which is the authority."""

from __future__ import annotations

import json
from typing import Any
from zoneinfo import ZoneInfo

from sensor_digest import api, ingest, summary
from sensor_digest.config import ApiSettings, IngestSettings, SummarySettings
from sensor_digest.store import schema
from sensor_digest.store.reads import day_counts, scan_all, summaries, summary_months
from sensor_digest_tools.lambda_runtime.events import FakeContext, QueuedMessage, sqs_event, stream_event
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from sensor_digest_tools.ops.dlq import list_dead_letters
from tests.support.moto_tier import MotoAws


def report(sensor: int, day: str, count: int = 1, event_id: str | None = None) -> QueuedMessage:
    body = {"sensor_id": sensor, "timestamp": f"{day}T10:00:00Z", "count": count}
    if event_id:
        body["event_id"] = event_id
    return QueuedMessage(body=json.dumps(body))


def ingest_handler(aws: MotoAws) -> Any:
    settings = IngestSettings(
        table_name=aws.table, ledger_table_name=aws.ledger, dlq_url=aws.dlq_url, timezone=ZoneInfo("UTC")
    )
    return lambda_handler(ingest.build_service(settings, aws.session))


def test_a_batch_counts_once_however_often_it_comes_and_poison_is_kept_with_its_reason(moto_aws: MotoAws) -> None:
    handler = ingest_handler(moto_aws)
    poison = QueuedMessage(body='{"sensor_id": "seven"}')
    batch = [report(1, "2024-05-01", 2), report(1, "2024-05-01", 3), report(2, "2024-05-02"), poison]

    first = handler(sqs_event(batch), FakeContext())
    again = handler(sqs_event(batch[:3]), FakeContext())  # redelivered, the poison already kept

    assert first == again == {"batchItemFailures": []}
    assert day_counts(moto_aws.ddb, moto_aws.table) == {(1, "2024-05-01"): 5, (2, "2024-05-02"): 1}
    counted = scan_all(moto_aws.ddb, moto_aws.table) + scan_all(moto_aws.ddb, moto_aws.ledger)
    assert sum(len(item.get(schema.IDS, {}).get("BS", [])) for item in counted) == 3  # each counted report's identity
    kept = list_dead_letters(moto_aws.sqs, moto_aws.dlq_url)
    assert [(k.body, k.error) for k in kept] == [(poison.body, 'sensor_id must be an integer, got string "seven"')]


def test_a_report_in_epoch_milliseconds_is_kept_with_a_reason_that_says_milliseconds(moto_aws: MotoAws) -> None:
    # As a rule that maps IoT Core's timestamp() (epoch milliseconds) into the report would send it
    handler = ingest_handler(moto_aws)
    millis = QueuedMessage(body='{"sensor_id": 7, "timestamp": 1714557600000, "event_id": "r-1"}')

    assert handler(sqs_event([millis]), FakeContext()) == {"batchItemFailures": []}

    assert day_counts(moto_aws.ddb, moto_aws.table) == {}
    [kept] = list_dead_letters(moto_aws.sqs, moto_aws.dlq_url)
    assert kept.body == millis.body and kept.error is not None
    assert kept.error.endswith(
        "it looks like epoch milliseconds (2024-05-01 in UTC): send epoch seconds (divide by 1000)"
    )


def day_record(sensor: int, day: str, old: int | None, new: int, sequence: int) -> dict[str, Any]:
    """A stream record of a day item as the dynamodbstreams API gives it (NEW_AND_OLD_IMAGES)."""
    data: dict[str, Any] = {
        "Keys": schema.day_key(sensor, day),
        "NewImage": schema.day_item(sensor, day, new),
        "SequenceNumber": str(sequence).zfill(21),
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    if old is not None:
        data["OldImage"] = schema.day_item(sensor, day, old)
    return {"eventID": f"e{sequence}", "eventName": "INSERT" if old is None else "MODIFY", "dynamodb": data}


def test_the_summary_from_stream_records_equals_the_day_counts_replays_included(moto_aws: MotoAws) -> None:
    # moto's dynamodbstreams API does not answer this botocore, so the records are built in the
    # stream's shape (the DynamoDB Local suite reads real ones)
    records = [
        day_record(3, "2024-05-31", None, 4, 1),
        day_record(3, "2024-06-01", None, 1, 2),
        day_record(4, "2024-06-01", None, 2, 3),
        day_record(3, "2024-05-31", 4, 5, 4),
    ]
    arn = "arn:aws:dynamodb:us-east-1:123456789012:table/SensorDigest/stream/2024-05-01T00:00:00.000"
    summarize = lambda_handler(summary.build_service(SummarySettings(table_name=moto_aws.table), moto_aws.session))

    first = summarize(stream_event(records, arn), FakeContext())
    replayed = summarize(stream_event(list(reversed(records)), arn), FakeContext())

    assert first == replayed == {"batchItemFailures": []}
    assert summaries(moto_aws.ddb, moto_aws.table) == {
        3: {"2024-05-31": 5, "2024-06-01": 1},
        4: {"2024-06-01": 2},
    }
    assert len(summary_months(moto_aws.ddb, moto_aws.table, 3)) == 2  # one item per month


def test_the_map_upsert_creates_a_months_map_once_then_updates_its_elements(moto_aws: MotoAws) -> None:
    writer = summary.SummaryWriter(table_name=moto_aws.table, client=moto_aws.ddb)

    writer.upsert(5, "2024-07-01", 3)  # no item: step 1 fails, step 2 creates the map
    writer.upsert(5, "2024-07-02", 1)  # the map exists: step 1
    writer.upsert(5, "2024-07-01", 2)  # lower than kept: a stale record, nothing moves back

    assert summaries(moto_aws.ddb, moto_aws.table) == {5: {"2024-07-01": 3, "2024-07-02": 1}}


def test_two_days_of_one_month_in_one_batch_both_reach_the_month_item_every_time(moto_aws: MotoAws) -> None:
    # moto's conditional writes are not atomic across threads (DynamoDB's are): with a writer per
    # day, two days of one month item lost one of them in most runs; one writer per month item
    arn = "arn:aws:dynamodb:us-east-1:123456789012:table/SensorDigest/stream/2024-05-01T00:00:00.000"
    summarize = lambda_handler(summary.build_service(SummarySettings(table_name=moto_aws.table), moto_aws.session))
    for sensor in range(30):
        records = [day_record(sensor, f"2024-05-{d:02d}", None, d, d) for d in range(1, 9)]

        assert summarize(stream_event(records, arn), FakeContext()) == {"batchItemFailures": []}
        assert summaries(moto_aws.ddb, moto_aws.table)[sensor] == {f"2024-05-{d:02d}": d for d in range(1, 9)}


def test_readings_are_counted_once_and_read_back_exactly_on_moto(moto_aws: MotoAws) -> None:
    # The users' moto tier: ingest with readings (new day, one value then a list in an hour, a
    # redelivery), then the read API's readings route on the same tables
    handler = ingest_handler(moto_aws)

    def reading(event_id: str, value: str, hour: int) -> QueuedMessage:
        stamp = f"2024-05-01T{hour:02d}:10:00Z"
        body = f'{{"sensor_id": 3, "timestamp": "{stamp}", "event_id": "{event_id}", "readings": {{"t": {value}}}}}'
        return QueuedMessage(body=body)

    first = [reading("a", "21.5", 9), reading("b", "20.25", 10)]
    handler(sqs_event(first), FakeContext())
    handler(sqs_event([reading("c", "19.75", 9), reading("d", "0.1", 9)]), FakeContext())
    handler(sqs_event(first), FakeContext())  # delivered again

    reader = api.build_service(
        ApiSettings(table_name=moto_aws.table, ledger_table_name=moto_aws.ledger), moto_aws.session
    )
    answer = reader.readings(3, "2024-05-01", "2024-05-01", None, None)
    stats = answer["days"]["2024-05-01"]["t"]
    assert (str(stats["count"]), str(stats["sum"]), str(stats["min"]), str(stats["max"])) == (
        "4",
        "61.6",
        "0.1",
        "21.5",
    )
    assert answer["partial_days"] == []
