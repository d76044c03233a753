"""Day counting: the valid messages of a batch become writes to their sensor-days' day items.

One counter per mode, behind ``DayCounter`` (``base.py``: the batch's lookup and its concurrent
group writes, ``count_batch``):

- ``ledger.py``: exactly once on a standard queue, the identities counted kept with the count
  (compact, in the day item and ledger pages; or a marker per message), ``ledger_write.py`` its writes;
- ``ordered.py``: exactly once on a FIFO queue, the applied sequence number on the day item;
- ``plain.py``: at least once, the count alone.

``make_counter`` is the one place that reads the queue type and the delivery mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sensor_digest.config import DeliveryMode, IngestSettings, QueueType
from sensor_digest.counting.base import BatchCount, DayCounter, GroupOutcome, KnownDays, Lookup
from sensor_digest.counting.ledger import LedgerCounter, RetryPolicy
from sensor_digest.counting.ordered import OrderedCounter
from sensor_digest.counting.plain import PlainCounter

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

__all__ = [
    "BatchCount",
    "DayCounter",
    "GroupOutcome",
    "KnownDays",
    "LedgerCounter",
    "Lookup",
    "OrderedCounter",
    "PlainCounter",
    "RetryPolicy",
    "make_counter",
]


def make_counter(settings: IngestSettings, client: DynamoDBClient, *, retry: RetryPolicy | None = None) -> DayCounter:
    """The counter of these settings' queue type and delivery mode (``retry``: the ledger's, see
    ``RetryPolicy``)."""
    common = {"table_name": settings.table_name, "client": client, "max_workers": settings.max_workers}
    if settings.queue_type is QueueType.FIFO:
        return OrderedCounter(
            ledger_table_name=settings.ledger_table_name,
            marker_ttl_seconds=settings.marker_ttl_seconds,
            max_receive_count=settings.max_receive_count,
            **common,  # type: ignore[arg-type]
        )
    if settings.delivery_mode is DeliveryMode.AT_LEAST_ONCE:
        return PlainCounter(**common)  # type: ignore[arg-type]
    return LedgerCounter(
        ledger_table_name=settings.ledger_table_name,
        marker_ttl_seconds=settings.marker_ttl_seconds,
        mode=settings.ledger_mode,
        retry=retry,
        **common,  # type: ignore[arg-type]
    )
