"""``sensor-digest silence`` and ``counts --hourly`` (cli/silence.py, cli/tables.py), and the profile's
``--silence-hours`` (cli/sensors.py), against the tables. Engine: DynamoDB Local (the session's).

The check runs on the real clock, so the day items are put relative to now: a sensor whose last
report was three hours ago, past its one-hour threshold, and one that reported this hour."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sensor_digest.store import schema
from tests.support.cli import invoke
from tests.support.tables import Tables


def put_hour(ddb: Any, tables: Tables, sensor: int, when: datetime, count: int) -> None:
    day, hour = when.strftime("%Y-%m-%d"), when.strftime("%H")
    ddb.put_item(TableName=tables.table, Item=schema.day_item(sensor, day, count, {hour: count}))


def register(tables: Tables, sensor: int, *extra: str) -> Any:
    where = ("--table", tables.table, "--ledger", tables.ledger)
    return invoke(
        "sensors",
        "register",
        "--sensor",
        str(sensor),
        "--name",
        f"s{sensor}",
        "--serial",
        f"S-{sensor}",
        *extra,
        *where,
    )


def test_silence_lists_a_sensor_past_its_threshold_with_the_hour_it_stopped(ddb: Any, tables: Tables) -> None:
    # Given a sensor silent for three hours (threshold 1), one that reported this hour (threshold 1),
    # and one past the stack's default (2) only
    now = datetime.now(UTC)
    stopped = now - timedelta(hours=3)
    assert register(tables, 1, "--silence-hours", "1").exit_code == 0
    assert register(tables, 2, "--silence-hours", "1").exit_code == 0
    assert register(tables, 3).exit_code == 0
    put_hour(ddb, tables, 1, stopped, 4)
    put_hour(ddb, tables, 2, now, 2)
    put_hour(ddb, tables, 3, stopped, 1)

    # When the check runs from the command line, without and with the stack's default threshold
    own = invoke("silence", "--table", tables.table, "--json")
    default = invoke("silence", "--table", tables.table, "--default-hours", "2", "--json")
    table = invoke("silence", "--table", tables.table)

    # Then the first lists sensor 1 alone, with the hour of its last report; the default adds sensor 3
    assert own.exit_code == 0 and default.exit_code == 0
    silent = json.loads(own.stdout)["sensors"]
    assert [s["sensor_id"] for s in silent] == [1]
    assert stopped.strftime("%Y-%m-%dT%H") in json.dumps(silent[0])
    assert sorted(s["sensor_id"] for s in json.loads(default.stdout)["sensors"]) == [1, 3]
    assert table.exit_code == 0 and "1 of 3 registered sensor(s) silent" in table.stdout
    hour = stopped.strftime("%H")
    span = f"{hour}:00\u2013{int(hour) + 1:02d}:00"
    assert f"last report in hour {stopped:%Y-%m-%d} {span} UTC, silent " in table.stdout
    assert ", threshold 1 h" in table.stdout


def test_counts_hourly_shows_the_hours_of_each_day(ddb: Any, tables: Tables) -> None:
    ddb.put_item(TableName=tables.table, Item=schema.day_item(7, "2024-05-01", 5, {"09": 2, "17": 3}))
    ddb.put_item(TableName=tables.table, Item=schema.day_item(7, "2024-05-02", 4))  # from before hours

    shown = invoke(
        "counts", "--sensor", "7", "--from", "2024-05-01", "--to", "2024-05-02", "--hourly", "--table", tables.table
    )
    as_json = invoke(
        "counts",
        "--sensor",
        "7",
        "--from",
        "2024-05-01",
        "--to",
        "2024-05-02",
        "--hourly",
        "--json",
        "--table",
        tables.table,
    )

    assert shown.exit_code == 0 and "2024-05-01" in shown.stdout
    answer = json.loads(as_json.stdout)
    assert answer["hours"] == {"2024-05-01": {"09": 2, "17": 3}, "2024-05-02": None}
    assert answer["days"] == {"2024-05-01": 5, "2024-05-02": 4} and answer["total"] == 9


def test_counts_hourly_names_the_zone_its_hours_are_in(ddb: Any, tables: Tables) -> None:
    # Given sensor 7 registered in Paris and sensor 8 not registered, each with a day of hours
    assert register(tables, 7, "--timezone", "Europe/Paris").exit_code == 0
    for sensor in (7, 8):
        ddb.put_item(TableName=tables.table, Item=schema.day_item(sensor, "2024-05-01", 2, {"09": 2}))
    span = ("--from", "2024-05-01", "--to", "2024-05-01", "--hourly", "--table", tables.table)

    # When their hours are asked, the digest zone given as Tokyo
    paris = invoke("counts", "--sensor", "7", *span, "--timezone", "Asia/Tokyo")
    tokyo = invoke("counts", "--sensor", "8", *span, "--timezone", "Asia/Tokyo", "--json")
    utc = invoke("counts", "--sensor", "8", *span)
    wrong = invoke("counts", "--sensor", "8", *span, "--timezone", "Mars/Olympus")

    # Then each names its zone: the registered one, else the digest zone (UTC unless given)
    assert "by hour of its day in Europe/Paris (its registered zone)" in paris.stdout
    assert json.loads(tokyo.stdout)["timezone"] == "Asia/Tokyo"
    assert "by hour of its day in UTC (not registered: the digest zone, --timezone)" in utc.stdout
    assert wrong.exit_code == 2 and "--timezone" in wrong.output


@pytest.mark.parametrize("hours", ["0", "721", "-1", "x"])
def test_a_threshold_out_of_range_is_refused_in_one_line(tables: Tables, hours: str) -> None:
    refused = register(tables, 9, "--silence-hours", hours)
    silence = invoke("silence", "--table", tables.table, "--default-hours", hours)

    assert refused.exit_code != 0 and "Traceback" not in refused.output
    assert silence.exit_code == 2 and "--default-hours" in silence.output
