"""Room for the reason: the largest body the ingest queue takes still reaches the dead-letter queue
with its ``error`` attribute (the in-process SQS broker, which counts sizes as SQS does; no network)."""

from __future__ import annotations

import json
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sensor_digest.dead_letter_format import (
    DEAD_LETTER_OVERHEAD_BYTES,
    SOURCE_ID_ATTRIBUTE,
    SQS_MAX_MESSAGE_BYTES,
    Origin,
    clip_reason,
    dead_letter_attributes,
    message_size,
)
from sensor_digest.ingest import DeadLetterSink, InboundMessage, IngestService, Rejection
from sensor_digest_cdk.shape import PipelineShape
from sensor_digest_tools.aws.sqs_broker import LocalSqsBroker

SETTINGS = PipelineShape()


@pytest.fixture
def queues(broker: LocalSqsBroker) -> tuple[str, str]:
    """The stack's two queues with the sizes ``PipelineShape`` gives them."""
    dlq = broker.create_queue("dlq", max_message_bytes=SETTINGS.dead_letter_max_message_bytes)
    source = broker.create_queue(
        "q", dead_letter_url=dlq, max_receive_count=5, max_message_bytes=SETTINGS.ingest_max_message_bytes
    )
    return source, dlq


def body_of_exactly(size: int) -> str:
    """A body that breaks the contract (no sensor_id), padded to ``size`` bytes of UTF-8."""
    head = '{"pad": "'
    tail = '"}'
    return head + "x" * (size - len(head) - len(tail)) + tail


def test_the_ingest_queue_leaves_room_for_the_dead_letter_attributes() -> None:
    assert SETTINGS.ingest_max_message_bytes + DEAD_LETTER_OVERHEAD_BYTES == SETTINGS.dead_letter_max_message_bytes
    assert SETTINGS.dead_letter_max_message_bytes == SQS_MAX_MESSAGE_BYTES


def test_a_rejected_body_of_exactly_the_queue_maximum_is_kept_with_its_reason(sqs: Any, queues: Any) -> None:
    # Given the largest body the ingest queue accepts, and one byte more, which it refuses
    source, dlq = queues
    body = body_of_exactly(SETTINGS.ingest_max_message_bytes)
    assert len(body.encode()) == SETTINGS.ingest_max_message_bytes
    sqs.send_message(QueueUrl=source, MessageBody=body)
    with pytest.raises(sqs.exceptions.ClientError, match="InvalidParameterValue"):
        sqs.send_message(QueueUrl=source, MessageBody=body + " ")
    [record] = sqs.receive_message(QueueUrl=source, AttributeNames=["All"])["Messages"]

    # When ingest rejects it (it has no sensor_id) into the dead-letter queue
    service = IngestService(
        counter=None,  # type: ignore[arg-type]  # nothing valid to count
        dead_letters=DeadLetterSink(queue_url=dlq, client=sqs),
        default_zone=ZoneInfo("UTC"),
    )
    report = service.process([InboundMessage(message_id=record["MessageId"], body=record["Body"])])

    # Then it is kept at once, whole, with the reason; nothing is left for SQS's redrive
    assert (report.rejected, report.failed) == (1, 0)
    [kept] = sqs.receive_message(QueueUrl=dlq, MessageAttributeNames=["All"])["Messages"]
    assert kept["Body"] == body
    assert kept["MessageAttributes"]["error"]["StringValue"] == "sensor_id is required"
    assert kept["MessageAttributes"][SOURCE_ID_ATTRIBUTE]["StringValue"] == record["MessageId"]


