"""Lambda entry point of the ingest path: SQS batch in, partial batch response out.

Thin by design: configuration and clients are built once per container, the batch goes to
``IngestService``, and the outcome becomes the response, logs and metrics.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from sensor_digest.config import IngestSettings
from sensor_digest.counting import DayCounter
from sensor_digest.dynamo import make_client
from sensor_digest.ingest import BatchReport, DeadLetterSink, InboundMessage, IngestService
from sensor_digest.registry import ProfileCache, Registry

SERVICE = "sensor-digest-ingest"
logger = Logger(service=SERVICE)
metrics = Metrics(namespace="SensorDigest", service=SERVICE)
tracer = Tracer(service=SERVICE)


@cache
def service() -> IngestService:
    """Built on the first invocation (never at import), then reused by the warm container."""
    settings = IngestSettings.from_env()
    client = make_client(max_pool_connections=settings.max_workers + 2)
    counter = DayCounter(
        table_name=settings.table_name,
        ledger_table_name=settings.ledger_table_name,
        client=client,
        mode=settings.delivery_mode,
        marker_ttl_seconds=settings.marker_ttl_seconds,
    )
    registry = Registry(table_name=settings.table_name, ledger_table_name=settings.ledger_table_name, client=client)
    dead_letters = DeadLetterSink(queue_url=settings.dlq_url, client=boto3.client("sqs"))
    return IngestService(
        counter=counter,
        dead_letters=dead_letters,
        default_zone=settings.timezone,
        profiles=ProfileCache(registry, ttl=settings.profile_cache_seconds),
        reject_unknown=settings.unknown_sensors == "reject",
        max_workers=settings.max_workers,
    )


def publish(report: BatchReport) -> None:
    metrics.add_metric(name="counted", unit=MetricUnit.Count, value=report.counted)
    metrics.add_metric(name="duplicate", unit=MetricUnit.Count, value=report.duplicates)
    metrics.add_metric(name="rejected", unit=MetricUnit.Count, value=report.rejected)
    metrics.add_metric(name="failed", unit=MetricUnit.Count, value=report.failed)
    logger.info(
        "batch done",
        counted=report.counted,
        duplicates=report.duplicates,
        rejected=report.rejected,
        failed=report.failed,
        groups=report.groups,
        requests=report.requests,
    )


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    records = event.get("Records") or []
    report = service().process([InboundMessage.from_record(r) for r in records if isinstance(r, dict)])
    publish(report)
    return report.response()
