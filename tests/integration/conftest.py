"""Integration fixtures: the real ingest handler with DynamoDB Local behind it and moto's SQS as DLQ."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

import boto3
import pytest
from moto import mock_aws

from ingest import handler as module
from sensor_digest import ingest
from sensor_digest.config import IngestSettings
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from sensor_digest_tools.ops.dlq import DeadLetter, drain_dead_letters
from tests.conftest import Tables

PASSTHROUGH = {"core": {"mock_credentials": False, "passthrough": {"services": ["dynamodb", "dynamodbstreams"]}}}


@dataclass
class DeadLetters:
    client: Any
    url: str

    def drain(self) -> list[DeadLetter]:
        """Every message in the DLQ (body, reason, source message id), removing them."""
        return drain_dead_letters(self.client, self.url)


@pytest.fixture
def dead_letters(tables: Tables) -> Iterator[DeadLetters]:
    """moto SQS (faithful for send/receive/attributes) while DynamoDB calls pass through to DynamoDB Local."""
    with mock_aws(config=PASSTHROUGH):  # type: ignore[arg-type]
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="SensorDigestDLQ", Attributes={"MaximumMessageSize": "1048576"})["QueueUrl"]
        yield DeadLetters(client=sqs, url=url)


@pytest.fixture
def ingest_settings(tables: Tables, dead_letters: DeadLetters) -> IngestSettings:
    return IngestSettings(
        table_name=tables.table, ledger_table_name=tables.ledger, dlq_url=dead_letters.url, timezone=ZoneInfo("UTC")
    )


@pytest.fixture
def ingest_session(session: LocalSession) -> Any:
    """Where the ingest service's clients come from (the reliability suite wraps it in the fault layer)."""
    return session


@pytest.fixture
def ingest_handler(ingest_settings: IngestSettings, ingest_session: Any) -> Any:
    """The ingest service as Lambda invokes it, built by the handler's own ``build_service`` for this
    test's tables, dead-letter queue and session."""
    return lambda_handler(ingest.build_service(ingest_settings, ingest_session))


@pytest.fixture
def lambda_entry_point(tables: Tables, dead_letters: DeadLetters, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``ingest/handler.py``'s ``handler`` itself, configured as Lambda configures it: by environment."""
    monkeypatch.setenv("TABLE_NAME", tables.table)
    monkeypatch.setenv("LEDGER_TABLE_NAME", tables.ledger)
    monkeypatch.setenv("DLQ_URL", dead_letters.url)
    module.service.cache_clear()
    yield module.handler
    module.service.cache_clear()


def body_of(sensor_id: int, day: str, **extra: Any) -> str:
    return json.dumps({"sensor_id": sensor_id, "timestamp": f"{day}T12:00:00Z", **extra})