def test_the_longest_reason_and_id_still_fit_beside_the_largest_body(sqs: Any, queues: Any) -> None:
    # The worst case: both attributes at their clip, in four-byte characters.
    _, dlq = queues
    body = body_of_exactly(SETTINGS.ingest_max_message_bytes)
    sink = DeadLetterSink(queue_url=dlq, client=sqs)
    worst = InboundMessage(message_id="\U0001f525" * 500, body=body, sent_timestamp="9" * 15)
    assert sink.send([Rejection(worst, "\U0001f525" * 5000)]) == {worst.message_id}
    [kept] = sqs.receive_message(QueueUrl=dlq, MessageAttributeNames=["All"])["Messages"]
    assert message_size(kept["Body"], kept["MessageAttributes"]) <= SETTINGS.dead_letter_max_message_bytes


def test_without_the_derived_maximum_the_reason_would_not_fit(sqs: Any, broker: LocalSqsBroker) -> None:
    # What the stack did before: a source queue as large as its dead-letter queue. The re-send fails,
    # and the message could only reach the dead-letter queue later by redrive, without its reason.
    dlq = broker.create_queue("dlq-same-size", max_message_bytes=SQS_MAX_MESSAGE_BYTES)
    sink = DeadLetterSink(queue_url=dlq, client=sqs)
    assert not sink.send(
        [Rejection(InboundMessage(message_id="m", body=body_of_exactly(SQS_MAX_MESSAGE_BYTES)), "bad")]
    )


@settings(max_examples=200, deadline=None)
@given(
    reason=st.text(max_size=3000),
    message_id=st.text(max_size=300),
    sent=st.one_of(st.none(), st.text(max_size=30), st.integers(0, 10**20).map(str)),
)
def test_dead_letter_attributes_are_sqs_text_within_the_overhead(
    reason: str, message_id: str, sent: str | None
) -> None:
    attributes = dead_letter_attributes(reason, Origin(message_id, sent))
    assert message_size("", attributes) <= DEAD_LETTER_OVERHEAD_BYTES
    for attribute in attributes.values():
        value = attribute["StringValue"]
        assert value  # SQS refuses an empty attribute value
        assert all(
            c in "\t\n\r" or 0x20 <= ord(c) <= 0xD7FF or 0xE000 <= ord(c) <= 0xFFFD or ord(c) >= 0x10000 for c in value
        )


def test_a_short_reason_is_kept_as_it_is() -> None:
    assert clip_reason("count must be between 1 and 1000000, got 0") == "count must be between 1 and 1000000, got 0"
    assert json.dumps(clip_reason("x" * 2000)).count("x") < 1024


@pytest.mark.parametrize(
    "record",
    [
        # a record no SQS queue delivers, only a hand-made invocation: a number where SQS gives text
        {"messageId": "m1", "attributes": {"SentTimestamp": 1714564800000}},
        {"messageId": "m2", "body": '{"sensor_id": 1}', "attributes": {"SentTimestamp": 1714564800000}},
        # a lone surrogate in the origin attribute (SQS refuses it; a forged event can carry it)
        {
            "messageId": "m3",
            "body": '{"sensor_id": 1}',
            "attributes": {"SentTimestamp": "1714564800000"},
            "messageAttributes": {SOURCE_ID_ATTRIBUTE: {"stringValue": "x\ud800", "dataType": "String"}},
        },
        # a body with a lone surrogate
        {"messageId": "m4", "body": '{"sensor_id": "\ud800"}', "attributes": {"SentTimestamp": "1714564800000"}},
    ],
)
def test_a_hand_made_record_ends_as_a_dead_letter_never_a_raised_batch(
    sqs: Any, broker: LocalSqsBroker, record: dict[str, Any]
) -> None:
    dlq = broker.create_queue("dlq")
    service = IngestService(
        counter=None,  # type: ignore[arg-type]  # nothing valid to count
        dead_letters=DeadLetterSink(queue_url=dlq, client=sqs),
        default_zone=ZoneInfo("UTC"),
    )

    report = service.handle_event({"Records": [record]}, remaining_ms=60_000)

    [kept] = sqs.receive_message(QueueUrl=dlq, MessageAttributeNames=["All"])["Messages"]
    assert (report.rejected, report.failed_ids) == (1, [])
    assert kept["MessageAttributes"]["error"]["StringValue"]
