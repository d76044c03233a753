"""Lambda-shaped events, exactly as AWS documents them, for the local runtime and the tests.

SQS: https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html (example event).
DynamoDB Streams: https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html (example event).
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

QUEUE_ARN = "arn:aws:sqs:us-east-1:000000000000:SensorDigestQueue"
REGION = "us-east-1"
FIFO_QUEUE_ARN = "arn:aws:sqs:us-east-1:000000000000:SensorDigestQueue.fifo"
LAMBDA_SYSTEM_ATTRIBUTES = (
    "ApproximateReceiveCount",
    "SentTimestamp",
    "SenderId",
    "ApproximateFirstReceiveTimestamp",
    # a FIFO queue's records only
    "SequenceNumber",
    "MessageGroupId",
    "MessageDeduplicationId",
)


@dataclass
class QueuedMessage:
    """One SQS message as the queue keeps it (id, body, timestamps, receive count)."""

    body: str
    message_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    sent_timestamp_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    receive_count: int = 0
    attributes: dict[str, Any] = field(default_factory=dict)
    # on a FIFO queue: its group, deduplication id and the sequence number SQS gave it
    group_id: str | None = None
    deduplication_id: str | None = None
    sequence_number: str | None = None

    def system_attributes(self) -> dict[str, str]:
        """The attributes SQS returns with the message (``ReceiveMessage`` ``AttributeNames=All``)."""
        out = {
            "ApproximateReceiveCount": str(max(self.receive_count, 1)),
            "SentTimestamp": str(self.sent_timestamp_ms),
            "SenderId": "AIDAIENQZJOLO23YVJ4VO",
            "ApproximateFirstReceiveTimestamp": str(int(time.time() * 1000)),
        }
        fifo = {
            "SequenceNumber": self.sequence_number,
            "MessageGroupId": self.group_id,
            "MessageDeduplicationId": self.deduplication_id,
        }
        out.update({k: v for k, v in fifo.items() if v is not None})
        return out


def lambda_sqs_record(
    *,
    message_id: str,
    receipt_handle: str,
    body: str,
    attributes: Mapping[str, str],
    message_attributes: Mapping[str, Mapping[str, Any]] | None = None,
    queue_arn: str = QUEUE_ARN,
    region: str = REGION,
) -> dict[str, Any]:
    """One record of Lambda's SQS event: the message's system attributes Lambda passes on, and its
    message attributes (given as ``ReceiveMessage`` returns them) in Lambda's own casing."""
    return {
        "messageId": message_id,
        "receiptHandle": receipt_handle,
        "body": body,
        "attributes": {k: v for k, v in attributes.items() if k in LAMBDA_SYSTEM_ATTRIBUTES},
        "messageAttributes": {
            name: {
                "stringValue": value.get("StringValue"),
                "stringListValues": [],
                "binaryListValues": [],
                "dataType": value["DataType"],
            }
            for name, value in (message_attributes or {}).items()
        },
        "md5OfBody": hashlib.md5(body.encode(), usedforsecurity=False).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }


def received_sqs_event(
    messages: Iterable[Mapping[str, Any]], queue_arn: str = QUEUE_ARN, region: str = REGION
) -> dict[str, Any]:
    """Lambda's SQS event for messages as ``ReceiveMessage`` returns them (``AttributeNames`` and
    ``MessageAttributeNames`` ``All``), from the queue ``queue_arn``."""
    return {
        "Records": [
            lambda_sqs_record(
                message_id=m["MessageId"],
                receipt_handle=m["ReceiptHandle"],
                body=m["Body"],
                attributes=m.get("Attributes", {}),
                message_attributes=m.get("MessageAttributes"),
                queue_arn=queue_arn,
                region=region,
            )
            for m in messages
        ]
    }


def sqs_record(message: QueuedMessage, queue_arn: str | None = None) -> dict[str, Any]:
    """The record Lambda would hand over for this queued message, received now (from the FIFO
    queue when the message has a sequence number, unless ``queue_arn`` says otherwise)."""
    return lambda_sqs_record(
        message_id=message.message_id,
        receipt_handle=f"{message.message_id}#{message.receive_count}",
        body=message.body,
        attributes=message.system_attributes(),
        message_attributes=message.attributes,
        queue_arn=queue_arn or (FIFO_QUEUE_ARN if message.sequence_number is not None else QUEUE_ARN),
    )


def sqs_event(messages: Iterable[QueuedMessage], queue_arn: str | None = None) -> dict[str, Any]:
    return {"Records": [sqs_record(m, queue_arn) for m in messages]}


def stream_event(records: Iterable[Mapping[str, Any]], stream_arn: str) -> dict[str, Any]:
    """Lambda's DynamoDB Streams event from records of the ``dynamodbstreams`` API."""
    out = []
    for record in records:
        shaped = {
            "eventID": record["eventID"],
            "eventName": record["eventName"],
            "eventVersion": record.get("eventVersion", "1.1"),
            "eventSource": "aws:dynamodb",
            "awsRegion": record.get("awsRegion", REGION),
            "dynamodb": _plain_stream_record(record["dynamodb"]),
            "eventSourceARN": stream_arn,
        }
        out.append(shaped)
    return {"Records": out}


def _plain_stream_record(data: Mapping[str, Any]) -> dict[str, Any]:
    """The API gives ``ApproximateCreationDateTime`` as a datetime; Lambda gives epoch seconds."""
    shaped = dict(data)
    created = shaped.get("ApproximateCreationDateTime")
    if created is not None and not isinstance(created, int | float):
        shaped["ApproximateCreationDateTime"] = int(created.timestamp())
    return shaped


class FakeContext:
    """The parts of ``LambdaContext`` that Powertools reads."""

    function_name = "sensor-digest-local"
    function_version = "$LATEST"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:000000000000:function:sensor-digest-local"
    aws_request_id = "local"
    log_group_name = "/aws/lambda/sensor-digest-local"
    log_stream_name = "local"

    def __init__(self, request_id: str | None = None, timeout_ms: int = 300_000) -> None:
        """``timeout_ms``: the function's timeout; the remaining time counts down from it, as on Lambda."""
        self.aws_request_id = request_id or str(uuid.uuid4())
        self._deadline = time.monotonic() + timeout_ms / 1000

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))
