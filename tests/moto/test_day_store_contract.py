"""The day store's contract (``tests/support/store_contract.py``) on moto's in-process engine: the store
the counters' decisions are unit-tested on (``test_counting_decisions.py``) holds what DynamoDB Local does."""

from __future__ import annotations

import pytest

from sensor_digest.store.day_store import DayStore
from tests.support.moto_tier import MotoAws
from tests.support.store_contract import *  # noqa: F403 - the suite, run here


@pytest.fixture
def store(moto_aws: MotoAws) -> DayStore:
    return DayStore(moto_aws.ddb, moto_aws.table, moto_aws.ledger)
