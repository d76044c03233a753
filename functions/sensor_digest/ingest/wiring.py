"""``build_service``: the ingest service of some settings, its clients from a session.

``MODES`` is the one table that maps the queue type and the delivery mode to a counter, an ordering
policy and a dead-letter sink; nothing else in ingest asks which queue it reads or how it counts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sensor_digest.alarms.evaluator import AlarmEvaluator
from sensor_digest.alarms.store import AlarmStore, RuleCache, RuleStore
from sensor_digest.config import DeliveryMode, IngestSettings, QueueType
from sensor_digest.counting import (
    DayCounter,
    Policies,
    RetryPolicy,
    ledger_counter,
    ordered_counter,
    plain_counter,
)
from sensor_digest.ingest.dead_letters import DeadLetterSink, FifoDeadLetterSink
from sensor_digest.ingest.ordering import FifoGroupOrdering, Ordering, StandardOrdering
from sensor_digest.ingest.service import IngestService
from sensor_digest.profiles import ProfileCache, Profiles
from sensor_digest.store.dynamo import ClientSource, make_client

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass(frozen=True)
class Mode:
    """How ingest runs on one queue type in one delivery mode."""

    counter: Callable[[IngestSettings, DynamoDBClient, RetryPolicy | None, Policies], DayCounter]
    ordering: type[Ordering]
    dead_letters: type[DeadLetterSink]


MODES: dict[tuple[QueueType, DeliveryMode], Mode] = {
    (QueueType.STANDARD, DeliveryMode.EXACTLY_ONCE): Mode(ledger_counter, StandardOrdering, DeadLetterSink),
    (QueueType.STANDARD, DeliveryMode.AT_LEAST_ONCE): Mode(plain_counter, StandardOrdering, DeadLetterSink),
    (QueueType.FIFO, DeliveryMode.EXACTLY_ONCE): Mode(ordered_counter, FifoGroupOrdering, FifoDeadLetterSink),
}
"""FIFO at least once is refused by the settings (``IngestSettings``): nothing to save there."""


def build_service(
    settings: IngestSettings,
    session: ClientSource,
    *,
    retry: RetryPolicy | None = None,
    policies: Policies | None = None,
) -> IngestService:
    """The ingest service of these settings, its clients from ``session`` (see ``ingest/handler.py``);
    ``retry``: the ledger's retries of a contended transaction, ``policies``: the counter's savings
    (each the default unless given: the benchmark measures them against less)."""
    client = make_client(session, max_pool_connections=settings.max_workers + 2)
    mode = MODES[settings.queue_type, settings.delivery_mode]
    profiles = Profiles(table_name=settings.table_name, client=client)
    return IngestService(
        counter=mode.counter(settings, client, retry, policies or Policies()),
        dead_letters=mode.dead_letters(queue_url=settings.dlq_url, client=session.client("sqs")),
        default_zone=settings.timezone,
        ordering=mode.ordering(),
        profiles=ProfileCache(profiles, ttl=settings.profile_cache_seconds),
        reject_unknown=settings.unknown_sensors == "reject",
        alarms=AlarmEvaluator(
            rules=RuleCache(RuleStore(ledger_table_name=settings.ledger_table_name, client=client)),
            alarms=AlarmStore(table_name=settings.table_name, client=client),
        ),
    )
