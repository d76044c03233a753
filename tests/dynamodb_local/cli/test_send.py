"""``sensor-digest send``: reports to the ingest queue, checked as ingest checks them (cli/send.py).

Engines: DynamoDB Local (the session's engine); SQS is the in-process broker for ``demo`` and moto's
server for the running local pipeline (``running``, tests/dynamodb_local/cli/conftest.py)."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from moto import mock_aws

from sensor_digest.store import reads
from sensor_digest_tools.aws.dynamodb_local import free_port
from sensor_digest_tools.local.pipeline import LocalPipeline
from sensor_digest_tools.ops.targets import Target, save_local
from tests.support.cli import invoke, wait_for
from tests.support.sqs import PASSTHROUGH


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

    # -100000000 is 1966-10-31T14:13:20Z (a number closer to 0 is refused: it looks like a year or a date)
    sent = invoke("send", "--sensor", "44", "--timestamp", "-100000000", "--repeat", "25", "--event-id", "neg")

    assert sent.exit_code == 0 and "sent 25 report(s) for sensor 44" in sent.output, sent.output
    assert operations == ["SendMessageBatch"] * 3  # ten reports a request
    assert wait_for(lambda: dict(reads.sensor_days(ddb, table, 44, "1966-10-31", "1966-10-31")).get("1966-10-31") == 25)


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
