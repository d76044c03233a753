"""Lambda entry point of the summary path: DynamoDB Streams batch in, partial batch response out."""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from sensor_digest.config import SummarySettings
from sensor_digest.dynamo import make_client
from sensor_digest.summary import SummaryReport, SummaryService, SummaryWriter

SERVICE = "sensor-digest-summary"
logger = Logger(service=SERVICE)
metrics = Metrics(namespace="SensorDigest", service=SERVICE)
tracer = Tracer(service=SERVICE)


@cache
def service() -> SummaryService:
    """Built on the first invocation (never at import), then reused by the warm container."""
    settings = SummarySettings.from_env()
    writer = SummaryWriter(table_name=settings.table_name, client=make_client(max_pool_connections=10))
    return SummaryService(writer=writer, max_workers=8)


def publish(report: SummaryReport) -> None:
    metrics.add_metric(name="summaryWritten", unit=MetricUnit.Count, value=report.written)
    metrics.add_metric(name="summaryStale", unit=MetricUnit.Count, value=report.stale)
    metrics.add_metric(name="summaryIgnored", unit=MetricUnit.Count, value=report.ignored)
    metrics.add_metric(name="summaryFailed", unit=MetricUnit.Count, value=report.failed)
    logger.info(
        "stream batch done",
        records=report.records,
        ignored=report.ignored,
        coalesced=report.coalesced,
        written=report.written,
        stale=report.stale,
        failed=report.failed,
        checkpoint=report.checkpoint,
    )


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    records = [r for r in event.get("Records") or [] if isinstance(r, dict)]
    report = service().process(records)
    publish(report)
    return report.response()
