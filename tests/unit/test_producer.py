"""What a producer adds to a report on a FIFO queue (no network)."""

from __future__ import annotations

import json

from sensor_digest_tools.ops.producer import fifo_fields, is_fifo


def test_the_group_is_the_sensor_and_the_deduplication_id_the_event_id() -> None:
    body = json.dumps({"sensor_id": 42, "event_id": "ev-1"})

    assert fifo_fields(body, "fallback") == {"MessageGroupId": "42", "MessageDeduplicationId": "ev-1"}


def test_what_sqs_would_not_take_gets_a_stable_stand_in() -> None:
    spaced = json.dumps({"sensor_id": 1, "event_id": "a b"})
    first, again = fifo_fields(spaced, "x"), fifo_fields(spaced, "y")

    assert first == again and len(first["MessageDeduplicationId"]) == 64  # a retry maps to the same id
    assert fifo_fields("not json", "m-3") == {"MessageGroupId": "unknown", "MessageDeduplicationId": "m-3"}
    assert fifo_fields(json.dumps({"sensor_id": True}), "m")["MessageGroupId"] == "unknown"
    assert fifo_fields(json.dumps({"sensor_id": 5}), "m-4")["MessageDeduplicationId"] == "m-4"


def test_a_fifo_queue_is_told_by_its_name() -> None:
    assert is_fifo("https://sqs.us-east-1.amazonaws.com/1/SensorDigest-Queue.fifo")
    assert not is_fifo("https://sqs.us-east-1.amazonaws.com/1/SensorDigest-Queue")
