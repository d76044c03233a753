"""Summary path on DynamoDB Local, fed with real records read from the local table's stream."""

from __future__ import annotations

import os
import random
import threading
from datetime import date, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sensor_digest import summary
from sensor_digest.config import SummarySettings
from sensor_digest.store import schema
from sensor_digest.store.reads import summary_months
from sensor_digest.store.sizes import item_bytes, write_units
from sensor_digest.stream_filter import DAY_ITEM_FILTER, matches_filter
from sensor_digest.summary import SummaryService, SummaryWriter
from sensor_digest_tools.aws.stream_reader import StreamReader
from sensor_digest_tools.lambda_runtime.events import FakeContext, stream_event
from tests.support.faults import FaultyClient, PauseAfterFirstCall
from tests.support.scenarios import deliver, generate
from tests.support.tables import Tables, by_sensor, day_counts, scan_all, summaries


@pytest.fixture
def reader(engine_endpoint: str, tables: Tables) -> StreamReader:
    return StreamReader(engine_endpoint, tables.table)


def feed(handler: Any, records: list[dict[str, Any]], arn: str, batch_size: int = 100) -> int:
    """Hand batches to the handler as Lambda does: retry from the reported checkpoint. Returns retries."""
    retries = 0
    position = 0
    while position < len(records):
        batch = records[position : position + batch_size]
        response = handler(stream_event(batch, arn), FakeContext())
        failures = response["batchItemFailures"]
        if not failures:
            position += len(batch)
            continue
        retries += 1
        sequence = failures[0]["itemIdentifier"]
        position += next(i for i, r in enumerate(batch) if r["dynamodb"]["SequenceNumber"] == sequence)
    return retries


def put_counts(ddb: Any, table: str, counts: dict[tuple[int, str], list[int]]) -> None:
    """Write day items through a sequence of values, as ingest would (each write is a stream record)."""
    for (sensor, day), values in counts.items():
        for value in values:
            ddb.put_item(
                TableName=table,
                Item={"SensorId": {"N": str(sensor)}, "Date": {"S": day}, "DataCount": {"N": str(value)}},
            )


def test_after_ingest_every_sensors_daily_counts_equal_its_day_items(
    ddb: Any, tables: Tables, ingest_handler: Any, summary_handler: Any, reader: StreamReader
) -> None:
    scenario = generate(600, sensors=8)
    deliver(ingest_handler, scenario.deliveries)

    records = [r for r in reader.poll() if matches_filter(r, DAY_ITEM_FILTER)]
    feed(summary_handler, records, reader.stream_arn)

    assert summaries(ddb, tables.table) == by_sensor(day_counts(ddb, tables.table))
    assert day_counts(ddb, tables.table) == dict(scenario.truth)


def test_replayed_reversed_and_duplicated_batches_do_not_change_the_result(
    ddb: Any, tables: Tables, summary_handler: Any, reader: StreamReader
) -> None:
    put_counts(ddb, tables.table, {(1, "2024-05-01"): [1, 2, 5], (1, "2024-05-02"): [3], (2, "2024-05-01"): [4, 9]})
    records = reader.poll()
    feed(summary_handler, records, reader.stream_arn)
    settled = summaries(ddb, tables.table)

    feed(summary_handler, records, reader.stream_arn)  # replayed
    feed(summary_handler, list(reversed(records)), reader.stream_arn, batch_size=2)  # reversed, low after high
    feed(summary_handler, [r for r in records for _ in range(2)], reader.stream_arn, batch_size=3)  # duplicated

    assert settled == {1: {"2024-05-01": 5, "2024-05-02": 3}, 2: {"2024-05-01": 9}}
    assert summaries(ddb, tables.table) == settled


