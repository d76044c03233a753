"""Reliability fixtures: the real handlers on DynamoDB Local with the fault layer inside their client.

``ingest_handler`` and ``dead_letters`` come from tests/conftest.py; here the ingest service's
session is the fault layer's, driven by a ``FaultPlan``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sensor_digest_tools.aws.session import LocalSession
from tests.support.faults import FAULT_KINDS, FaultPlan, FaultySession
from tests.support.model import CONTEXT
from tests.support.sqs import DeadLetters


@pytest.fixture
def faults() -> FaultPlan:
    """The fault plan of the ingest service's DynamoDB client (rate 0 until a test sets it)."""
    return FaultPlan(kinds=FAULT_KINDS)


@pytest.fixture
def ingest_session(session: LocalSession, faults: FaultPlan) -> FaultySession:
    """The ingest service's DynamoDB client, wrapped in the fault layer."""
    return FaultySession(inner=session, rule=faults)


@pytest.fixture
def dlq(dead_letters: DeadLetters) -> Iterator[DeadLetters]:
    yield dead_letters


@pytest.fixture
def machine_context(ddb: Any, engine_endpoint: str, dead_letters: DeadLetters, session: LocalSession) -> Iterator[None]:
    """What the state machines (scenario 7) run on, in ``tests.support.model.CONTEXT`` for the run."""
    CONTEXT.update(ddb=ddb, endpoint=engine_endpoint, session=session, dlq_url=dead_letters.url)
    yield
    CONTEXT.clear()
