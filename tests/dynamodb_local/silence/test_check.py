"""The silence check and the read API's hours and silence routes, on DynamoDB Local.

A fixed clock stands for now, and the registry's clock for the profiles' registration time; the day
items are put as ingest writes them (``HourCounts`` beside ``DataCount``), one of them as a release
before hours wrote it. Empty day items (no ``DataCount``) and profiles from before registration times
were kept are written by hand.
"""

from __future__ import annotations

import itertools
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest.mock import ANY
from zoneinfo import ZoneInfo

import pytest
from botocore.exceptions import ClientError

from sensor_digest.api import ApiService
from sensor_digest.registry import InvalidProfile, Registry, SensorProfile
from sensor_digest.silence.check import SilenceCheck
from sensor_digest.store import schema
from sensor_digest_tools.local.pipeline import LocalPipeline, PipelineOptions
from tests.support.read_api import follow, get
from tests.support.tables import Tables

NOW = datetime(2024, 11, 3, 12, 30, tzinfo=UTC)  # 07:30 EST in New York, the day clocks fell back; 21:30 in Tokyo
REGISTERED = datetime(2024, 10, 1, tzinfo=UTC)  # the fleet's registration: a month before NOW


def put_day(ddb: Any, tables: Tables, sensor: int, day: str, hours: dict[str, int] | None) -> None:
    count = sum(hours.values()) if hours is not None else 5
    ddb.put_item(TableName=tables.table, Item=schema.day_item(sensor, day, count, hours))


def register(registry: Registry, sensor: int, zone: str = "UTC", hours: int | None = None) -> None:
    registry.register(SensorProfile(sensor, f"s{sensor}", f"serial-{sensor}", zone, silence_hours=hours))


def registry_at(ddb: Any, tables: Tables, when: datetime = REGISTERED) -> Registry:
    """The registry, its clock at ``when`` (the profiles' registration time)."""
    return Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb, clock=lambda: when)


def entry(sensor: int, last: str | None, hours: int | None, threshold: int, zone: str = "UTC") -> dict[str, Any]:
    """A ``GET /silence`` entry of a sensor of the fleet (registered at ``REGISTERED``)."""
    return {
        "sensor_id": sensor,
        "last_report_hour": last,
        "silent_hours": hours,
        "threshold_hours": threshold,
        "timezone": zone,
        "registered_at": "2024-10-01T00:00:00Z",
    }


@pytest.fixture
def fleet(ddb: Any, tables: Tables) -> Tables:
    registry = registry_at(ddb, tables)
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
    # 6: registered a month ago, never reported, threshold of its own: silent since its registration
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
        entry(1, "2024-11-03T06", 5, 3),
        entry(4, "2024-11-03T00", 7, 7, "America/New_York"),
        entry(5, "2024-11-02T23", 21, 12, "Asia/Tokyo"),
        entry(6, None, 804, 1),  # 33 days and 12 hours since its registration
        entry(7, "2024-10-31T23", 60, 24),
    ]
    assert found.unchecked == []


def test_without_a_default_only_sensors_with_their_own_threshold_can_be_silent(ddb: Any, fleet: Tables) -> None:
    silent = {s.sensor_id for s in check(ddb, fleet, default=None).run().silent}

    assert silent == {1, 4, 6, 7}


def test_hand_written_and_far_past_day_items_neither_stop_the_check_nor_hide_a_silent_sensor(
    ddb: Any, fleet: Tables
) -> None:
    # Given, beside the fleet, day items a hand or a stray producer wrote: an hour that is none ("24"),
    # a report of the year 1 (ingest takes any instant it can date), and a map the upgrade began late
    # (DataCount 22 of which one report has an hour: the 21 before the map were at hours unknown)
    registry = registry_at(ddb, fleet)
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
    assert registry.get(9) == SensorProfile(9, "s9", "serial-9", silence_hours=720, registered_at=ANY)


