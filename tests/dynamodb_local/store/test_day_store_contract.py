"""The day store's contract (``tests/support/store_contract.py``) on DynamoDB Local, the authority the
moto store is held to (``tests/moto/test_day_store_contract.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from sensor_digest.store.day_store import DayStore
from tests.support.store_contract import *  # noqa: F403 - the suite, run here
from tests.support.tables import Tables


@pytest.fixture
def store(ddb: Any, tables: Tables) -> DayStore:
    return DayStore(ddb, tables.table, tables.ledger)
