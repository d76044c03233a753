"""``sensor-digest summary rebuild``: summary items recomputed from the day items (DynamoDB Local)."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from typer.testing import CliRunner

from sensor_digest.store.reads import summary_months
from sensor_digest.summary import SummaryWriter
from sensor_digest_tools.cli.app import app
from sensor_digest_tools.ops.rebuild import rebuild
from tests.support.faults import FaultyClient
from tests.support.tables import Tables, by_sensor, day_counts, scan_all, summaries


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


def test_rebuild_counts_no_sensor_whose_day_items_are_all_empty(ddb: Any, tables: Tables) -> None:
    # Given sensor 1 with a day, and sensor 3 with day items without DataCount only (a resent report's
    # identity left them: no report)
    put_day(ddb, tables.table, 1, "2024-01-31", 3)
    for day in ("2024-02-01", "2024-02-02"):
        ddb.put_item(TableName=tables.table, Item={"SensorId": {"N": "3"}, "Date": {"S": day}, "IdPage": {"N": "0"}})

    report = rebuild(ddb, tables.table)

    assert (report.sensors, report.days, report.written) == (1, 1, 1)
    assert summaries(ddb, tables.table) == {1: {"2024-01-31": 3}}


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


# -- --exact: each month item set to exactly its day items --------------------------------------


def no_sleep(seconds: float) -> None:
    """The exact rebuild's backoff, skipped: these tests bound its attempts by what they change."""


def raise_day(ddb: Any, table: str, sensor: int, day: str, by: int) -> int:
    """What ingest does to a day item (``ADD``, creating it when missing): its new count."""
    while True:
        try:
            response = ddb.update_item(
                TableName=table,
                Key={"SensorId": {"N": str(sensor)}, "Date": {"S": day}},
                UpdateExpression="ADD #n :by",
                ExpressionAttributeNames={"#n": "DataCount"},
                ExpressionAttributeValues={":by": {"N": str(by)}},
                ReturnValues="UPDATED_NEW",
            )
            return int(response["Attributes"]["DataCount"]["N"])
        except ClientError as exc:  # a transaction of the rebuild holds the item: try again, as ingest would
            if exc.response["Error"]["Code"] != "TransactionConflictException":
                raise


def test_exact_rebuild_lowers_overcounts_removes_what_has_no_day_item_and_adds_what_is_missing(
    ddb: Any, tables: Tables
) -> None:
    # Given day items, and month items that overcount one day, hold days without a day item (one
    # in a month without any day item), a day of another month, a key that is no day, and lack two days
    for day, count in (("2024-05-01", 5), ("2024-05-02", 6), ("2024-05-04", 2), ("2024-06-01", 1)):
        put_day(ddb, tables.table, 3, day, count)
    put_summary(
        ddb,
        tables.table,
        3,
        "SUMMARY#2024-05",
        {"2024-05-01": 9, "2024-05-02": 6, "2024-05-03": 4, "2024-06-01": 1, "not a day": 2},
    )
    put_summary(ddb, tables.table, 3, "SUMMARY#2024-04", {"2024-04-10": 3})

    report = rebuild(ddb, tables.table, [3], exact=True)
    again = rebuild(ddb, tables.table, [3], exact=True)

    assert summary_months(ddb, tables.table, 3) == {
        "2024-04": {},
        "2024-05": {"2024-05-01": 5, "2024-05-02": 6, "2024-05-04": 2},
        "2024-06": {"2024-06-01": 1},
    }
    assert summaries(ddb, tables.table) == by_sensor(day_counts(ddb, tables.table))
    assert (report.lowered, report.removed, report.written, report.already_current) == (1, 4, 2, 1)
    assert (again.lowered, again.removed, again.written, again.already_current) == (0, 0, 0, 4)


def test_a_whole_month_of_overcounts_is_lowered_in_one_transaction_of_32_actions(ddb: Any, tables: Tables) -> None:
    days = {f"2024-01-{d:02d}": d for d in range(1, 32)}
    for day, count in days.items():
        put_day(ddb, tables.table, 5, day, count)
    put_summary(ddb, tables.table, 5, "SUMMARY#2024-01", {day: count + 1000 for day, count in days.items()})
    sizes: list[int] = []

    def count_actions(operation: str, kwargs: dict[str, Any]) -> None:
        if operation == "transact_write_items":
            sizes.append(len(kwargs["TransactItems"]))

    report = rebuild(FaultyClient(inner=ddb, rule=count_actions), tables.table, [5], exact=True)

    assert sizes == [32]  # one Update and 31 ConditionChecks, accepted by DynamoDB Local
    assert summaries(ddb, tables.table) == {5: days}
    assert report.lowered == 31


@pytest.mark.parametrize(
    ("day", "by"),
    [
        ("2024-05-01", 1),  # raised to 6 while the element holds 9: its record is found stale
        ("2024-05-01", 10),  # raised to 15: its record is applied, the element rises to 15
        ("2024-05-03", 1),  # the day item of an element about to be removed is created
    ],
)
def test_a_day_raised_between_the_reads_and_the_write_is_never_lost(
    ddb: Any, tables: Tables, day: str, by: int
) -> None:
    # Given an overcounted element and one without a day item
    put_day(ddb, tables.table, 3, "2024-05-01", 5)
    put_summary(ddb, tables.table, 3, "SUMMARY#2024-05", {"2024-05-01": 9, "2024-05-03": 4})
    writer = SummaryWriter(table_name=tables.table, client=ddb)
    raised: list[int] = []

    # When, after the rebuild's reads and before its first transaction, the day is raised and the
    # summary path handles that day's record with its own upsert
    def raise_before_the_first_write(operation: str, kwargs: dict[str, Any]) -> None:
        if operation == "transact_write_items" and not raised:
            raised.append(raise_day(ddb, tables.table, 3, day, by))
            writer.upsert(3, day, raised[0])

    report = rebuild(FaultyClient(inner=ddb, rule=raise_before_the_first_write), tables.table, [3], exact=True)

    # Then the first transaction's check on that day refused it, the month was read and planned
    # again, and the month item equals its day items
    assert summaries(ddb, tables.table) == by_sensor(day_counts(ddb, tables.table))
    assert summary_months(ddb, tables.table, 3)["2024-05"][day] == raised[0]
    assert report.retries == 1


