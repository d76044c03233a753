"""``sensor-digest counts``, ``summary`` and ``summary rebuild``: reading the tables (cli/tables.py).

Engines: DynamoDB Local (the session's engine); SQS is the in-process broker for ``demo`` and moto's
server for the running local pipeline (``running``, tests/dynamodb_local/cli/conftest.py)."""

from __future__ import annotations

import re

import pytest

from sensor_digest.store import reads
from sensor_digest_tools.aws.dynamodb_local import free_port
from sensor_digest_tools.local.pipeline import LocalPipeline
from sensor_digest_tools.ops.targets import save_local
from tests.support.cli import invoke, wait_for


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
