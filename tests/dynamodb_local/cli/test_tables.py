"""``sensor-digest counts``, ``summary`` and ``summary rebuild``: reading the tables (cli/tables.py).

Engines: DynamoDB Local (the session's engine); SQS is the in-process broker for ``demo`` and moto's
server for the running local pipeline (``running``, tests/dynamodb_local/cli/conftest.py)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from sensor_digest.store import reads, schema
from sensor_digest_tools.aws.dynamodb_local import free_port
from sensor_digest_tools.local.pipeline import LocalPipeline
from sensor_digest_tools.ops.targets import save_local
from tests.support.cli import MARKUP, invoke, wait_for
from tests.support.tables import Tables


def test_send_counts_and_summary_act_on_the_running_local_pipeline(running: LocalPipeline) -> None:
    save_local(running.target)

    sent = invoke(
        "send",
        "--sensor",
        "41",
        "--count",
        "3",
        "--timestamp",
        "2024-05-01T10:00:00Z",
        "--repeat",
        "2",
        "--event-id",
        "cli",
    )
    ddb = running.target.dynamodb()
    wait_for(lambda: reads.summary_months(ddb, str(running.target.table), 41))
    counts = invoke("counts", "--sensor", "41", "--from", "2024-05-01", "--to", "2024-05-02")
    summary = invoke("summary", "--sensor", "41")

    assert sent.exit_code == 0 and "sent 2 report(s) for sensor 41" in sent.output
    assert counts.exit_code == 0 and re.search(r"│ 2024-05-01 +│ +6 │", counts.output)
    assert summary.exit_code == 0 and "2024-05-01" in summary.output


def test_bad_dates_are_refused_with_a_clear_error() -> None:
    bad = invoke("counts", "--sensor", "1", "--from", "2024-13-01", "--to", "2024-05-02", "--table", "t")
    backwards = invoke("counts", "--sensor", "1", "--from", "2024-05-02", "--to", "2024-05-01", "--table", "t")

    assert bad.exit_code == 2 and "is not a date (YYYY-MM-DD)" in bad.output
    assert backwards.exit_code == 2 and "is before --from" in backwards.output


def test_a_missing_engine_and_a_missing_table_are_named(ddb_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    missing_table = invoke("summary", "--sensor", "1", "--table", "NoSuchTable")
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", f"http://127.0.0.1:{free_port()}")
    no_engine = invoke("summary", "--sensor", "1", "--table", "SensorDigest")

    assert missing_table.exit_code == 1 and "table not found" in missing_table.output
    assert no_engine.exit_code == 1 and "nothing answers at" in no_engine.output


def test_counts_and_summary_of_a_sensor_without_data_agree_a_note_and_exit_code_0(running: LocalPipeline) -> None:
    save_local(running.target)

    counts = invoke("counts", "--sensor", "4999", "--from", "2024-05-01", "--to", "2024-05-02")
    summary = invoke("summary", "--sensor", "4999")

    assert (counts.exit_code, summary.exit_code) == (0, 0)
    assert "sensor 4999 has no day counts from 2024-05-01 to 2024-05-02" in counts.output
    assert "total" not in counts.output
    assert "sensor 4999 has no summary yet" in summary.output


def test_counts_hourly_says_when_a_days_hours_hold_only_some_of_its_reports_or_cannot_be_read(
    ddb: Any, tables: Tables
) -> None:
    # Given sensor 7's days: one whose hours hold 152 of its 173 reports (a rollback's previous release
    # counted the rest without hours), one whole, and one whose HourCounts has an hour no hour is
    put = [
        schema.day_item(7, "2024-05-01", 173, {"09": 150, "10": 2}),
        schema.day_item(7, "2024-05-02", 4, {"11": 4}),
        {
            **schema.day_key(7, "2024-05-03"),
            schema.DATA_COUNT: {"N": "2"},
            schema.HOUR_COUNTS: {"M": {MARKUP: {"N": "2"}}},
        },
    ]
    for item in put:
        ddb.put_item(TableName=tables.table, Item=item)
    where = ("--sensor", "7", "--from", "2024-05-01", "--to", "2024-05-03", "--hourly", "--table", tables.table)

    table = invoke("counts", *where)
    answer = json.loads(invoke("counts", *where, "--json").stdout)

    # Then the table says the first day's hours are not the whole day, and what is wrong with the third's
    text = " ".join(table.stdout.split())
    assert table.exit_code == 0, table.output
    assert "(hours hold 152 of 173 reports: some counted before hours were kept)" in text
    assert text.count("hours hold") == 1
    assert "(hours cannot be read: item SensorId '7', Date '2024-05-03': HourCounts element" in text
    assert "(no hours: counted before hours were kept)" not in text
    # And --json says it as the read API's complete does
    assert answer["complete"] == {"2024-05-01": False, "2024-05-02": True, "2024-05-03": False}