def test_a_cancelled_exact_write_is_retried_and_one_cancelled_every_time_is_a_fault(ddb: Any, tables: Tables) -> None:
    put_day(ddb, tables.table, 3, "2024-05-01", 5)
    put_summary(ddb, tables.table, 3, "SUMMARY#2024-05", {"2024-05-01": 9})
    faults = ["cancel:TransactionConflict@1", "cancel:ThrottlingError@0"]

    def cancelled(operation: str, kwargs: dict[str, Any]) -> str | None:
        return faults.pop(0) if operation == "transact_write_items" and faults else None

    def always(operation: str, kwargs: dict[str, Any]) -> str | None:
        return "cancel:TransactionConflict@0" if operation == "transact_write_items" else None

    given_up = rebuild(
        FaultyClient(inner=ddb, rule=always), tables.table, [3], exact=True, max_attempts=4, sleep=no_sleep
    )
    [failure] = given_up.failed  # named, one line per sensor; the other sensors would go on
    assert re.fullmatch(
        r"sensor 3: sensor 3, month 2024-05: .*\(4 attempts\); what was written stands, run it again", failure
    )
    unchanged = summaries(ddb, tables.table)
    report = rebuild(FaultyClient(inner=ddb, rule=cancelled), tables.table, [3], exact=True, sleep=no_sleep)

    assert unchanged == {3: {"2024-05-01": 9}}  # a cancelled transaction wrote nothing
    assert (report.retries, report.lowered) == (2, 1)
    assert summaries(ddb, tables.table) == {3: {"2024-05-01": 5}}


def test_exact_rebuild_while_a_writer_raises_days_ends_with_every_month_equal_to_its_day_items(
    ddb: Any, tables: Tables
) -> None:
    # Given two months whose elements overcount their days, and a day without a day item
    days = [f"2024-05-{d:02d}" for d in range(1, 9)] + [f"2024-06-{d:02d}" for d in range(1, 5)]
    for day in days:
        put_day(ddb, tables.table, 9, day, 10)
    for month in ("2024-05", "2024-06"):
        overcounts = {day: 100 for day in days if day.startswith(month)}
        put_summary(ddb, tables.table, 9, f"SUMMARY#{month}", {**overcounts, f"{month}-28": 7})
    writer = SummaryWriter(table_name=tables.table, client=ddb)
    most = 150  # at most this many raises: fewer than the rebuild's attempts, each raise refusing one at most
    raised: list[str] = []
    started, stop = threading.Event(), threading.Event()

    # When a writer keeps raising those days, each raise followed by the summary path's own upsert
    # (found stale while the overcount stands), until the exact rebuild is done
    def writer_loop() -> None:
        while len(raised) < most and not stop.is_set():
            day = days[len(raised) % len(days)]
            writer.upsert(9, day, raise_day(ddb, tables.table, 9, day, 1))
            raised.append(day)
            started.set()

    thread = threading.Thread(target=writer_loop)
    thread.start()
    started.wait(timeout=60)
    try:
        report = rebuild(ddb, tables.table, [9], exact=True, max_attempts=most + 2, sleep=no_sleep)
    finally:
        stop.set()
        thread.join()

    # Then every month item equals its day items, every raise counted
    assert summaries(ddb, tables.table) == by_sensor(day_counts(ddb, tables.table))
    assert sum(day_counts(ddb, tables.table).values()) == 10 * len(days) + len(raised)
    assert (report.lowered, report.removed) == (len(days), 2)  # the overcounts outran every raise


def test_the_command_rebuilds_exactly_and_still_migrates_the_legacy_single_summary_item(
    ddb: Any, tables: Tables, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(tmp_path / "no-local-pipeline.json"))  # never a running `up`
    monkeypatch.setenv("COLUMNS", "200")
    # Given the legacy item, and a month item that overcounts (the day was corrected by hand)
    put_day(ddb, tables.table, 7, "2024-03-01", 5)
    put_day(ddb, tables.table, 7, "2024-04-02", 2)
    put_summary(ddb, tables.table, 7, "SUMMARY", {"2024-03-01": 4, "2024-04-02": 2})
    put_summary(ddb, tables.table, 7, "SUMMARY#2024-04", {"2024-04-02": 3})

    result = CliRunner().invoke(app, ["summary", "rebuild", "--exact", "--sensor", "7", "--table", tables.table])

    assert result.exit_code == 0, result.output
    assert "1 element(s) written, 1 lowered, 0 removed" in result.output
    assert "1 legacy SUMMARY item(s) migrated" in result.output
    keys = sorted(i["Date"]["S"] for i in scan_all(ddb, tables.table))
    assert keys == ["2024-03-01", "2024-04-02", "SUMMARY#2024-03", "SUMMARY#2024-04"]  # the legacy item is gone
    assert summaries(ddb, tables.table) == {7: {"2024-03-01": 5, "2024-04-02": 2}}
