"""Integration fixtures: the real ingest handler with DynamoDB Local behind it and moto's SQS as DLQ."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws

from ingest import handler as module
from tests.conftest import Tables

PASSTHROUGH = {"core": {"mock_credentials": False, "passthrough": {"services": ["dynamodb", "dynamodbstreams"]}}}


@dataclass
class DeadLetters:
    client: Any
    url: str

    def drain(self) -> list[dict[str, Any]]:
        """Every message in the DLQ as {body, error, source_message_id}, removing them."""
        out = []
        while True:
            got = self.client.receive_message(
                QueueUrl=self.url, MaxNumberOfMessages=10, MessageAttributeNames=["All"], WaitTimeSeconds=0
            )
            batch = got.get("Messages", [])
            if not batch:
                return out
            for msg in batch:
                attrs = msg.get("MessageAttributes", {})
                out.append(
                    {
                        "body": msg["Body"],
                        "error": attrs.get("error", {}).get("StringValue"),
                        "source_message_id": attrs.get("source_message_id", {}).get("StringValue"),
                    }
                )
                self.client.delete_message(QueueUrl=self.url, ReceiptHandle=msg["ReceiptHandle"])


@pytest.fixture
def dead_letters(tables: Tables, monkeypatch: pytest.MonkeyPatch) -> Iterator[DeadLetters]:
    """moto SQS (faithful for send/receive/attributes) while DynamoDB calls pass through to DynamoDB Local."""
    with mock_aws(config=PASSTHROUGH):  # type: ignore[arg-type]
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="SensorDigestDLQ", Attributes={"MaximumMessageSize": "1048576"})["QueueUrl"]
        monkeypatch.setenv("DLQ_URL", url)
        yield DeadLetters(client=sqs, url=url)


@pytest.fixture
def ingest_handler(dead_letters: DeadLetters) -> Iterator[Any]:
    """The real Lambda entry point, rebuilt for this test's tables and queue."""
    module.service.cache_clear()
    yield module.handler
    module.service.cache_clear()


def body_of(sensor_id: int, day: str, **extra: Any) -> str:
    return json.dumps({"sensor_id": sensor_id, "timestamp": f"{day}T12:00:00Z", **extra})
