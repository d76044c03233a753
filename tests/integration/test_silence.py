"""The silence check and the read API's hours and silence routes, on DynamoDB Local.

A fixed clock stands for now; the day items are put as ingest writes them (``HourCounts`` beside
``DataCount``), one of them as a release before hours wrote it.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sensor_digest.api import ApiService
from sensor_digest.registry import InvalidProfile, Registry, SensorProfile
from sensor_digest.silence.check import SilenceCheck
from sensor_digest.store import schema
from sensor_digest_tools.local.pipeline import LocalPipeline, PipelineOptions
from tests.support.read_api import follow, get
from tests.support.tables import Tables

pytestmark = pytest.mark.dynamodb_local

NOW = datetime(2024, 11, 3, 12, 30, tzinfo=UTC)  # 07:30 EST in New York, the day clocks fell back; 21:30 in Tokyo


def put_day(ddb: Any, tables: Tables, sensor: int, day: str, hours: dict[str, int] | None) -> None:
    count = sum(hours.values()) if hours is not None else 5
    ddb.put_item(TableName=tables.table, Item=schema.day_item(sensor, day, count, hours))


def register(registry: Registry, sensor: int, zone: str = "UTC", hours: int | None = None) -> None:
    registry.register(SensorProfile(sensor, f"s{sensor}", f"serial-{sensor}", zone, silence_hours=hours))


@pytest.fixture
def fleet(ddb: Any, tables: Tables) -> Tables:
    registry = Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb)
    # 1: silent past its own threshold (last report 06:xx UTC, 5 whole hours since 07:00; threshold 3)
    register(registry, 1, hours=3)
    put_day(ddb, tables, 1, "2024-11-03", {"02": 4, "06": 1})
    # 2: just inside its threshold (last report 07:xx: 5 hours since 08:00, threshold 6)
    register(registry, 2, hours=6)
    put_day(ddb, tables, 2, "2024-11-03", {"07": 2})
    # 3: unregistered, silent for days: never listed
    put_day(ddb, tables, 3, "2024-10-01", {"01": 1})
    # 4: New York, last report in hour 00 (EDT) of the day the clocks fell back: 7 real hours since
    #    01:00 EDT, though the wall clock moved 6 (07:30 - 01:00 = 6.5); threshold 7
    register(registry, 4, zone="America/New_York", hours=7)
    put_day(ddb, tables, 4, "2024-11-03", {"00": 3})
    # 5: Tokyo, across its midnight: nothing today (11-03 local until 15:00Z... it is 21:30 there);
    #    last report yesterday 23:xx local (14:xx Z on 11-02): since 11-03 00:00 JST, 21 hours
    register(registry, 5, zone="Asia/Tokyo")
    put_day(ddb, tables, 5, "2024-11-02", {"23": 1})
    # 6: registered, never reported, threshold of its own
    register(registry, 6, hours=1)
    # 7: its last day item is from before hours (no HourCounts), three days ago: read as its end
    register(registry, 7, hours=24)
    put_day(ddb, tables, 7, "2024-10-31", None)
    # 8: no threshold of its own and reporting this hour
    register(registry, 8)
    put_day(ddb, tables, 8, "2024-11-03", {"12": 1})
    return tables


def check(ddb: Any, tables: Tables, default: int | None) -> SilenceCheck:
    return SilenceCheck(
        table_name=tables.table, client=ddb, default_hours=default, default_zone=ZoneInfo("UTC"), clock=lambda: NOW
    )


def test_the_check_finds_the_sensors_silent_past_their_threshold_and_since_when(ddb: Any, fleet: Tables) -> None:
    found = check(ddb, fleet, default=12).run()

    assert found.checked == 7  # the registered ones
    assert [s.as_json() for s in found.silent] == [
        {"sensor_id": 1, "last_report_hour": "2024-11-03T06", "silent_hours": 5, "threshold_hours": 3},
        {"sensor_id": 4, "last_report_hour": "2024-11-03T00", "silent_hours": 7, "threshold_hours": 7},
        {"sensor_id": 5, "last_report_hour": "2024-11-02T23", "silent_hours": 21, "threshold_hours": 12},
        {"sensor_id": 6, "last_report_hour": None, "silent_hours": None, "threshold_hours": 1},
        {"sensor_id": 7, "last_report_hour": "2024-10-31T23", "silent_hours": 60, "threshold_hours": 24},
    ]


def test_without_a_default_only_sensors_with_their_own_threshold_can_be_silent(ddb: Any, fleet: Tables) -> None:
    silent = {s.sensor_id for s in check(ddb, fleet, default=None).run().silent}

    assert silent == {1, 4, 6, 7}


def test_hand_written_and_far_past_day_items_neither_stop_the_check_nor_hide_a_silent_sensor(
    ddb: Any, fleet: Tables
) -> None:
    # Given, beside the fleet, day items a hand or a stray producer wrote: an hour that is none ("24"),
    # a report of the year 1 (ingest takes any instant it can date), and a map the upgrade began late
    # (DataCount 22 of which one report has an hour: the 21 before the map were at hours unknown)
    registry = Registry(table_name=fleet.table, ledger_table_name=fleet.ledger, client=ddb)
    for sensor, zone in ((20, "UTC"), (21, "Asia/Tokyo"), (22, "UTC")):
        register(registry, sensor, zone=zone, hours=6)
    ddb.put_item(TableName=fleet.table, Item=schema.day_item(20, "2024-11-03", 3, {"24": 3}))
    ddb.put_item(TableName=fleet.table, Item=schema.day_item(21, "0001-01-01", 1, {"00": 1}))
    ddb.put_item(TableName=fleet.table, Item=schema.day_item(22, "2024-11-03", 22, {"03": 1}))

    # When the check runs
    found = {s.sensor_id: s for s in check(ddb, fleet, default=12).run().silent}

    # Then it ran through: the fleet's silent sensors are all there; the year-1 sensor is silent;
    # the other two count as reported until the day's last hour (their hours are not all known)
    assert {1, 4, 5, 6, 7} <= set(found)
    assert found[21].last_report_hour == "0001-01-01T00"
    assert 20 not in found and 22 not in found


def test_a_threshold_outside_one_to_720_hours_is_refused_like_the_other_profile_fields(
    ddb: Any, tables: Tables
) -> None:
    registry = Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb)
    for wrong in (0, 721):
        with pytest.raises(InvalidProfile, match="silence threshold must be a whole number of hours from 1 to 720"):
            register(registry, 9, hours=wrong)
    register(registry, 9, hours=720)
    assert registry.get(9) == SensorProfile(9, "s9", "serial-9", silence_hours=720)


def test_the_hours_route_answers_a_days_hours_from_one_read(ddb: Any, fleet: Tables) -> None:
    calls: list[str] = []
    ddb.meta.events.register("before-call.dynamodb.*", lambda model, **_: calls.append(model.name))
    service = ApiService(table_name=fleet.table, client=ddb)

    assert get(service, "/sensors/1/hours?day=2024-11-03")[:2] == (
        200,
        {"sensor_id": 1, "day": "2024-11-03", "hours": {"02": 4, "06": 1}, "count": 5, "complete": True},
    )
    assert calls == ["GetItem"]
    assert get(service, "/sensors/1/hours?day=2024-11-04")[1]["hours"] == {}  # no day item
    assert get(service, "/sensors/7/hours?day=2024-10-31")[1]["hours"] == {}  # counted before hours
    assert get(service, "/sensors/1/hours?day=2024-02-30")[:2] == (
        400,
        {"error": "day must be a day YYYY-MM-DD, got '2024-02-30'"},
    )
    assert get(service, "/sensors/1/hours")[0] == 400
    assert get(service, "/sensors/x/hours?day=2024-11-03")[0] == 400


def test_the_silence_route_pages_through_the_registered_sensors(ddb: Any, fleet: Tables) -> None:
    service = ApiService(table_name=fleet.table, client=ddb, silence=check(ddb, fleet, default=12))

    pages = list(follow(service, "/silence?limit=2", "sensors"))

    assert len(pages) == 4  # 7 registered sensors, 2 a page
    assert [s["sensor_id"] for page in pages for s in page["sensors"]] == [1, 4, 5, 6, 7]
    assert get(service, "/silence?limit=0")[0] == 400
    assert get(service, "/silence?token=nope")[0] == 400


def test_the_local_pipeline_runs_the_silence_check_on_a_short_period(ddb_endpoint: str) -> None:
    # Given a local pipeline that checks every 0.2 s, and a sensor registered with its own threshold
    # that never reported
    heard: list[Any] = []
    pipeline = LocalPipeline(PipelineOptions(silence_every=0.2), engine_endpoint=ddb_endpoint)
    pipeline.on_silence = heard.append
    with pipeline:
        target = pipeline.target
        registry = Registry(
            table_name=str(target.table), ledger_table_name=str(target.ledger), client=pipeline.dynamodb()
        )
        register(registry, 11, hours=2)
        deadline = time.monotonic() + 20
        while not any(page.silent for page in heard) and time.monotonic() < deadline:
            time.sleep(0.1)

    # Then a check found it, as the stack's hourly check would
    found = next(page for page in heard if page.silent)
    assert [s.as_json() for s in found.silent] == [
        {"sensor_id": 11, "last_report_hour": None, "silent_hours": None, "threshold_hours": 2}
    ]
    assert pipeline.errors == []
