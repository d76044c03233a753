"""The ``sensor-digest`` command line through Typer's test runner.

Engines: DynamoDB Local (the session's engine, reached through AWS_ENDPOINT_URL_DYNAMODB); SQS is
the in-process broker for ``demo`` and moto's server for a running local pipeline; ``--stack`` is
read from moto's CloudFormation.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws
from typer.testing import CliRunner

from sensor_digest.dead_letter_format import SOURCE_ID_ATTRIBUTE
from sensor_digest.store import reads
from sensor_digest_tools.aws.dynamodb_local import free_port
from sensor_digest_tools.cli import output
from sensor_digest_tools.cli.app import app
from sensor_digest_tools.local.pipeline import LocalPipeline, PipelineOptions
from sensor_digest_tools.ops.dlq import list_dead_letters, queue_depth, redrive
from sensor_digest_tools.ops.targets import Target, save_local
from tests.support.faults import FaultyClient
from tests.support.sqs import PASSTHROUGH
from tests.support.tables import Tables

pytestmark = pytest.mark.dynamodb_local
runner = CliRunner()


@pytest.fixture(autouse=True)
def state_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never touch a developer's running pipeline: the state file lives in the test's tmp dir."""
    path = tmp_path / "local-pipeline.json"
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(path))
    monkeypatch.setenv("COLUMNS", "200")  # tables unwrapped, so that assertions read whole cells
    return path


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def running(ddb_endpoint: str) -> Iterator[LocalPipeline]:
    """A local pipeline as `sensor-digest up` runs it: moto's SQS server, the session's DynamoDB Local."""
    # time_scale 0.005: the deployed visibility timeout of 200 s becomes 1 s
    pipeline = LocalPipeline(PipelineOptions(sqs="server", time_scale=0.005), engine_endpoint=ddb_endpoint)
    pipeline.start()
    yield pipeline
    pipeline.stop()


def wait_for(check: Any, seconds: float = 20) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_the_demo_runs_the_whole_pipeline_and_reports_exact_counts(ddb_endpoint: str) -> None:
    result = invoke("demo", "--messages", "400", "--sensors", "6", "--poison-rate", "0.05", "--fault-rate", "0.05")

    assert result.exit_code == 0, result.output
    assert "PASS every day count equals the truth" in result.output
    assert "PASS every poison message is in the DLQ with its reason" in result.output
    assert "exact" in result.output


def test_the_demo_fails_when_counts_are_wrong(ddb_endpoint: str) -> None:
    # at-least-once with many duplicate deliveries overcounts: the demo must see it and exit non-zero
    result = invoke("demo", "--messages", "200", "--sensors", "3", "--duplicate-rate", "0.5", "--mode", "at-least-once")

    assert result.exit_code == 1
    assert "FAIL every day count equals the truth" in result.output
    assert "counts are wrong" in result.output
    # while the summary path, which follows the day items whatever they hold, is not blamed
    assert "PASS every summary equals its day items" in result.output


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


def test_send_refuses_what_the_ingest_would_reject_before_it_reaches_for_the_queue() -> None:
    # A queue that nothing answers at: a send attempt would fail with "nothing answers"
    queue = f"http://127.0.0.1:{free_port()}/000000000000/nowhere"

    garbage = invoke("send", "--sensor", "43", "--timestamp", "garbage", "--queue-url", queue)
    too_many = invoke("send", "--sensor", "43", "--count", "5", "--event-id", "x" * 129, "--queue-url", queue)

    assert garbage.exit_code == 2
    assert "the ingest would reject this report: timestamp 'garbage' is not ISO-8601" in garbage.output
    assert too_many.exit_code == 2 and "event_id" in too_many.output
    assert "nothing answers" not in garbage.output + too_many.output


