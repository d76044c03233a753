"""``sensor-digest dlq``: list, redrive and stamp the dead letters (cli/dlq.py).

Engines: DynamoDB Local (the session's engine); SQS is the in-process broker for ``demo`` and moto's
server for the running local pipeline (``running``, tests/dynamodb_local/cli/conftest.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from sensor_digest_tools.cli import output
from sensor_digest_tools.cli.app import app
from sensor_digest_tools.local.pipeline import LocalPipeline, PipelineOptions
from sensor_digest_tools.ops.dlq import list_dead_letters, queue_depth, redrive
from sensor_digest_tools.ops.targets import Target, save_local
from tests.support.cli import REASON, invoke, origins, own_queues, runner, wait_for


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
