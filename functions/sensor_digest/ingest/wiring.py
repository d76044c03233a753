"""``build_service``: the ingest service of some settings, its clients from a session.

The queue type picks the ordering policy and the dead-letter sink here, and the counter in
``counting.make_counter``; nothing else in ingest asks which queue it reads.
"""

from __future__ import annotations

from sensor_digest.config import IngestSettings, QueueType
from sensor_digest.counting import RetryPolicy, make_counter
from sensor_digest.ingest.dead_letters import DeadLetterSink, FifoDeadLetterSink
from sensor_digest.ingest.ordering import FifoGroupOrdering, Ordering, StandardOrdering
from sensor_digest.ingest.service import IngestService
from sensor_digest.registry import ProfileCache, Registry
from sensor_digest.store.dynamo import ClientSource, make_client

QUEUE_KINDS: dict[QueueType, tuple[type[Ordering], type[DeadLetterSink]]] = {
    QueueType.STANDARD: (StandardOrdering, DeadLetterSink),
    QueueType.FIFO: (FifoGroupOrdering, FifoDeadLetterSink),
}


def build_service(
    settings: IngestSettings, session: ClientSource, *, retry: RetryPolicy | None = None
) -> IngestService:
    """The ingest service of these settings, its clients from ``session`` (see ``ingest/handler.py``);
    ``retry``: the ledger's retries of a contended transaction (the default policy unless given: the
    benchmark measures it against none)."""
    client = make_client(session, max_pool_connections=settings.max_workers + 2)
    ordering, sink = QUEUE_KINDS[settings.queue_type]
    registry = Registry(table_name=settings.table_name, ledger_table_name=settings.ledger_table_name, client=client)
    return IngestService(
        counter=make_counter(settings, client, retry=retry),
        dead_letters=sink(queue_url=settings.dlq_url, client=session.client("sqs")),
        default_zone=settings.timezone,
        ordering=ordering(),
        profiles=ProfileCache(registry, ttl=settings.profile_cache_seconds),
        reject_unknown=settings.unknown_sensors == "reject",
    )
