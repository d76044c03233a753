"""What every command shares (cli/output.py, cli/render.py, cli/options.py): results on stdout, notes and
errors on stderr, ``--json`` for every read, data shown as text, help, a deployed stack read from its outputs.

Engines: DynamoDB Local (the session's engine); SQS is the in-process broker for ``demo`` and moto's
server for the running local pipeline (``running``, tests/dynamodb_local/cli/conftest.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from sensor_digest.store import reads
from sensor_digest_tools.local.pipeline import LocalPipeline
from sensor_digest_tools.ops.dlq import list_dead_letters
from sensor_digest_tools.ops.targets import save_local
from tests.support.cli import MARKUP, REASON, invoke, own_queues, wait_for
from tests.support.sqs import PASSTHROUGH
from tests.support.tables import Tables


def test_producer_and_operator_text_is_shown_as_data_never_as_markup_or_terminal_codes(
    running: LocalPipeline,
) -> None:
    # Given a dead letter whose body (not JSON: kept as sent) carries Rich markup, an 8-bit CSI
    # (U+009B, which SQS accepts and some terminals obey) and a right-to-left override, and a
    # sensor registered with markup in its name and serial
    save_local(running.target)
    sqs = running.target.sqs()
    body = f"{MARKUP} \x9b2J \u202eevil"
    sent = sqs.send_message(QueueUrl=running.target.queue_url, MessageBody=body)["MessageId"]
    wait_for(lambda: any(d.source_message_id == sent for d in list_dead_letters(sqs, str(running.target.dlq_url))))
    registered = invoke("sensors", "register", "--sensor", "777", "--name", MARKUP, "--serial", "[/x]777")

    # When the operator looks at them
    listed = invoke("dlq", "list")
    shown = invoke("sensors", "show", "--sensor", "777")
    every = invoke("sensors", "list")
    deleted = invoke("sensors", "delete", "--sensor", "777", "--yes")

    # Then every command ends normally and shows the text as it is, its control characters escaped
    for result in (registered, listed, shown, every, deleted):
        assert result.exit_code == 0, result.output
        assert "\x9b" not in result.output and "\u202e" not in result.output
    assert "[/x]" in listed.output and "[link=https://evil.example]click[/link]" in listed.output
    assert "[conceal]hidden[/conceal]" in listed.output and ":smile:" in listed.output
    assert "\\x9b2J" in listed.output and "\\u202eevil" in listed.output
    assert "[link=https://evil.example]click[/link]" in shown.output and "[/x]777" in every.output
    assert "serial '[/x]777' is free again" in deleted.output


def test_every_read_command_answers_json_whole_and_tables_never_cut_a_cell(
    running: LocalPipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_local(running.target)
    sqs, ddb, table = running.target.sqs(), running.target.dynamodb(), str(running.target.table)
    for day, n in (("2024-06-01", 2), ("2024-06-02", 5)):
        sent = invoke("send", "--sensor", "46", "--count", str(n), "--timestamp", f"{day}T12:00:00Z")
        assert sent.exit_code == 0, sent.output
    poison = json.dumps({"sensor_id": "forty-six", "note": "x" * 300})
    poison_id = sqs.send_message(QueueUrl=running.target.queue_url, MessageBody=poison)["MessageId"]
    wait_for(lambda: len(reads.summary_months(ddb, table, 46).get("2024-06", {})) == 2)
    wait_for(lambda: any(d.source_message_id == poison_id for d in list_dead_letters(sqs, str(running.target.dlq_url))))

    counts = json.loads(
        invoke("counts", "--sensor", "46", "--from", "2024-06-01", "--to", "2024-06-30", "--json").output
    )
    summary = json.loads(invoke("summary", "--sensor", "46", "--json").output)
    letters = json.loads(invoke("dlq", "list", "--json").output)
    monkeypatch.setenv("COLUMNS", "60")  # a narrow terminal
    narrow = invoke("dlq", "list", "--full")

    assert counts == {
        "sensor_id": 46,
        "from": "2024-06-01",
        "to": "2024-06-30",
        "days": {"2024-06-01": 2, "2024-06-02": 5},
        "total": 7,
    }
    assert summary == {"sensor_id": 46, "months": {"2024-06": {"2024-06-01": 2, "2024-06-02": 5}}}
    kept = next(d for d in letters if d["source_message_id"] == poison_id)
    assert kept["body"] == poison and kept["error"] == 'sensor_id must be an integer, got string "forty-six"'
    assert narrow.exit_code == 0 and "…" not in narrow.output


def test_results_go_to_stdout_and_notes_and_errors_to_stderr(running: LocalPipeline) -> None:
    save_local(running.target)
    running.target.dynamodb().put_item(
        TableName=str(running.target.table),
        Item={"SensorId": {"N": "4801"}, "Date": {"S": "2024-07-01"}, "DataCount": {"N": "4"}},
    )
    days = ("--from", "2024-07-01", "--to", "2024-07-31")

    as_json = invoke("counts", "--sensor", "4801", *days, "--json")
    # as a user meets it: `sensor-digest counts ... --json 2>/dev/null | jq`
    process = subprocess.run(
        [str(Path(sys.executable).with_name("sensor-digest")), "counts", "--sensor", "4801", *days, "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    no_days = invoke("counts", "--sensor", "4802", *days)
    no_summary = invoke("summary", "--sensor", "4802")
    no_table = invoke("counts", "--sensor", "4801", *days, "--table", "NoSuchTable", "--json")

    expected = {"sensor_id": 4801, "from": "2024-07-01", "to": "2024-07-31", "days": {"2024-07-01": 4}, "total": 4}
    assert (as_json.exit_code, json.loads(as_json.stdout), as_json.stderr) == (0, expected, "")
    assert (process.returncode, json.loads(process.stdout), process.stderr) == (0, expected, "")
    assert (no_days.exit_code, no_days.stdout) == (0, "")
    assert no_days.stderr == "sensor 4802 has no day counts from 2024-07-01 to 2024-07-31\n"
    assert (no_summary.exit_code, no_summary.stdout, no_summary.stderr) == (0, "", "sensor 4802 has no summary yet\n")
    assert (no_table.exit_code, no_table.stdout) == (1, "")
    assert no_table.stderr.startswith("error: table not found") and no_table.stderr.count("\n") == 1


def test_json_output_writes_names_and_bodies_as_themselves(running: LocalPipeline, tables: Tables) -> None:
    sqs, _, dlq = own_queues(running)
    body = '{"sensor_id": "Zürich", "note": "東京 ✓ \u202eevil"}'
    sqs.send_message(QueueUrl=dlq, MessageBody=body, MessageAttributes=REASON)
    where = ("--table", tables.table, "--ledger", tables.ledger)
    registered = invoke("sensors", "register", "--sensor", "3", "--name", "Zürich 東京 ✓", "--serial", "SN-ü", *where)

    shown = invoke("sensors", "show", "--sensor", "3", "--json", *where)
    letters = invoke("dlq", "list", "--dlq-url", dlq, "--json")

    assert registered.exit_code == 0, registered.output
    assert '"name": "Zürich 東京 ✓"' in shown.stdout and '"serial": "SN-ü"' in shown.stdout
    assert json.loads(shown.stdout)["name"] == "Zürich 東京 ✓"
    # the body as itself, but for the right-to-left override, which would reorder the terminal's line
    assert '\\"Zürich\\", \\"note\\": \\"東京 ✓ \\u202eevil' in letters.stdout and "\u202e" not in letters.stdout
    assert [letter["body"] for letter in json.loads(letters.stdout)] == [body]


def test_the_commands_read_a_deployed_stack_from_its_outputs(running: LocalPipeline) -> None:
    template = {
        "Resources": {"Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
        "Outputs": {
            "TableName": {"Value": str(running.target.table)},
            "LedgerTableName": {"Value": str(running.target.ledger)},
            "QueueUrl": {"Value": "https://sqs.us-east-1.amazonaws.com/000000000000/q"},
            "DeadLetterQueueUrl": {"Value": "https://sqs.us-east-1.amazonaws.com/000000000000/dlq"},
        },
    }
    running.target.dynamodb().put_item(
        TableName=str(running.target.table),
        Item={"SensorId": {"N": "77"}, "Date": {"S": "2024-06-01"}, "DataCount": {"N": "12"}},
    )
    # Leaving mock_aws resets moto's backends, which the running pipeline's SQS server shares:
    # the tests that send to its queue come before this one.
    with mock_aws(config=PASSTHROUGH):  # type: ignore[arg-type]
        boto3.client("cloudformation", region_name="us-east-1").create_stack(
            StackName="SensorDigestTest", TemplateBody=json.dumps(template)
        )
        found = invoke(
            "counts",
            "--stack",
            "SensorDigestTest",
            "--region",
            "us-east-1",
            "--sensor",
            "77",
            "--from",
            "2024-06-01",
            "--to",
            "2024-06-30",
        )
        missing = invoke(
            "counts",
            "--stack",
            "NoSuchStack",
            "--region",
            "us-east-1",
            "--sensor",
            "1",
            "--from",
            "2024-06-01",
            "--to",
            "2024-06-30",
        )

    assert found.exit_code == 0 and re.search(r"│ 2024-06-01 +│ +12 │", found.output)
    assert missing.exit_code == 1 and "stack 'NoSuchStack' does not exist" in missing.output


def test_without_a_pipeline_the_commands_say_how_to_get_one() -> None:
    result = invoke("summary", "--sensor", "1")
    assert result.exit_code == 1
    assert "start the local one with `sensor-digest up`" in result.output


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["demo"],
        ["up"],
        ["send"],
        ["counts"],
        ["summary"],
        ["dlq"],
        ["dlq", "list"],
        ["dlq", "redrive"],
        ["dlq", "stamp"],
        ["sensors"],
        ["sensors", "register"],
        ["sensors", "update"],
        ["sensors", "show"],
        ["sensors", "list"],
        ["sensors", "delete"],
    ],
)
def test_every_command_has_help(command: list[str]) -> None:
    result = invoke(*command, "--help")
    assert result.exit_code == 0
    assert "Usage" in result.output


@pytest.mark.parametrize("region", ["", "eu-west-1\n", "eu_west_1", "EU-WEST-1"])
def test_a_region_that_is_no_region_name_is_refused_in_one_line(region: str) -> None:
    # found in review: an empty region or one with a newline gave botocore's traceback
    result = invoke("counts", "--sensor", "1", "--from", "2024-01-01", "--to", "2024-01-02", "--region", region)

    assert result.exit_code == 2
    assert "is no AWS region name (like eu-west-1)" in result.output
    assert "Traceback" not in result.output
