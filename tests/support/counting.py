"""Service-level helpers for the ingest tests on DynamoDB Local: a dead-letter sink that keeps what it
is handed, a counter that hands each group's outcome (with the steps it took) to a listener, and
bodies counted as the ingest counts them (``ingest``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from zoneinfo import ZoneInfo

from sensor_digest.counting import DayCounter, Group, GroupOutcome, LedgerCounter
from sensor_digest.ingest import InboundMessage, IngestService, Rejection
from tests.support.tables import Tables


class DeadLettered:
    """A fake dead-letter sink for service-level tests (the handler tests use moto's SQS)."""

    def __init__(self) -> None:
        self.kept: list[tuple[str, str]] = []

    def send(self, rejections: Sequence[Rejection], deadline: float | None = None) -> set[str]:
        self.kept += [(r.message.message_id, r.reason) for r in rejections]
        return {r.message.message_id for r in rejections}


def recording(counter: DayCounter, on_group: Callable[[GroupOutcome], None] | None) -> DayCounter:
    """``counter``, handing each group's outcome (with the steps it took) to ``on_group``."""
    if on_group is not None:
        count_group = counter.count_group

        def recorded(group: Group) -> GroupOutcome:
            outcome = count_group(group)
            on_group(outcome)
            return outcome

        counter.count_group = recorded  # type: ignore[method-assign]
    return counter


def ingest(ddb: Any, tables: Tables, bodies: list[str]) -> None:
    """Count ``bodies`` as the ingest does (the compact ledger), every one of them."""
    counter = LedgerCounter(
        table_name=tables.table, ledger_table_name=tables.ledger, client=ddb, marker_ttl_seconds=3600
    )
    service = IngestService(counter=counter, dead_letters=DeadLettered(), default_zone=ZoneInfo("UTC"))
    result = service.process([InboundMessage(message_id=f"m{i}", body=body) for i, body in enumerate(bodies)])
    assert (result.counted, result.failed_ids) == (len(bodies), [])