def test_the_hours_route_answers_a_days_hours_and_their_zone_from_one_read(ddb: Any, fleet: Tables) -> None:
    calls: list[str] = []
    ddb.meta.events.register("before-call.dynamodb.*", lambda model, **_: calls.append(model.name))
    service = ApiService(table_name=fleet.table, client=ddb, default_zone=ZoneInfo("Europe/Paris"))

    assert get(service, "/sensors/1/hours?day=2024-11-03")[:2] == (
        200,
        {
            "sensor_id": 1,
            "day": "2024-11-03",
            "hours": {"02": 4, "06": 1},
            "count": 5,
            "complete": True,
            "timezone": "UTC",
        },
    )
    assert calls == ["BatchGetItem"]
    # the zone the hours are in: the sensor's registered one, else the digest zone (unregistered 3)
    assert get(service, "/sensors/4/hours?day=2024-11-03")[1]["timezone"] == "America/New_York"
    assert get(service, "/sensors/3/hours?day=2024-10-01")[1] == {
        "sensor_id": 3,
        "day": "2024-10-01",
        "hours": {"01": 1},
        "count": 1,
        "complete": True,
        "timezone": "Europe/Paris",
    }
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
    # Given a local pipeline that checks every 0.2 s, and a sensor registered three hours ago with its
    # own threshold of two hours that never reported
    heard: list[Any] = []
    pipeline = LocalPipeline(PipelineOptions(silence_every=0.2), engine_endpoint=ddb_endpoint)
    pipeline.on_silence = heard.append
    registered = datetime.now(UTC) - timedelta(hours=3, minutes=1)
    with pipeline:
        target = pipeline.target
        registry = Registry(
            table_name=str(target.table),
            ledger_table_name=str(target.ledger),
            client=pipeline.dynamodb(),
            clock=lambda: registered,
        )
        register(registry, 11, hours=2)
        deadline = time.monotonic() + 20
        while not any(page.silent for page in heard) and time.monotonic() < deadline:
            time.sleep(0.1)

    # Then a check found it, as the stack's hourly check would
    found = next(page for page in heard if page.silent)
    [silent] = [s.as_json() for s in found.silent]
    assert silent == {
        "sensor_id": 11,
        "last_report_hour": None,
        "silent_hours": 3,
        "threshold_hours": 2,
        "timezone": "UTC",
        "registered_at": registered.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    assert pipeline.errors == []


def put_empty(ddb: Any, tables: Tables, sensor: int, day: str, kind: int = 0) -> None:
    """A day item without ``DataCount``, as a resent report's identity left it (``Ids`` in page 0), or
    with an empty ``HourCounts`` beside, or its keys alone."""
    shapes: list[dict[str, Any]] = [
        {schema.ID_PAGE: {"N": "0"}, schema.IDS: {"BS": [b"\x01" * 12]}},
        {schema.HOUR_COUNTS: {"M": {}}, schema.ID_PAGE: {"N": "0"}},
        {},
    ]
    ddb.put_item(TableName=tables.table, Item={**schema.day_key(sensor, day), **shapes[kind % 3]})


def days_before(last: str, count: int) -> list[str]:
    end = datetime.fromisoformat(last)
    return [(end - timedelta(days=i)).date().isoformat() for i in range(count)]


def test_empty_day_items_and_items_that_are_no_days_are_read_past_to_the_last_real_report(
    ddb: Any, tables: Tables
) -> None:
    # Given sensor 30, whose last report was in hour 08 of 2024-10-20, then a producer's resends left an
    # empty day item on each of the 15 days since, today and yesterday among them, beside an item whose
    # sort key is no day (it sorts among them); and sensor 31 in Tokyo, last reported 2024-10-01 (from
    # before hours), then 8 empty days
    registry = registry_at(ddb, tables)
    register(registry, 30, hours=6)
    register(registry, 31, zone="Asia/Tokyo", hours=6)
    put_day(ddb, tables, 30, "2024-10-20", {"08": 2})
    for i, day in enumerate(days_before("2024-11-03", 14)):
        put_empty(ddb, tables, 30, day, i)
    ddb.put_item(TableName=tables.table, Item={**schema.day_key(30, "2024-10-25 "), schema.DATA_COUNT: {"N": "4"}})
    put_day(ddb, tables, 31, "2024-10-01", None)
    for i, day in enumerate(days_before("2024-10-09", 8)):
        put_empty(ddb, tables, 31, day, i)

    # When the check runs, and GET /silence answers
    found = check(ddb, tables, default=None).run()
    service = ApiService(table_name=tables.table, client=ddb, silence=check(ddb, tables, default=None))
    status, answer, _ = get(service, "/silence")

    # Then each sensor's last real report is found, never "never reported"
    expected = [entry(30, "2024-10-20T08", 339, 6), entry(31, "2024-10-01T23", 789, 6, "Asia/Tokyo")]
    assert [s.as_json() for s in found.silent] == expected
    assert (status, answer) == (200, {"sensors": expected})


def test_a_sensor_that_never_reported_is_silent_from_its_registration(ddb: Any, tables: Tables) -> None:
    # Given, never reported: 40 registered 2 h ago and 41 5 h ago, both with a threshold of 3 hours; 42
    # and 43 of 3 hours too, from before registration times were kept (none, or one no time); and a
    # fleet registered an hour ago, before the stack's default of 6 hours was set
    register(registry_at(ddb, tables, NOW - timedelta(hours=2)), 40, hours=3)
    register(registry_at(ddb, tables, NOW - timedelta(hours=5, minutes=10)), 41, hours=3)
    for sensor, stamp in ((42, None), (43, {"S": "yesterday"})):
        item = SensorProfile(sensor, f"s{sensor}", f"serial-{sensor}", silence_hours=3).item()
        ddb.put_item(TableName=tables.table, Item=item | ({schema.REGISTERED_AT: stamp} if stamp else {}))
    fleet_registry = registry_at(ddb, tables, NOW - timedelta(hours=1))
    for sensor in range(50, 55):
        register(fleet_registry, sensor)

    # When the check runs with the default
    found = {s.sensor_id: s.as_json() for s in check(ddb, tables, default=6).run().silent}

    # Then only 41 is silent by its registration, 5 whole hours ago; 42 and 43 are silent at once,
    # their hours unknown (as before); the one registered 2 h ago and the fresh fleet are not silent
    assert found[41] == {
        "sensor_id": 41,
        "last_report_hour": None,
        "silent_hours": 5,
        "threshold_hours": 3,
        "timezone": "UTC",
        "registered_at": "2024-11-03T07:20:00Z",
    }
    assert set(found) == {41, 42, 43}
    assert found[42]["silent_hours"] is None and found[42]["registered_at"] is None
    assert found[43]["silent_hours"] is None and found[43]["registered_at"] is None


def test_an_update_keeps_the_registration_time(ddb: Any, tables: Tables) -> None:
    registry = registry_at(ddb, tables)
    register(registry, 60, hours=3)

    later = registry_at(ddb, tables, NOW)
    later.update(60, lambda p: SensorProfile(60, "renamed", p.serial, p.timezone, silence_hours=4))

    assert later.get(60) == SensorProfile(
        60, "renamed", "serial-60", version=2, silence_hours=4, registered_at="2024-10-01T00:00:00Z"
    )


@pytest.mark.parametrize("fault", ["throttled", "a bug"])
def test_a_sensor_whose_reads_fail_is_named_unchecked_and_the_others_are_still_checked(
    ddb: Any, fleet: Tables, fault: str
) -> None:
    # Given the fleet, where every Query of sensor 7's partition fails (DynamoDB throttling past the
    # retries, or an error no code expects)
    def fail(params: dict[str, Any], **_: Any) -> None:
        if params.get("ExpressionAttributeValues", {}).get(":s") == {"N": "7"}:
            if fault == "a bug":
                raise RuntimeError("unexpected")
            error = {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}}
            raise ClientError(error, "Query")  # type: ignore[arg-type]

    ddb.meta.events.register("provide-client-params.dynamodb.Query", fail)

    # When the check runs, and GET /silence answers
    found = check(ddb, fleet, default=12).run()
    status, answer, _ = get(
        ApiService(table_name=fleet.table, client=ddb, silence=check(ddb, fleet, default=12)), "/silence"
    )

    # Then sensor 7 alone is left unchecked, named with the reason; the other silent sensors are found
    assert [u.sensor_id for u in found.unchecked] == [7]
    assert ("ProvisionedThroughputExceeded" if fault == "throttled" else "RuntimeError: unexpected") in found.unchecked[
        0
    ].reason
    assert [s.sensor_id for s in found.silent] == [1, 4, 5, 6]
    assert status == 200 and [s["sensor_id"] for s in answer["sensors"]] == [1, 4, 5, 6]
    assert [u["sensor_id"] for u in answer["unchecked"]] == [7]


