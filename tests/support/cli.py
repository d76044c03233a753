"""What the command line's tests share that is not a fixture: running a command, waiting for a
condition, a queue pair of a test's own on the running pipeline, markup that must stay text."""

from __future__ import annotations

import time
import uuid
from typing import Any

from typer.testing import CliRunner

from sensor_digest.dead_letter_format import SOURCE_ID_ATTRIBUTE
from sensor_digest_tools.cli.app import app
from sensor_digest_tools.local.pipeline import LocalPipeline
from sensor_digest_tools.ops.targets import save_local

runner = CliRunner()


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args), catch_exceptions=False)


def wait_for(check: Any, seconds: float = 20) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out")


MARKUP = "[/x] [link=https://evil.example]click[/link] [conceal]hidden[/conceal] :smile:"


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