def test_send_takes_a_negative_epoch_as_a_number_and_sends_many_reports_in_batches(
    running: LocalPipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_local(running.target)
    table, ddb = str(running.target.table), running.target.dynamodb()
    operations: list[str] = []
    real_sqs = Target.sqs

    def recorded_sqs(target: Target) -> Any:
        client = real_sqs(target)
        client.meta.events.register("before-call.sqs", lambda model, **_: operations.append(model.name))
        return client

    monkeypatch.setattr(Target, "sqs", recorded_sqs)

    sent = invoke("send", "--sensor", "44", "--timestamp", "-5", "--repeat", "25", "--event-id", "neg")

    assert sent.exit_code == 0 and "sent 25 report(s) for sensor 44" in sent.output
    assert operations == ["SendMessageBatch"] * 3  # ten reports a request
    assert wait_for(lambda: dict(reads.sensor_days(ddb, table, 44, "1969-12-31", "1969-12-31")).get("1969-12-31") == 25)


def test_dlq_list_shows_reasons_and_redrive_moves_messages_back(running: LocalPipeline) -> None:
    save_local(running.target)
    sqs = running.target.sqs()
    sqs.send_message(QueueUrl=running.target.queue_url, MessageBody='{"sensor_id": "x"}')
    wait_for(lambda: list_dead_letters(sqs, str(running.target.dlq_url)))

    listed = invoke("dlq", "list")
    again = invoke("dlq", "list")  # listing leaves the messages in place
    redriven = invoke("dlq", "redrive", "--yes")

    assert listed.exit_code == 0 and "sensor_id must be an integer, got string" in listed.output
    assert "1 message(s)" in again.output
    assert redriven.exit_code == 0 and "redrove 1 message(s)" in redriven.output
    # rejected again on its way back through the pipeline, so it is kept again
    wait_for(lambda: list_dead_letters(sqs, str(running.target.dlq_url)))


MARKUP = "[/x] [link=https://evil.example]click[/link] [conceal]hidden[/conceal] :smile:"


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


REASON = {"error": {"DataType": "String", "StringValue": "sensor_id must be an integer, got string"}}


def own_queues(running: LocalPipeline) -> tuple[Any, str, str]:
    """A queue and a dead-letter queue of the test's own on the running pipeline's SQS server (no
    handler reads them): what a command did to them is all that is in them. The commands reach
    that server through the running pipeline's state."""
    save_local(running.target)
    sqs = running.target.sqs()
    name = f"CliOwn{uuid.uuid4().hex[:8]}"
    queue = sqs.create_queue(QueueName=name)["QueueUrl"]
    dlq = sqs.create_queue(QueueName=f"{name}DLQ")["QueueUrl"]
    return sqs, queue, dlq


def origins(sqs: Any, url: str) -> list[str]:
    """The origin (``sensor-digest.source_message_id``) of every message in a queue; they stay in flight."""
    got: list[str] = []
    while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]).get(
        "Messages"
    ):
        got += [m["MessageAttributes"][SOURCE_ID_ATTRIBUTE]["StringValue"] for m in batch]
    return got


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


def test_dlq_list_clips_long_bodies_unless_full_and_its_json_keeps_them_whole(running: LocalPipeline) -> None:
    sqs, _, dlq = own_queues(running)
    body = json.dumps({"sensor_id": "x", "note": "n" * 5_000})
    sqs.send_message(QueueUrl=dlq, MessageBody=body, MessageAttributes=REASON)

    listed = invoke("dlq", "list", "--dlq-url", dlq)
    full = invoke("dlq", "list", "--dlq-url", dlq, "--full")
    as_json = invoke("dlq", "list", "--dlq-url", dlq, "--json")
    helped = invoke("dlq", "list", "--help")

    assert listed.exit_code == 0 and body not in listed.stdout
    assert body[:200] + f"… ({len(body):,} characters; --full to see all)" in listed.stdout
    assert full.exit_code == 0 and body in full.stdout and "--full to see all" not in full.stdout
    assert [letter["body"] for letter in json.loads(as_json.stdout)] == [body]
    assert "bodies and errors whole" in " ".join(helped.stdout.split())


def test_dlq_list_cut_by_its_limit_says_it_shows_the_first_of_about_how_many(running: LocalPipeline) -> None:
    # Given a dead-letter queue of 12 messages
    sqs, _, dlq = own_queues(running)
    for n in range(12):
        sqs.send_message(QueueUrl=dlq, MessageBody=f'{{"sensor_id": "x{n}"}}', MessageAttributes=REASON)

    # When it is listed with a smaller limit, as JSON with it, and with a limit that takes all
    cut = invoke("dlq", "list", "--dlq-url", dlq, "--limit", "5")
    cut_json = invoke("dlq", "list", "--dlq-url", dlq, "--limit", "5", "--json")
    whole = invoke("dlq", "list", "--dlq-url", dlq, "--limit", "12")

    # Then the cut listings say they show the first 5 of about 12, and how to see more; the whole one does not
    assert cut.exit_code == 0 and "Dead-letter queue: first 5 of about 12 message(s); --limit to see more" in cut.stdout
    assert len(json.loads(cut_json.stdout)) == 5
    assert cut_json.stderr == "dead-letter queue: first 5 of about 12 message(s); --limit to see more\n"
    assert "Dead-letter queue: 12 message(s)" in whole.stdout and "--limit" not in whole.output


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


