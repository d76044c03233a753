"""SQS in the tests: moto's SQS beside DynamoDB Local, the dead-letter queue a test reads, and
receiving from the in-process broker through a boto3 client."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sensor_digest_tools.ops.dlq import DeadLetter, drain_dead_letters

PASSTHROUGH = {"core": {"mock_credentials": False, "passthrough": {"services": ["dynamodb", "dynamodbstreams"]}}}
"""moto's configuration that mocks SQS while DynamoDB calls pass through to DynamoDB Local."""


@dataclass
class DeadLetters:
    client: Any
    url: str

    def drain(self) -> list[DeadLetter]:
        """Every message in the DLQ (body, reason, source message id), removing them."""
        return drain_dead_letters(self.client, self.url)


def receive(sqs: Any, url: str, n: int = 10) -> list[dict[str, Any]]:
    return sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=n, AttributeNames=["All"]).get("Messages", [])
