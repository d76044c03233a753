"""Day counting: the valid messages of a batch become writes to their sensor-days' day items.

A counter decides what to write; ``store/day_writes.py`` builds every write and its conditions
(``store/guards.py``, ``store/expressions.py``).
One counter per mode, behind ``DayCounter`` (``base.py``: the batch's lookup and its concurrent
group writes, ``count_batch``, in the order and with the savings of ``policies.py``; what a
container remembers between batches is ``memory.py``'s):

- ``ledger.py``: exactly once on a standard queue, the identities counted kept with the count
  (compact, in the day item and ledger pages; or a marker per message);
- ``ordered.py``: exactly once on a FIFO queue, the applied sequence number on the day item;
- ``plain.py``: at least once, the count alone.

Each mode's counter is built from the settings here (``ledger_counter``, ``ordered_counter``,
``plain_counter``); which mode a queue type and delivery mode choose is one table, ``ingest/wiring.py``'s
``MODES``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sensor_digest.backoff import RetryPolicy
from sensor_digest.config import IngestSettings
from sensor_digest.counting.base import DayCounter
from sensor_digest.counting.ledger import LedgerCounter
from sensor_digest.counting.memory import KnownDays
from sensor_digest.counting.ordered import OrderedCounter
from sensor_digest.counting.outcomes import BatchCount, Group, GroupOutcome, Lookup, leaders
from sensor_digest.counting.plain import PlainCounter
from sensor_digest.counting.policies import ALL, Policies

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

__all__ = [
    "BatchCount",
    "DayCounter",
    "Group",
    "GroupOutcome",
    "KnownDays",
    "LedgerCounter",
    "Lookup",
    "OrderedCounter",
    "PlainCounter",
    "Policies",
    "RetryPolicy",
    "leaders",
    "ledger_counter",
    "ordered_counter",
    "plain_counter",
]


def _with_ledger(settings: IngestSettings, client: DynamoDBClient) -> dict[str, Any]:
    """What the two exactly-once counters share: the tables, the client, the workers, the markers' lifetime."""
    return {
        "table_name": settings.table_name,
        "client": client,
        "max_workers": settings.max_workers,
        "ledger_table_name": settings.ledger_table_name,
        "marker_ttl_seconds": settings.marker_ttl_seconds,
    }


def ledger_counter(
    settings: IngestSettings, client: DynamoDBClient, retry: RetryPolicy | None = None, policies: Policies = ALL
) -> DayCounter:
    """Exactly once on a standard queue (``retry``: the ledger's, see ``RetryPolicy``)."""
    return LedgerCounter(mode=settings.ledger_mode, retry=retry, policies=policies, **_with_ledger(settings, client))


def plain_counter(
    settings: IngestSettings, client: DynamoDBClient, retry: RetryPolicy | None = None, policies: Policies = ALL
) -> DayCounter:
    """At least once: the count alone (nothing to retry on contention)."""
    return PlainCounter(
        table_name=settings.table_name, client=client, max_workers=settings.max_workers, policies=policies
    )


def ordered_counter(
    settings: IngestSettings, client: DynamoDBClient, retry: RetryPolicy | None = None, policies: Policies = ALL
) -> DayCounter:
    """Exactly once on a FIFO queue, by sequence number."""
    return OrderedCounter(
        max_receive_count=settings.max_receive_count, policies=policies, **_with_ledger(settings, client)
    )
