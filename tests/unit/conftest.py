"""Fixtures of the unit tests (no network): the in-process SQS broker behind a real boto3 client."""

from __future__ import annotations

from typing import Any

import boto3
import pytest

from sensor_digest_tools.aws.sqs_broker import ENDPOINT, LocalSqsBroker


@pytest.fixture
def broker() -> LocalSqsBroker:
    return LocalSqsBroker()


@pytest.fixture
def sqs(broker: LocalSqsBroker) -> Any:
    session = boto3.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1")
    broker.install(session)
    return session.client("sqs", endpoint_url=ENDPOINT)
