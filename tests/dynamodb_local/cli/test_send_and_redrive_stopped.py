"""Commands that act a batch at a time, stopped on the way: ``send`` interrupted by Ctrl-C or cut off
by an endpoint that stops answering, ``dlq redrive`` stopped midway. Each says on stderr how far it
got and how to go on safely, and going on finishes the job exactly.

Engines: ``send`` runs as a process of its own against a stand-in SQS endpoint
(``tests/support/stand_in_sqs.py``) and receives a real SIGINT; ``dlq redrive`` runs on a local
pipeline as ``sensor-digest up`` runs it (moto's SQS server, DynamoDB Local), stopped by a fault
injected at botocore's ``before-call`` hook of the command's SQS client.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import EndpointConnectionError
from typer.testing import CliRunner

from sensor_digest.store import reads
from sensor_digest_tools.cli.app import app
from sensor_digest_tools.local.pipeline import LocalPipeline, PipelineOptions
from sensor_digest_tools.ops.dlq import queue_depth
from sensor_digest_tools.ops.targets import save_local
from tests.support.stand_in_sqs import StandInSqs

QUEUE = "https://sqs.us-east-1.amazonaws.com/123456789012/readings"


def send_process(endpoint: str, tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "SENSOR_DIGEST_"))}
    env.update(
        AWS_ENDPOINT_URL_SQS=endpoint,
        AWS_DEFAULT_REGION="us-east-1",
        AWS_ACCESS_KEY_ID="x",
        AWS_SECRET_ACCESS_KEY="x",
        AWS_MAX_ATTEMPTS="1",
        SENSOR_DIGEST_STATE=str(tmp_path / "no-local-pipeline.json"),
    )
    command = [str(Path(sys.executable).with_name("sensor-digest")), "send", "--queue-url", QUEUE, *args]
    # Ctrl-C as a person's terminal delivers it: a suite started in the background (`make test &`, a CI
    # runner without job control) hands its children SIGINT ignored, and Python then keeps it ignored
    return subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 - no threads in the child
    )


@pytest.mark.parametrize(
    "stop", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["ctrl-c", "sigterm (timeout)", "sighup"]
)
def test_send_stopped_by_ctrl_c_says_how_far_it_got_and_that_sending_again_is_safe(
    tmp_path: Path, stop: signal.Signals
) -> None:
    # Given an endpoint that takes the first request of ten reports and holds the second unanswered
    with StandInSqs(answered=1, after="hang") as sqs:
        process = send_process(sqs.endpoint, tmp_path, "--sensor", "7", "--event-id", "run", "--repeat", "25")
        try:
            # When the person presses Ctrl-C while the second request is under way (or a `timeout`
            # sends SIGTERM, or the terminal closes: found in review, those said nothing)
            assert sqs.holding.wait(60), "the second request never came"
            process.send_signal(stop)
            out, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()

    # Then it exits as an interrupted command does, and says how far it got and how to go on
    assert (process.returncode, out) == (130, "")
    assert err.strip() == (
        "stopped: 10 of 25 report(s) for sensor 7 sent, and the request of 10 under way may or may not have "
        "reached the queue. They carry event ids (run-0 to run-24): run the same command again to send the "
        "rest; the ingest counts each event id once, so a report sent twice counts once."
    )
    first_request = [json.loads(entry["MessageBody"])["event_id"] for entry in sqs.requests[0]]
    assert first_request == [f"run-{n}" for n in range(10)]


@pytest.mark.parametrize("event_id", [["--event-id", "run"], []], ids=["with event ids", "without"])
def test_send_cut_off_by_an_endpoint_that_stops_answering_says_how_far_it_got(
    tmp_path: Path, event_id: list[str]
) -> None:
    # Given an endpoint that takes two requests, then closes the connection on the third unanswered
    with StandInSqs(answered=2, after="close") as sqs:
        process = send_process(sqs.endpoint, tmp_path, "--sensor", "7", "--repeat", "25", *event_id)
        out, err = process.communicate(timeout=120)

    # Then it ends with the error, having said first how far it got and what sending again does
    lines = err.strip().splitlines()
    assert (process.returncode, out, len(lines)) == (1, "", 2), err
    assert lines[0].startswith(
        "stopped: 20 of 25 report(s) for sensor 7 sent, and the request of 5 under way may or may not have reached "
        "the queue."
    )
    if event_id:
        assert "run the same command again to send the rest" in lines[0]
    else:
        assert "a report sent again would count again, so send only the rest (--repeat 5)" in lines[0]
    assert lines[1].startswith("error: ")


@pytest.fixture
def running(ddb_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalPipeline]:
    """A local pipeline as ``up`` runs it, which the commands find through its state file."""
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(tmp_path / "local-pipeline.json"))
    pipeline = LocalPipeline(PipelineOptions(sqs="server", time_scale=0.005), engine_endpoint=ddb_endpoint)
    target = pipeline.start()
    save_local(target)
    yield pipeline
    pipeline.stop()


REASON = {"error": {"DataType": "String", "StringValue": "sensor 5 is not registered (UNKNOWN_SENSORS=reject)"}}


class StopOnSecondBatch:
    """A fault on the command's SQS client: the second ``SendMessageBatch`` never goes out."""

    def __init__(self, fault: BaseException) -> None:
        self.fault, self.calls = fault, 0

    def __call__(self, **_: Any) -> None:
        self.calls += 1
        if self.calls == 2:
            raise self.fault


@pytest.mark.parametrize(
    ("fault", "code"),
    [(KeyboardInterrupt(), 130), (EndpointConnectionError(endpoint_url="http://127.0.0.1:1"), 1)],
    ids=["ctrl-c", "endpoint gone"],
)
def test_a_redrive_stopped_midway_says_how_many_it_moved_and_the_next_moves_the_rest_once(
    running: LocalPipeline, ddb: Any, fault: BaseException, code: int
) -> None:
    # Given 25 dead letters of distinct reports, rejected before their sensor was registered
    target = running.target
    sqs = running.sqs()
    for n in range(25):
        body = json.dumps({"sensor_id": 5, "event_id": f"late-{n}", "timestamp": "2024-05-01T10:00:00Z"})
        sqs.send_message(QueueUrl=target.dlq_url, MessageBody=body, MessageAttributes=REASON)

    # When a redrive is stopped as it sends its second batch
    stop = StopOnSecondBatch(fault)
    boto3.DEFAULT_SESSION = None  # the command's clients come from a default session this test hooks
    boto3.setup_default_session()
    boto3.DEFAULT_SESSION.events.register("before-call.sqs.SendMessageBatch", stop)  # type: ignore[union-attr]
    try:
        first = CliRunner().invoke(app, ["dlq", "redrive", "--yes"])
    finally:
        boto3.DEFAULT_SESSION = None

    # Then it says how many it moved and that going on is safe; the next pass moves the rest at once
    assert first.exit_code == code, first.output
    assert first.stderr.startswith(
        f"stopped: redrove 10 message(s) from {target.dlq_url} to {target.queue_url} before it stopped; the others "
        f"are still in {target.dlq_url}"
    )
    assert "Run it again to go on" in first.stderr
    again = CliRunner().invoke(app, ["dlq", "redrive", "--yes"], catch_exceptions=False)
    assert again.exit_code == 0 and again.stdout.startswith("redrove 15 message(s)")
    deadline = time.monotonic() + 60
    while reads.day_counts(ddb, str(target.table)) != {(5, "2024-05-01"): 25}:
        assert time.monotonic() < deadline, reads.day_counts(ddb, str(target.table))
        time.sleep(0.2)
    assert queue_depth(sqs, str(target.dlq_url)) == 0
