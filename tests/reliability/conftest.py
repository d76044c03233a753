"""Reliability fixtures: the real handlers on DynamoDB Local with the fault layer inside their client.

``ingest_handler`` and ``dead_letters`` come from tests/conftest.py; here the ingest service's
session is the fault layer's, driven by a ``FaultPlan``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sensor_digest_tools.aws.session import LocalSession
from tests.support.faults import FaultPlan, FaultySession
from tests.support.sqs import DeadLetters


@pytest.fixture
def faults() -> FaultPlan:
    """The fault plan of the ingest service's DynamoDB client (rate 0 until a test sets it)."""
    return FaultPlan()


@pytest.fixture
def ingest_session(session: LocalSession, faults: FaultPlan) -> FaultySession:
    """The ingest service's DynamoDB client, wrapped in the fault layer."""
    return FaultySession(inner=session, rule=faults)


@pytest.fixture
def dlq(dead_letters: DeadLetters) -> Iterator[DeadLetters]:
    yield dead_letters
