"""Integration fixtures: the real ingest handler's entry point, configured by environment.

The ingest fixtures (``ingest_handler``, ``ingest_settings``, ``dead_letters``: the real ingest
service with DynamoDB Local behind it and moto's SQS as DLQ) are in tests/conftest.py, shared with
the reliability suite.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ingest import handler as module
from tests.support.sqs import DeadLetters
from tests.support.tables import Tables


@pytest.fixture
def lambda_entry_point(tables: Tables, dead_letters: DeadLetters, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``ingest/handler.py``'s ``handler`` itself, configured as Lambda configures it: by environment."""
    monkeypatch.setenv("TABLE_NAME", tables.table)
    monkeypatch.setenv("LEDGER_TABLE_NAME", tables.ledger)
    monkeypatch.setenv("DLQ_URL", dead_letters.url)
    yield module.handler  # the handler builds its service for this environment by itself