def test_the_summary_items_own_records_and_remove_records_are_ignored(
    ddb: Any,
    tables: Tables,
    summary_handler: Any,
    reader: StreamReader,
    summary_settings: SummarySettings,
    session: Any,
) -> None:
    put_counts(ddb, tables.table, {(3, "2024-05-01"): [2], (3, "2024-05-02"): [6]})
    feed(summary_handler, reader.poll(), reader.stream_arn)
    ddb.delete_item(TableName=tables.table, Key={"SensorId": {"N": "3"}, "Date": {"S": "2024-05-02"}})
    records = reader.poll()  # the summary item's INSERT (both days in one write) and the day item's REMOVE
    kinds = sorted((r["eventName"], r["dynamodb"]["Keys"]["Date"]["S"]) for r in records)
    assert kinds == [("INSERT", "SUMMARY#2024-05"), ("REMOVE", "2024-05-02")]

    report = summary.build_service(summary_settings, session).process(records)

    assert (report.ignored, report.requests, report.checkpoint) == (2, 0, None)
    assert not any(matches_filter(r) for r in records)  # the stack's filter would not even invoke it
    assert summaries(ddb, tables.table) == {3: {"2024-05-01": 2, "2024-05-02": 6}}


def test_records_of_items_whose_date_is_no_ascii_calendar_day_write_nothing(
    ddb: Any, tables: Tables, summary_handler: Any, reader: StreamReader
) -> None:
    # Given items with a DataCount (they pass the stack's filter) under sort keys that only look
    # like days: a final newline, non-ASCII digits, a date no calendar has; and one real day
    hostile = ["2024-05-01\n", "2024-05-0\u0661", "2024-02-30"]
    put_counts(ddb, tables.table, {(4, day): [7] for day in [*hostile, "2024-05-02"]})
    records = reader.poll()

    feed(summary_handler, records, reader.stream_arn)

    assert all(matches_filter(r, DAY_ITEM_FILTER) for r in records)
    assert [i["Date"]["S"] for i in scan_all(ddb, tables.table) if "DailyCounts" in i] == ["SUMMARY#2024-05"]
    assert summaries(ddb, tables.table) == {4: {"2024-05-02": 7}}


def test_two_writers_creating_a_new_months_map_lose_no_element(ddb: Any, tables: Tables) -> None:
    # Given April's summary, and two writers of the first days of May that both find May's map
    # missing before either creates it (every new month creates a map: the race is monthly)
    SummaryWriter(table_name=tables.table, client=ddb).upsert(5, "2024-04-30", 2)
    writer = SummaryWriter(
        table_name=tables.table, client=PauseAfterFirstCall(ddb, threading.Barrier(2, timeout=30), "update_item")
    )
    outcomes: list[Any] = []
    threads = [
        threading.Thread(target=lambda d=day, n=n: outcomes.append(writer.upsert(5, d, n)))
        for day, n in (("2024-05-01", 4), ("2024-05-02", 7))
    ]

    # When both run at once
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    # Then both elements are there: one created the map, the other fell back to step 3
    assert summaries(ddb, tables.table) == {5: {"2024-04-30": 2, "2024-05-01": 4, "2024-05-02": 7}}
    assert sorted(o.steps for o in outcomes) == [
        ["update-element", "create-map"],
        ["update-element", "create-map", "update-element-again"],
    ]


def test_a_stale_record_is_a_success_told_apart_from_a_missing_map(ddb: Any, tables: Tables) -> None:
    writer = SummaryWriter(table_name=tables.table, client=ddb)

    created = writer.upsert(6, "2024-05-01", 5)
    stale = writer.upsert(6, "2024-05-01", 3)
    equal = writer.upsert(6, "2024-05-01", 5)
    added = writer.upsert(6, "2024-05-02", 1)

    assert created.steps == ["update-element", "create-map"]
    assert (stale.stale, stale.written, stale.requests) == (True, False, 1)
    assert (equal.stale, equal.requests) == (True, 1)
    assert (added.written, added.requests) == (True, 1)
    assert summaries(ddb, tables.table) == {6: {"2024-05-01": 5, "2024-05-02": 1}}


