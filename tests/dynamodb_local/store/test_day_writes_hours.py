"""``HourCounts`` on DynamoDB Local, in every counter: the hours travel in the count's own write, a
day item created with hours sums to its ``DataCount``, and a day item from before hours gets its
map created by the next write (the missing-map step), never rewritten."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sensor_digest import ingest
from sensor_digest.config import DeliveryMode, IngestSettings, LedgerMode, QueueType
from sensor_digest.store import schema
from sensor_digest.store.sizes import item_bytes
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from tests.support.fifo import Sequencer
from tests.support.messages import FakeContext, QueuedMessage, sqs_event
from tests.support.tables import Tables, scan_all

DAY = "2024-05-01"
WRITES = {"PutItem", "UpdateItem", "TransactWriteItems"}

MODES = {
    "compact": {},
    "per-message": {"ledger_mode": LedgerMode.PER_MESSAGE},
    "at-least-once": {"delivery_mode": DeliveryMode.AT_LEAST_ONCE},
    "fifo": {"queue_type": QueueType.FIFO},
}


def handler_for(mode: str, settings: IngestSettings, session: Any) -> Any:
    return lambda_handler(ingest.build_service(replace(settings, **MODES[mode]), session))


def batch(mode: str, sequencer: Sequencer, reports: list[tuple[int, str, int]]) -> list[QueuedMessage]:
    """(sensor, timestamp, count) as messages of ``mode``'s queue, each with its own event id."""
    out = []
    for sensor, stamp, count in reports:
        body = {"sensor_id": sensor, "timestamp": stamp, "count": count, "event_id": f"e-{stamp}-{count}-{len(out)}"}
        if mode == "fifo":
            queued = sequencer.message(sensor, count=count)
            out.append(replace(queued, body=json.dumps(body)))
        else:
            out.append(QueuedMessage(body=json.dumps(body)))
    return out


def day_item(ddb: Any, tables: Tables, sensor: int, day: str = DAY) -> dict[str, Any]:
    return ddb.get_item(TableName=tables.table, Key=schema.day_key(sensor, day), ConsistentRead=True).get("Item", {})


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_hours_of_a_new_day_item_sum_to_its_count_in_every_mode(
    mode: str, ddb: Any, tables: Tables, ingest_settings: IngestSettings, session: Any
) -> None:
    handler = handler_for(mode, ingest_settings, session)
    seq = Sequencer()
    first = batch(mode, seq, [(1, f"{DAY}T09:15:00Z", 2), (1, f"{DAY}T09:59:59Z", 1), (1, f"{DAY}T23:00:00Z", 4)])
    second = batch(mode, seq, [(1, f"{DAY}T09:00:00Z", 3), (1, f"{DAY}T00:30:00Z", 1)])

    assert handler(sqs_event(first), FakeContext()) == {"batchItemFailures": []}
    assert handler(sqs_event(second), FakeContext()) == {"batchItemFailures": []}

    item = day_item(ddb, tables, 1)
    assert schema.hour_counts_of_item(item) == {"00": 1, "09": 6, "23": 4}
    assert schema.number_of(item, schema.DATA_COUNT) == 11


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_day_item_from_before_hours_gets_its_map_in_the_next_write_and_keeps_what_it_held(
    mode: str, ddb: Any, tables: Tables, ingest_settings: IngestSettings, session: Any
) -> None:
    # Given a day item as the previous release left it: a count and no HourCounts
    old = {**schema.day_item(2, DAY, 40), "Extra": {"S": "kept"}}
    if mode == "compact":
        old[schema.ID_PAGE] = {"N": "0"}
    ddb.put_item(TableName=tables.table, Item=old)
    handler = handler_for(mode, ingest_settings, session)
    seq = Sequencer()

    # When two batches count on it
    for reports in ([(2, f"{DAY}T08:00:00Z", 2)], [(2, f"{DAY}T08:30:00Z", 1), (2, f"{DAY}T10:00:00Z", 5)]):
        assert handler(sqs_event(batch(mode, seq, reports)), FakeContext()) == {"batchItemFailures": []}

    # Then the count went on from 40, the map holds the hours counted since, the rest is untouched
    item = day_item(ddb, tables, 2)
    assert schema.number_of(item, schema.DATA_COUNT) == 48
    assert schema.hour_counts_of_item(item) == {"08": 3, "10": 5}
    assert item["Extra"] == {"S": "kept"}


