"""Integration fixtures: the real ingest handler's entry point, configured by environment, and the read
API on a loopback port as ``sensor-digest up`` serves it (``server``).

The ingest fixtures (``ingest_handler``, ``ingest_settings``, ``dead_letters``: the real ingest
service with DynamoDB Local behind it and moto's SQS as DLQ) are in tests/conftest.py, shared with
the reliability suite.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from ingest import handler as module
from sensor_digest import api
from sensor_digest.config import ApiSettings
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from sensor_digest_tools.local.api_server import LocalApi
from tests.support.sqs import PASSTHROUGH, DeadLetters
from tests.support.tables import Tables


@pytest.fixture
def lambda_entry_point(tables: Tables, dead_letters: DeadLetters, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``ingest/handler.py``'s ``handler`` itself, configured as Lambda configures it: by environment."""
    monkeypatch.setenv("TABLE_NAME", tables.table)
    monkeypatch.setenv("LEDGER_TABLE_NAME", tables.ledger)
    monkeypatch.setenv("DLQ_URL", dead_letters.url)
    yield module.handler  # the handler builds its service for this environment by itself


@pytest.fixture
def server(tables: Tables, session: LocalSession) -> Iterator[LocalApi]:
    """The read API's service over this test's tables, on a loopback port, as ``up`` serves it."""
    local = LocalApi(
        lambda_handler(
            api.build_service(ApiSettings(table_name=tables.table, ledger_table_name=tables.ledger), session)
        )
    )
    local.start()
    yield local
    local.stop()


@pytest.fixture
def fifo_dlq(tables: Tables) -> Iterator[DeadLetters]:
    """A FIFO dead-letter queue in high-throughput mode, as the stack makes it (moto's SQS)."""
    with mock_aws(config=PASSTHROUGH):  # type: ignore[arg-type]
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(
            QueueName="SensorDigestDLQ.fifo",
            Attributes={
                "FifoQueue": "true",
                "DeduplicationScope": "messageGroup",
                "FifoThroughputLimit": "perMessageGroupId",
                "MaximumMessageSize": "1048576",
            },
        )["QueueUrl"]
        yield DeadLetters(client=sqs, url=url)
