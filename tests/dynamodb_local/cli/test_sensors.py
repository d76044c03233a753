"""``sensor-digest sensors``: the registry from the command line (cli/sensors.py).

Engines: DynamoDB Local (the session's engine); SQS is the in-process broker for ``demo`` and moto's
server for the running local pipeline (``running``, tests/dynamodb_local/cli/conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest

from sensor_digest_tools.cli import output
from sensor_digest_tools.cli.app import app
from sensor_digest_tools.local.pipeline import LocalPipeline
from sensor_digest_tools.ops.targets import Target, save_local
from tests.support.cli import invoke, runner
from tests.support.faults import FaultyClient
from tests.support.tables import Tables


def test_sensors_delete_shows_the_profile_and_asks_first_and_a_dry_run_deletes_nothing(
    tables: Tables, ddb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = ("--table", tables.table, "--ledger", tables.ledger)
    for sensor, serial in (("9", "SN-9"), ("10", "SN-10")):
        assert (
            invoke("sensors", "register", "--sensor", sensor, "--name", "roof", "--serial", serial, *where).exit_code
            == 0
        )
    # sensor 10's serial has a sentinel that names another sensor (made by hand): deleting 10 leaves it
    ddb.put_item(TableName=tables.ledger, Item={"pk": {"S": "SERIAL#SN-10"}, "SensorId": {"N": "11"}})

    scripted = invoke("sensors", "delete", "--sensor", "9", *where)
    dry = invoke("sensors", "delete", "--sensor", "9", "--dry-run", *where)
    dry_held = invoke("sensors", "delete", "--sensor", "10", "--dry-run", *where)
    monkeypatch.setattr(output, "stdin_is_terminal", lambda: True)
    declined = runner.invoke(app, ["sensors", "delete", "--sensor", "9", *where], input="n\n")
    kept = invoke("sensors", "show", "--sensor", "9", *where)
    agreed = runner.invoke(app, ["sensors", "delete", "--sensor", "9", *where], input="y\n")
    gone = invoke("sensors", "show", "--sensor", "9", *where)
    dry_missing = invoke("sensors", "delete", "--sensor", "9", "--dry-run", *where)

    assert (scripted.exit_code, scripted.stdout) == (1, "")
    assert "error: not confirmed: delete sensor 9; " in scripted.stderr and "give --yes" in scripted.stderr
    assert dry.exit_code == 0 and "roof" in dry.stdout and "SN-9" in dry.stdout
    assert dry.stdout.endswith("would delete sensor 9; serial 'SN-9' would be free again; dry run, nothing deleted\n")
    assert dry_held.stdout.endswith(
        "would delete sensor 10; serial 'SN-10' stays taken: its sentinel names sensor 11, not 10; "
        "dry run, nothing deleted\n"
    )
    assert declined.exit_code == 1 and "roof" in declined.stderr and "SN-9" in declined.stderr
    assert "delete sensor 9 (serial 'SN-9' would be free again)? [y/N]" in declined.stderr
    assert kept.exit_code == 0
    assert agreed.exit_code == 0 and agreed.stdout.endswith("deleted sensor 9 (serial 'SN-9' is free again)\n")
    assert gone.exit_code == 1
    assert (dry_missing.exit_code, dry_missing.stderr) == (1, "error: sensor 9 is not registered\n")


def test_the_sensors_commands_manage_the_registry(running: LocalPipeline) -> None:
    save_local(running.target)

    registered = invoke(
        "sensors", "register", "--sensor", "501", "--name", "roof", "--serial", "CLI-501", "--timezone", "Asia/Tokyo"
    )
    taken = invoke("sensors", "register", "--sensor", "502", "--name", "other", "--serial", "CLI-501")
    updated = invoke("sensors", "update", "--sensor", "501", "--serial", "CLI-501B")
    shown = invoke("sensors", "show", "--sensor", "501")
    listed = invoke("sensors", "list")
    deleted = invoke("sensors", "delete", "--sensor", "501", "--yes")
    gone = invoke("sensors", "show", "--sensor", "501")
    bad_zone = invoke("sensors", "register", "--sensor", "503", "--name", "z", "--serial", "Z", "--timezone", "Nowhere")

    assert registered.exit_code == 0 and "Asia/Tokyo" in registered.output
    assert taken.exit_code == 1 and "serial 'CLI-501' already belongs to another sensor" in taken.output
    assert updated.exit_code == 0 and "CLI-501B" in updated.output and "│ 2 " in updated.output
    assert shown.exit_code == 0 and "CLI-501B" in shown.output
    assert listed.exit_code == 0 and "CLI-501B" in listed.output
    assert deleted.exit_code == 0 and "serial 'CLI-501B' is free again" in deleted.output
    assert gone.exit_code == 1 and "sensor 501 is not registered" in gone.output
    assert bad_zone.exit_code == 1 and "not an IANA time zone" in bad_zone.output


def test_a_dynamodb_fault_or_a_busy_registry_reaches_the_command_line_as_one_line(
    ddb: Any, tables: Tables, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given every client of the command line behind the fault layer: throttled after botocore's
    # retries (a whole-call fault), or cancelled for throttling every time (nothing written)
    fault = {"operation": "transact_write_items", "fault": "throttle"}
    real = Target.dynamodb

    def faulty(target: Target) -> Any:
        return FaultyClient(inner=real(target), rule=lambda op, _: fault["fault"] if op == fault["operation"] else None)

    monkeypatch.setattr(Target, "dynamodb", faulty)
    where = ("--table", tables.table, "--ledger", tables.ledger)
    register = ("sensors", "register", "--sensor", "1", "--name", "a", "--serial", "SN-1", *where)

    throttled = invoke(*register)
    fault["fault"] = "cancel:ThrottlingError@1"
    busy = invoke(*register)
    fault.update(operation="update_item", fault="throttle")  # the rebuild's element writes
    ddb.put_item(
        TableName=tables.table, Item={"SensorId": {"N": "1"}, "Date": {"S": "2024-05-01"}, "DataCount": {"N": "3"}}
    )
    rebuild = invoke("summary", "rebuild", "--sensor", "1", "--table", tables.table)

    assert (throttled.exit_code, throttled.output) == (
        1,
        "error: TransactWriteItems failed (retryable): ProvisionedThroughputExceededException\n",
    )
    assert busy.exit_code == 1 and busy.output.count("\n") == 1
    assert busy.output.startswith("error: registering sensor 1: none of 8 attempts committed")
    assert busy.output.endswith("(ThrottlingError); nothing was written, try again\n")
    assert rebuild.exit_code == 1  # the sensor that stopped is named, in one line
    assert rebuild.output.endswith(
        "error: sensor 1: UpdateItem failed (retryable): ProvisionedThroughputExceededException\n"
    )


def test_names_and_serials_are_shown_as_text_never_as_markup(tables: Tables) -> None:
    where = ("--table", tables.table, "--ledger", tables.ledger)

    name, serial = "[bold]roof[/bold]", "[/x]"  # markup, or a closing tag that Rich refuses

    registered = invoke("sensors", "register", "--sensor", "1", "--name", name, "--serial", serial, *where)
    taken = invoke("sensors", "register", "--sensor", "2", "--name", "b", "--serial", "[/x]", *where)
    listed = invoke("sensors", "list", *where)
    deleted = invoke("sensors", "delete", "--sensor", "1", "--yes", *where)

    assert registered.exit_code == 0 and "[bold]roof[/bold]" in registered.output and "[/x]" in registered.output
    assert taken.exit_code == 1 and "error: serial '[/x]' already belongs to another sensor" in taken.output
    assert listed.exit_code == 0 and "[bold]roof[/bold]" in listed.output
    assert deleted.exit_code == 0 and "serial '[/x]' is free again" in deleted.output
