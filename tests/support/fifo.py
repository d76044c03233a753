"""FIFO messages for the tests: each sensor one message group, sequence numbers as SQS gives them."""

from __future__ import annotations

import itertools
import json
from typing import Any
from zoneinfo import ZoneInfo

from sensor_digest import ingest
from sensor_digest.config import IngestSettings, QueueType
from sensor_digest_tools.lambda_runtime.events import QueuedMessage
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from tests.support.faults import WRITE_OPERATIONS, FaultySession
from tests.support.tables import Tables

# SQS's sequence numbers are large (20 digits and more) and only grow within a group; the tests
# start just below a power of ten so that they cross a change of digit count (the trap of
# comparing numbers as unpadded strings).
FIRST_SEQUENCE = 10**20 - 3


class Sequencer:
    """Gives the next sequence number, as one FIFO queue does (one counter serves every group)."""

    def __init__(self, start: int = FIRST_SEQUENCE) -> None:
        self._next = itertools.count(start)

    def message(
        self, sensor_id: int, day: str = "2024-05-01", count: int = 1, *, group: str | None = None, **fields: Any
    ) -> QueuedMessage:
        number = next(self._next)
        body = {"sensor_id": sensor_id, "timestamp": f"{day}T12:00:00Z", "count": count, **fields}
        return QueuedMessage(
            body=json.dumps(body),
            group_id=str(sensor_id) if group is None else group,
            deduplication_id=f"dedup-{number}",
            sequence_number=str(number),
        )


def fifo_handler(tables: Tables, session: Any, dlq_url: str, rule: Any = None, reads: bool = False) -> Any:
    """The FIFO ingest handler on ``session``, its calls through ``rule`` (writes, and ledger reads if ``reads``)."""
    settings = IngestSettings(
        table_name=tables.table,
        ledger_table_name=tables.ledger,
        dlq_url=dlq_url,
        timezone=ZoneInfo("UTC"),
        queue_type=QueueType.FIFO,
    )
    if rule is not None:
        operations = (*WRITE_OPERATIONS, "batch_get_item") if reads else WRITE_OPERATIONS
        session = FaultySession(inner=session, rule=rule, operations=operations)
    return lambda_handler(ingest.build_service(settings, session))
