"""``sensor-digest demo``, ``up`` and ``env``: the local pipeline from the command line (cli/local.py).

Engines: DynamoDB Local (the session's engine); SQS is the in-process broker for ``demo`` and moto's
server for the running local pipeline (``running``, tests/dynamodb_local/cli/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

from sensor_digest_tools.ops.targets import Target, save_local
from tests.support.cli import invoke


def test_the_demo_runs_the_whole_pipeline_and_reports_exact_counts(ddb_endpoint: str) -> None:
    result = invoke("demo", "--messages", "400", "--sensors", "6", "--poison-rate", "0.05", "--fault-rate", "0.05")

    assert result.exit_code == 0, result.output
    assert "PASS every day count equals the truth" in result.output
    assert "PASS every poison message is in the DLQ with its reason" in result.output
    assert "PASS every reading's statistics read back through the read API equal the truth" in result.output
    assert "exact" in result.output


def test_the_demo_fails_when_counts_are_wrong(ddb_endpoint: str) -> None:
    # at-least-once with many duplicate deliveries overcounts: the demo must see it and exit non-zero
    result = invoke("demo", "--messages", "200", "--sensors", "3", "--duplicate-rate", "0.5", "--mode", "at-least-once")

    assert result.exit_code == 1
    assert "FAIL every day count equals the truth" in result.output
    assert "FAIL every reading's statistics read back through the read API equal the truth" in result.output
    assert "readings: sensor " in result.output  # the first differences, named
    assert "counts are wrong" in result.output
    # while the summary path, which follows the day items whatever they hold, is not blamed
    assert "PASS every summary equals its day items" in result.output


def test_the_demo_shows_its_progress_on_stderr_and_its_report_on_stdout(ddb_endpoint: str) -> None:
    result = invoke("demo", "--messages", "60", "--sensors", "3", "--poison-rate", "0", "--fault-rate", "0")

    assert result.exit_code == 0, result.output
    assert "messages handled" in result.stderr and "messages handled" not in result.stdout
    assert "PASS every day count equals the truth" in result.stdout and "exact" in result.stdout


def test_up_and_demo_refuse_a_delivery_mode_that_does_not_exist() -> None:
    for command in ("up", "demo"):
        result = (
            invoke(command, "--mode", "foo", "--duration", "1") if command == "up" else invoke(command, "--mode", "foo")
        )

        assert result.exit_code == 2
        assert "'foo' is not one of 'exactly-once', 'at-least-once'" in result.output


def test_the_state_file_names_the_local_pipeline(state_file: Path) -> None:
    save_local(Target(table="T", queue_url="Q", dynamodb_endpoint="http://127.0.0.1:1", origin="local pipeline"))
    assert json.loads(state_file.read_text())["table"] == "T"


def test_up_refuses_a_ledger_mode_that_does_not_apply_as_the_stack_does() -> None:
    result = invoke("up", "--mode", "at-least-once", "--ledger-mode", "per-message", "--duration", "1")

    assert result.exit_code == 2
    assert "does not apply" in result.output and "at-least-once" in result.output