def test_the_older_day_reads_run_several_at_once_and_answer_as_one_at_a_time(ddb: Any, tables: Tables) -> None:
    # Given 250 sensors (three pages) silent for days, some behind empty day items, a third of them
    # with their month's summary (the others' summaries missing: their Query finds them)
    for sensor in range(100, 350):
        profile = SensorProfile(
            sensor, f"s{sensor}", f"serial-{sensor}", silence_hours=6, registered_at="2024-10-01T00:00:00Z"
        )
        ddb.put_item(TableName=tables.table, Item=profile.item())
        day = f"2024-10-{10 + sensor % 10:02d}"
        put_day(ddb, tables, sensor, day, {f"{sensor % 24:02d}": 1})
        if sensor % 3 == 0:
            ddb.put_item(TableName=tables.table, Item=schema.summary_item(sensor, "2024-10", {day: 1}))
        for i, empty in enumerate(days_before("2024-10-29", sensor % 7)):
            put_empty(ddb, tables, sensor, empty, i)
    one_at_a_time = check(ddb, tables, default=None)
    one_at_a_time.days.workers = 1
    expected = one_at_a_time.run()

    # When the check runs with its workers, the first four older-day Querys held until four are in
    # flight together (a check that read one at a time would break the barrier: those sensors unchecked)
    together = threading.Barrier(4, timeout=60)
    held = itertools.count()

    def hold(params: dict[str, Any], **_: Any) -> None:
        if ":before" in params.get("ExpressionAttributeValues", {}) and next(held) < 4:
            together.wait()

    ddb.meta.events.register("provide-client-params.dynamodb.Query", hold)
    found = check(ddb, tables, default=None).run()

    # Then they ran together, and the answer is the one read one at a time, request for request
    assert found.unchecked == [] and not together.broken
    assert [s.as_json() for s in found.silent] == [s.as_json() for s in expected.silent]
    assert len(found.silent) == 250 and found.requests == expected.requests