def test_the_hours_of_daylight_saving_change_days_are_the_zones_wall_clock_hours(
    ddb: Any, tables: Tables, ingest_settings: IngestSettings, session: Any
) -> None:
    # Given sensors in New York's zone: spring forward 2024-03-10 (02:00 skipped), fall back
    # 2024-11-03 (01:00 twice)
    handler = handler_for("compact", replace(ingest_settings, timezone=ZoneInfo("America/New_York")), session)
    seq = Sequencer()
    reports = [
        (3, "2024-03-10T06:30:00Z", 1),  # 01:30 EST
        (3, "2024-03-10T07:30:00Z", 1),  # 03:30 EDT: no report can be in hour 02
        (4, "2024-11-03T05:30:00Z", 1),  # 01:30 EDT
        (4, "2024-11-03T06:30:00Z", 1),  # 01:30 EST: the same wall-clock hour again
        (4, "2024-11-03T23:30", 1),  # a wall-clock time: the hour as written
        (4, "2024-11-02T24:00", 1),  # 24:00 is the next day's 00
    ]
    assert handler(sqs_event(batch("compact", seq, reports)), FakeContext()) == {"batchItemFailures": []}

    assert schema.hour_counts_of_item(day_item(ddb, tables, 3, "2024-03-10")) == {"01": 1, "03": 1}
    assert schema.hour_counts_of_item(day_item(ddb, tables, 4, "2024-11-03")) == {"00": 1, "01": 2, "23": 1}


def test_hours_cost_no_request_and_keep_a_full_compact_day_item_under_one_kilobyte(
    ddb: Any, tables: Tables, ingest_settings: IngestSettings, session: Any
) -> None:
    handler = handler_for("compact", ingest_settings, session)
    seq = Sequencer()
    reports = [(5, f"{DAY}T{i % 24:02d}:00:00Z", 1) for i in range(40)]
    for start in range(0, 40, 10):
        assert handler(sqs_event(batch("compact", seq, reports[start : start + 10])), FakeContext()) == {
            "batchItemFailures": []
        }
    item = next(i for i in scan_all(ddb, tables.table) if schema.sensor_of_item(i) == 5)
    assert len(schema.hour_counts_of_item(item) or {}) == 24
    assert item_bytes(item) < 1024


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_day_item_from_before_hours_read_before_the_write_gets_its_map_without_a_refused_write(
    mode: str, ddb: Any, tables: Tables, ingest_settings: IngestSettings, session: Any
) -> None:
    # Given a day item of the previous release (a day begun under markers: its writes are transactions)
    ddb.put_item(TableName=tables.table, Item=schema.day_item(6, DAY, 40))
    service = ingest.build_service(replace(ingest_settings, **MODES[mode]), session)
    writes: list[str] = []
    service.counter.store.client.meta.events.register(  # type: ignore[attr-defined]
        "before-call.dynamodb.*",
        lambda model, **_: writes.append(model.name) if model.name in WRITES else None,
    )

    # When a batch counts on it (its day item unknown to the container: read first)
    reports = [(6, f"{DAY}T08:00:00Z", 2), (6, f"{DAY}T10:00:00Z", 1)]
    answer = lambda_handler(service)(sqs_event(batch(mode, Sequencer(), reports)), FakeContext())

    # Then one write counted it and created the map: none was refused for the missing map
    assert answer == {"batchItemFailures": []}
    assert len(writes) == 1, writes
    item = day_item(ddb, tables, 6)
    assert (schema.number_of(item, schema.DATA_COUNT), schema.hour_counts_of_item(item)) == (43, {"08": 2, "10": 1})