def test_a_transient_fault_checkpoints_at_the_first_record_that_did_not_succeed(
    ddb: Any, tables: Tables, reader: StreamReader
) -> None:
    put_counts(
        ddb,
        tables.table,
        {(1, "2024-05-01"): [1], (2, "2024-05-01"): [2], (3, "2024-05-01"): [3], (2, "2024-05-02"): [4]},
    )
    records = reader.poll()
    throttled = FaultyClient(inner=ddb, rule=lambda op, kw: "throttle" if kw["Key"]["SensorId"]["N"] == "2" else None)
    service = SummaryService(writer=SummaryWriter(table_name=tables.table, client=throttled))

    report = service.process(records)

    assert report.response() == {"batchItemFailures": [{"itemIdentifier": records[1]["dynamodb"]["SequenceNumber"]}]}
    assert report.failed == 2
    assert summaries(ddb, tables.table) == {1: {"2024-05-01": 1}, 3: {"2024-05-01": 3}}


def test_a_batch_is_coalesced_to_one_write_per_sensor_day(ddb: Any, tables: Tables, reader: StreamReader) -> None:
    put_counts(ddb, tables.table, {(4, "2024-05-01"): [1, 2, 3, 4], (4, "2024-05-02"): [7, 8]})
    records = reader.poll()
    service = SummaryService(writer=SummaryWriter(table_name=tables.table, client=ddb))

    report = service.process(records)

    assert (report.records, report.coalesced, report.written) == (6, 2, 2)
    assert summaries(ddb, tables.table) == {4: {"2024-05-01": 4, "2024-05-02": 8}}


def test_a_month_item_of_the_largest_counts_costs_one_write_unit(ddb: Any, tables: Tables) -> None:
    # Given 30 days of a 31-day month with seven-digit counts (the worst case below 10 million a day)
    days = [(date(2024, 1, 1) + timedelta(days=i)).isoformat() for i in range(31)]
    key = {"SensorId": {"N": "77"}, "Date": {"S": "SUMMARY#2024-01"}}
    daily = {day: {"N": str(9_999_999 - 2 * i)} for i, day in enumerate(days[:-1])}
    ddb.put_item(TableName=tables.table, Item={**key, "DailyCounts": {"M": daily}})

    # When the summary path adds the last day through the map upsert
    outcome = SummaryWriter(table_name=tables.table, client=ddb).upsert(77, days[-1], 9_999_999)

    # Then the month item holds 31 days under 1 KB: each summary write costs one write unit
    item = ddb.get_item(TableName=tables.table, Key=key)["Item"]
    size = item_bytes(item)
    consumed = ddb.put_item(TableName=tables.table, Item=item, ReturnConsumedCapacity="TOTAL")["ConsumedCapacity"]
    print(f"\nsummary item of a 31-day month: {size} bytes")
    assert (outcome.written, outcome.requests) == (True, 1)
    assert len(item["DailyCounts"]["M"]) == 31
    assert size <= 1024
    assert consumed["CapacityUnits"] == write_units(size) == 1  # the engine agrees with the size rules


def test_days_of_different_months_go_to_their_own_month_items(ddb: Any, tables: Tables) -> None:
    writer = SummaryWriter(table_name=tables.table, client=ddb)
    for day, count in (("2024-01-31", 3), ("2024-02-01", 4), ("2024-02-29", 5), ("2025-01-01", 6)):
        assert writer.upsert(9, day, count).written

    months = {
        i["Date"]["S"]: {d: int(v["N"]) for d, v in i["DailyCounts"]["M"].items()} for i in scan_all(ddb, tables.table)
    }
    assert months == {
        "SUMMARY#2024-01": {"2024-01-31": 3},
        "SUMMARY#2024-02": {"2024-02-01": 4, "2024-02-29": 5},
        "SUMMARY#2025-01": {"2025-01-01": 6},
    }
    assert summary_months(ddb, tables.table, 9, "2024-02", "2024-12") == {"2024-02": months["SUMMARY#2024-02"]}


