"""What stopping ``sensor-digest up`` drops, said in one line: the reports accepted and not yet counted
(visible or in flight) and the dead letters, all of which live in memory. No engine: the in-process
SQS broker holds the queues."""

from __future__ import annotations

from typing import Any

from sensor_digest_tools.aws.sqs_broker import LocalSqsBroker
from sensor_digest_tools.cli.local import dropped_on_stop


def test_stopping_says_what_the_queues_still_held(sqs: Any, broker: LocalSqsBroker) -> None:
    dlq = broker.create_queue("dlq")
    queue = broker.create_queue("queue", dead_letter_url=dlq, max_receive_count=5, visibility_timeout=300)
    assert dropped_on_stop(sqs, queue, dlq) == (
        "stopping: nothing was waiting (every report accepted was counted or kept, no dead letter)"
    )
    for n in range(3):
        sqs.send_message(QueueUrl=queue, MessageBody=f'{{"sensor_id": {n}}}')
    sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=1)  # one of them in flight: handed to ingest
    sqs.send_message(QueueUrl=dlq, MessageBody="not json")

    said = dropped_on_stop(sqs, queue, dlq)

    assert said.startswith("stopping drops 3 report(s) accepted but not yet counted and 1 dead letter(s)")
    assert "sensor-digest dlq list --json > letters.json" in said


def test_queues_that_do_not_answer_are_said_so(sqs: Any) -> None:
    gone = "https://sqs.us-east-1.amazonaws.com/123456789012/gone"
    assert dropped_on_stop(sqs, gone, gone) == (
        "stopping: the queues did not say what they held; whatever they held is gone with them"
    )