def test_a_sensor_silent_for_days_is_found_from_its_month_summaries_without_a_query(ddb: Any, tables: Tables) -> None:
    # Given, as the pipeline leaves them, month summaries beside the day items: sensor 70 last reported
    # 2024-11-01 (this month), sensor 71 2024-10-20 (last month) behind empty day items, sensor 72
    # 2024-08-05 (past both months); and sensor 73, whose summary names 2024-10-28 where its day item
    # holds no count (a summary mended by hand), its real last report 2024-10-02
    registry = registry_at(ddb, tables)
    last = {70: "2024-11-01", 71: "2024-10-20", 72: "2024-08-05", 73: "2024-10-02"}
    for sensor, day in last.items():
        register(registry, sensor, hours=6)
        put_day(ddb, tables, sensor, day, {"10": 1})
        ddb.put_item(TableName=tables.table, Item=schema.summary_item(sensor, day[:7], {day: 1}))
    for i, day in enumerate(days_before("2024-11-03", 10)):
        put_empty(ddb, tables, 71, day, i)
    ddb.put_item(TableName=tables.table, Item=schema.summary_item(73, "2024-10", {"2024-10-02": 1, "2024-10-28": 2}))
    put_empty(ddb, tables, 73, "2024-10-28")
    queried: list[str] = []
    ddb.meta.events.register(
        "provide-client-params.dynamodb.Query",
        lambda params, **_: queried.append(params["ExpressionAttributeValues"].get(":s", {}).get("N", "index")),
    )

    # When the check runs
    found = {s.sensor_id: s.last_report_hour for s in check(ddb, tables, default=None).run().silent}

    # Then every sensor's last report is found, and only 72 and 73 needed a Query of their partition
    assert found == {sensor: f"{day}T10" for sensor, day in last.items()}
    assert sorted(queried) == ["72", "73", "index"]