def test_dlq_redrive_asks_first_and_a_dry_run_or_a_no_moves_nothing(
    running: LocalPipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a dead letter ingest rejected (with its reason) and one SQS moved there itself (none)
    sqs, queue, dlq = own_queues(running)
    sqs.send_message(QueueUrl=dlq, MessageBody='{"sensor_id": "x"}', MessageAttributes=REASON)
    by_sqs = sqs.send_message(QueueUrl=dlq, MessageBody='{"sensor_id": 5}')["MessageId"]
    where = ("--queue-url", queue, "--dlq-url", dlq)
    moves = f"2 message(s) (1 of them moved there by SQS itself) from {dlq} to {queue}"

    # When it is run from a script, as a dry run, then at a terminal answered no, yes, and with --yes
    scripted = invoke("dlq", "redrive", *where)
    dry = invoke("dlq", "redrive", "--dry-run", *where)
    monkeypatch.setattr(output, "stdin_is_terminal", lambda: True)
    declined = runner.invoke(app, ["dlq", "redrive", *where], input="n\n")
    after_no = origins(sqs, queue)
    only_sqs = runner.invoke(app, ["dlq", "redrive", "--only-moved-by-sqs", *where], input="y\n")
    the_rest = invoke("dlq", "redrive", "-y", *where)

    # Then nothing moves until someone agrees, and the question says what will move where
    assert (scripted.exit_code, scripted.stdout) == (1, "")
    assert scripted.stderr == (
        f"error: not confirmed: redrive message(s) from {dlq} to {queue}; stdin is not a terminal to ask on, "
        "give --yes to go ahead\n"
    )
    assert (dry.exit_code, dry.stdout) == (0, f"would redrive {moves}; dry run, nothing moved\n")
    assert declined.exit_code == 1 and f"redrive {moves}? [y/N]" in declined.stderr
    assert "error: not confirmed: nothing was done" in declined.stderr and after_no == []
    assert only_sqs.exit_code == 0, only_sqs.output
    assert f"redrive 1 message(s) (1 of them moved there by SQS itself) from {dlq} to {queue}?" in only_sqs.stderr
    assert only_sqs.stdout.endswith(f"redrove 1 message(s) from {dlq} to {queue}\n")
    assert the_rest.exit_code == 0 and the_rest.stdout == f"redrove 1 message(s) from {dlq} to {queue}\n"
    moved = origins(sqs, queue)
    assert by_sqs in moved and len(moved) == 2


class ReturnsBeforeTheNextReceive:
    """The redrive's SQS client, whose ``SendMessageBatch`` to the pipeline's queue returns only once
    ingest has handled what it sent (the queue is empty again, bounded wait): the letters it rejected
    again are back in the dead-letter queue, with new message ids, before the redrive reads on."""

    def __init__(self, inner: Any, queue_url: str) -> None:
        self._inner, self._queue_url = inner, queue_url

    def send_message_batch(self, **kwargs: Any) -> Any:
        answer = self._inner.send_message_batch(**kwargs)
        if kwargs["QueueUrl"] == self._queue_url:
            wait_for(lambda: queue_depth(self._inner, self._queue_url) == 0)
        return answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.fixture
def poisoned(ddb_endpoint: str) -> Iterator[tuple[LocalPipeline, list[str]]]:
    """A pipeline of the test's own (its dead-letter queue holds only what the test put there) with
    15 reports ingest rejected in its dead-letter queue, and their message ids."""
    pipeline = LocalPipeline(PipelineOptions(sqs="server", time_scale=0.005), engine_endpoint=ddb_endpoint)
    target = pipeline.start()
    try:
        sqs, queue, dlq = target.sqs(), str(target.queue_url), str(target.dlq_url)
        sent = [sqs.send_message(QueueUrl=queue, MessageBody='{"sensor_id": "x"}')["MessageId"] for _ in range(15)]
        wait_for(lambda: len(list_dead_letters(sqs, dlq)) == 15)
        yield pipeline, sent
    finally:
        pipeline.stop()


def test_a_redrive_moves_each_dead_letter_once_while_ingest_rejects_them_again(
    poisoned: tuple[LocalPipeline, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 15 poison reports in the dead-letter queue of a running pipeline, whose ingest rejects
    # each one sent back before the redrive reads on
    pipeline, sent = poisoned
    target = pipeline.target
    save_local(target)
    sqs, dlq = target.sqs(), str(target.dlq_url)
    monkeypatch.setattr(Target, "sqs", lambda self: ReturnsBeforeTheNextReceive(sqs, str(target.queue_url)))

    # When the operator redrives them
    redriven = invoke("dlq", "redrive", "--yes", "--limit", "100")

    # Then each moved once, and the redrive says so; every report is back in the dead-letter queue once
    assert redriven.exit_code == 0, redriven.output
    assert redriven.stdout == f"redrove 15 message(s) from {dlq} to {target.queue_url}\n"
    wait_for(lambda: queue_depth(sqs, str(target.queue_url)) == 0)
    assert sorted(d.source_message_id for d in list_dead_letters(sqs, dlq)) == sorted(sent)


def test_a_redrive_pass_leaves_a_letter_whose_origin_it_sent_already_in_the_dead_letter_queue(
    poisoned: tuple[LocalPipeline, list[str]],
) -> None:
    # Given 15 poison reports in the dead-letter queue of a running pipeline, whose ingest rejects
    # each one sent back before the redrive reads on
    pipeline, sent = poisoned
    queue, dlq = str(pipeline.target.queue_url), str(pipeline.target.dlq_url)
    sqs = ReturnsBeforeTheNextReceive(pipeline.target.sqs(), queue)

    # When a pass with no bound of its own redrives them
    report = redrive(sqs, dlq, queue, limit=100, at_most=1_000)

    # Then each origin moved once; what came back stayed, and every report is in the queue once
    assert report.moved == 15 and report.left == []
    assert 0 < report.came_back <= 15
    assert sorted(d.source_message_id for d in list_dead_letters(sqs, dlq)) == sorted(sent)


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


def test_the_demo_shows_its_progress_on_stderr_and_its_report_on_stdout(ddb_endpoint: str) -> None:
    result = invoke("demo", "--messages", "60", "--sensors", "3", "--poison-rate", "0", "--fault-rate", "0")

    assert result.exit_code == 0, result.output
    assert "messages handled" in result.stderr and "messages handled" not in result.stdout
    assert "PASS every day count equals the truth" in result.stdout and "exact" in result.stdout


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


def test_up_and_demo_refuse_a_delivery_mode_that_does_not_exist() -> None:
    for command in ("up", "demo"):
        result = (
            invoke(command, "--mode", "foo", "--duration", "1") if command == "up" else invoke(command, "--mode", "foo")
        )

        assert result.exit_code == 2
        assert "'foo' is not one of 'exactly-once', 'at-least-once'" in result.output


@pytest.mark.parametrize("region", ["", "eu-west-1\n", "eu_west_1", "EU-WEST-1"])
def test_a_region_that_is_no_region_name_is_refused_in_one_line(region: str) -> None:
    # found in review: an empty region or one with a newline gave botocore's traceback
    result = invoke("counts", "--sensor", "1", "--from", "2024-01-01", "--to", "2024-01-02", "--region", region)

    assert result.exit_code == 2
    assert "is no AWS region name (like eu-west-1)" in result.output
    assert "Traceback" not in result.output


def test_up_refuses_a_ledger_mode_that_does_not_apply_as_the_stack_does() -> None:
    result = invoke("up", "--mode", "at-least-once", "--ledger-mode", "per-message", "--duration", "1")

    assert result.exit_code == 2
    assert "does not apply" in result.output and "at-least-once" in result.output


def test_without_a_pipeline_the_commands_say_how_to_get_one() -> None:
    result = invoke("summary", "--sensor", "1")
    assert result.exit_code == 1
    assert "start the local one with `sensor-digest up`" in result.output


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


def test_the_state_file_names_the_local_pipeline(state_file: Path) -> None:
    save_local(Target(table="T", queue_url="Q", dynamodb_endpoint="http://127.0.0.1:1", origin="local pipeline"))
    assert json.loads(state_file.read_text())["table"] == "T"


def test_send_to_a_fifo_queue_puts_each_report_in_its_sensors_group_deduplicated_by_event_id() -> None:
    # moto's SQS (faithful for FIFO sends and deduplication); last in this file: leaving mock_aws
    # resets the backends the running pipeline's SQS server shares
    with mock_aws(config=PASSTHROUGH):  # type: ignore[arg-type]
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(
            QueueName="SensorDigestQueue.fifo",
            Attributes={"FifoQueue": "true", "DeduplicationScope": "messageGroup"},
        )["QueueUrl"]

        three = invoke("send", "--sensor", "48", "--repeat", "3", "--queue-url", url, "--region", "us-east-1")
        once = invoke("send", "--sensor", "48", "--event-id", "ev-1", "--queue-url", url, "--region", "us-east-1")
        retry = invoke("send", "--sensor", "48", "--event-id", "ev-1", "--queue-url", url, "--region", "us-east-1")
        got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"])["Messages"]

    assert three.exit_code == once.exit_code == retry.exit_code == 0
    assert len(got) == 4  # the producer retry of ev-1 was dropped by SQS
    assert {m["Attributes"]["MessageGroupId"] for m in got} == {"48"}
    assert [m["Attributes"]["MessageDeduplicationId"] for m in got] == [json.loads(m["Body"])["event_id"] for m in got]