def stale_records(batches: list[list[dict[str, Any]]]) -> int:
    """How many records, in the order fed, carry an older count of their day item than one fed before."""
    newest: dict[tuple[str, str], int] = {}
    stale = 0
    for record in (r for batch in batches for r in batch):
        keys, image = record["dynamodb"]["Keys"], record["dynamodb"]["NewImage"]
        key, count = (keys["SensorId"]["N"], keys["Date"]["S"]), int(image[schema.DATA_COUNT]["N"])
        stale += count < newest.get(key, count)
        newest[key] = max(count, newest.get(key, count))
    return stale


@pytest.mark.fresh_engine
def test_after_the_scenario_shuffled_replayed_stream_batches_give_exact_summaries(
    ddb: Any, tables: Tables, ingest_handler: Any, summary_handler: Any, reader: StreamReader
) -> None:
    # 2,000 messages over 10 sensors and 3 days (~67 a sensor-day, as 10,000 over 50 before), each
    # delivered 1-3 times: every day item is written many times, so its stream records can come back
    # out of order and twice
    scenario = generate(2_000, sensors=10)
    deliver(ingest_handler, scenario.deliveries)
    records = [r for r in reader.poll() if matches_filter(r)]
    rng = random.Random(5)
    batches = [records[i : i + 100] for i in range(0, len(records), 100)]
    replayed = batches + rng.sample(batches, k=len(batches) // 3)  # a third of the batches twice
    rng.shuffle(replayed)
    # what the claim is about happened: batches replayed, and older records fed after newer ones
    assert len(replayed) > len(batches) and stale_records(replayed) > 0

    for batch in replayed:
        feed(summary_handler, batch, reader.stream_arn)

    assert day_counts(ddb, tables.table) == dict(scenario.truth)
    assert summaries(ddb, tables.table) == by_sensor(dict(scenario.truth))


def test_dynamodb_local_rejects_overlapping_paths_and_writes_no_record_for_a_no_op(ddb: Any, tables: Tables) -> None:
    # The two places where moto differs (pinned in tests/moto/test_moto_divergences.py)
    ddb.put_item(TableName=tables.table, Item=schema.summary_item(1, "2024-05", {}))
    with pytest.raises(ClientError) as refused:
        ddb.update_item(
            TableName=tables.table,
            Key=schema.summary_key(1, "2024-05"),
            UpdateExpression="SET #m = if_not_exists(#m, :empty), #m.#d = :v",
            ExpressionAttributeNames={"#m": schema.DAILY_COUNTS, "#d": "2024-05-01"},
            ExpressionAttributeValues={":empty": {"M": {}}, ":v": {"N": "1"}},
        )
    ddb.put_item(TableName=tables.table, Item=schema.day_item(2, "2024-05-01", 5))
    reader = StreamReader(os.environ["AWS_ENDPOINT_URL_DYNAMODB"], tables.table, client=ddb)
    reader.poll()
    ddb.update_item(
        TableName=tables.table,
        Key=schema.day_key(2, "2024-05-01"),
        UpdateExpression="SET #c = :same",
        ExpressionAttributeNames={"#c": schema.DATA_COUNT},
        ExpressionAttributeValues={":same": {"N": "5"}},
    )

    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert "overlap" in refused.value.response["Error"]["Message"].lower()
    assert reader.poll() == []


def test_a_months_days_of_one_batch_are_one_write_and_stale_ones_are_dropped_from_it(ddb: Any, tables: Tables) -> None:
    writer = SummaryWriter(table_name=tables.table, client=ddb)
    writer.upsert_month(8, "2024-05", {"2024-05-01": 5, "2024-05-02": 5})

    # every day of a 31-day month in one write, two of them stale (held already at a higher count)
    counts = {f"2024-05-{d:02d}": 4 for d in range(1, 32)}
    outcome = writer.upsert_month(8, "2024-05", counts)

    assert sorted(outcome.stale) == ["2024-05-01", "2024-05-02"]
    assert len(outcome.written) == 29
    assert outcome.requests == 2  # refused once (the stale elements named in the old item), then written
    assert summaries(ddb, tables.table)[8] == {**counts, "2024-05-01": 5, "2024-05-02": 5}
