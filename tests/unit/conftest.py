"""Fixtures of the unit tests (no network): the in-process SQS broker behind a real boto3 client,
its visibility timeouts on a clock the test moves (``ticks.advance``), never on this machine's speed."""

from __future__ import annotations

from typing import Any

import boto3
import pytest

from sensor_digest_tools.aws.sqs_broker import ENDPOINT, LocalSqsBroker


class Ticks:
    """Monotonic seconds that pass only when the test says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def ticks() -> Ticks:
    return Ticks()


@pytest.fixture
def broker(ticks: Ticks) -> LocalSqsBroker:
    return LocalSqsBroker(ticks=ticks)


@pytest.fixture
def sqs(broker: LocalSqsBroker) -> Any:
    session = boto3.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1")
    broker.install(session)
    return session.client("sqs", endpoint_url=ENDPOINT)
