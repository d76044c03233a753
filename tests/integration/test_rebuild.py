"""``sensor-digest summary rebuild``: summary items recomputed from the day items (DynamoDB Local)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sensor_digest_cli.app import app
from sensor_digest_ops.rebuild import rebuild
from tests.conftest import Tables
from tests.helpers import by_sensor, day_counts, scan_all, summaries

pytestmark = pytest.mark.dynamodb_local


def put_day(ddb: Any, table: str, sensor: int, day: str, count: int) -> None:
    ddb.put_item(
        TableName=table, Item={"SensorId": {"N": str(sensor)}, "Date": {"S": day}, "DataCount": {"N": str(count)}}
    )


def put_summary(ddb: Any, table: str, sensor: int, sort_key: str, daily: dict[str, int]) -> None:
    item = {"SensorId": {"N": str(sensor)}, "Date": {"S": sort_key}}
    ddb.put_item(TableName=table, Item={**item, "DailyCounts": {"M": {d: {"N": str(n)} for d, n in daily.items()}}})


def test_rebuild_writes_every_sensors_months_from_its_day_items(ddb: Any, tables: Tables) -> None:
    for sensor, day, count in ((1, "2024-01-31", 3), (1, "2024-02-01", 4), (2, "2023-12-31", 9), (2, "2024-01-01", 1)):
        put_day(ddb, tables.table, sensor, day, count)

    report = rebuild(ddb, tables.table)

    assert summaries(ddb, tables.table) == by_sensor(day_counts(ddb, tables.table))
    assert (report.sensors, report.days, report.written, len(report.months)) == (2, 4, 4, 4)
    assert rebuild(ddb, tables.table).written == 0  # a second run finds everything current


def test_rebuild_migrates_the_legacy_single_summary_item(ddb: Any, tables: Tables) -> None:
    # Given the item earlier versions wrote (one map for all days), out of date
    put_day(ddb, tables.table, 7, "2024-03-01", 5)
    put_day(ddb, tables.table, 7, "2024-04-02", 2)
    put_summary(ddb, tables.table, 7, "SUMMARY", {"2024-03-01": 4, "2024-04-02": 2})

    report = rebuild(ddb, tables.table, [7])

    keys = sorted(i["Date"]["S"] for i in scan_all(ddb, tables.table))
    assert keys == ["2024-03-01", "2024-04-02", "SUMMARY#2024-03", "SUMMARY#2024-04"]  # the legacy item is gone
    assert summaries(ddb, tables.table) == {7: {"2024-03-01": 5, "2024-04-02": 2}}
    assert report.legacy_removed == 1


def test_rebuild_never_moves_an_element_backwards(ddb: Any, tables: Tables) -> None:
    # Given a summary that the stream already moved past what rebuild reads (a count that grew
    # after the day item was read), and one that lags behind its day item
    put_day(ddb, tables.table, 3, "2024-05-01", 5)
    put_day(ddb, tables.table, 3, "2024-05-02", 6)
    put_summary(ddb, tables.table, 3, "SUMMARY#2024-05", {"2024-05-01": 7, "2024-05-02": 1})

    report = rebuild(ddb, tables.table, [3])

    assert summaries(ddb, tables.table) == {3: {"2024-05-01": 7, "2024-05-02": 6}}
    assert (report.written, report.already_current) == (1, 1)


def test_the_command_rebuilds_and_shows_a_range_of_months(
    ddb: Any, tables: Tables, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(tmp_path / "no-local-pipeline.json"))  # never a running `up`
    monkeypatch.setenv("COLUMNS", "200")
    for day, count in (("2024-01-15", 2), ("2024-02-15", 3), ("2024-03-15", 4)):
        put_day(ddb, tables.table, 11, day, count)
    runner = CliRunner()

    rebuilt = runner.invoke(app, ["summary", "rebuild", "--sensor", "11", "--table", tables.table])
    shown = runner.invoke(
        app, ["summary", "--sensor", "11", "--from", "2024-02", "--to", "2024-03", "--table", tables.table]
    )
    empty = runner.invoke(app, ["summary", "--sensor", "11", "--from", "2025-01", "--table", tables.table])
    bad = runner.invoke(app, ["summary", "--sensor", "11", "--from", "2024-13", "--table", tables.table])

    assert rebuilt.exit_code == 0 and "3 element(s) written" in rebuilt.output
    assert shown.exit_code == 0
    assert "2024-02-15" in shown.output and "2024-03-15" in shown.output and "2024-01-15" not in shown.output
    assert "2 month(s)" in shown.output
    assert empty.exit_code == 0 and "sensor 11 has no summary in that range yet" in empty.output
    assert bad.exit_code == 2 and "not a month" in bad.output
