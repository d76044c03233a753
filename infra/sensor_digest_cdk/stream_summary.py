"""The summary capability: the function fed by the digest table's stream, and its failure queue."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Duration
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from constructs import Construct

from sensor_digest.stream_filter import DAY_ITEM_FILTER
from sensor_digest_cdk.lambda_function import SUMMARY, python_function
from sensor_digest_cdk.secure_queue import secure_queue
from sensor_digest_cdk.shape import PipelineShape


class StreamSummary(Construct):
    def __init__(
        self, scope: Construct, construct_id: str, *, shape: PipelineShape, asset: Path, table: dynamodb.ITable
    ) -> None:
        super().__init__(scope, construct_id)
        # Where Lambda records a batch it gave up on (the records' stream positions, not the data).
        self.failure_queue = secure_queue(self, "StreamFailureQueue", shape=shape, retention_period=Duration.days(14))
        self.function = python_function(
            self,
            "Function",
            shape=shape,
            asset=asset,
            kind=SUMMARY,
            environment=shape.summary_environment(table=table.table_name),
        )
        self.function.add_event_source(
            sources.DynamoEventSource(
                table,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=shape.summary_batch_size,
                max_batching_window=Duration.seconds(shape.summary_batching_window_seconds),
                bisect_batch_on_error=True,
                retry_attempts=shape.summary_retry_attempts,
                max_record_age=Duration.hours(shape.summary_max_record_age_hours),
                on_failure=sources.SqsDlq(self.failure_queue),
                report_batch_item_failures=True,
                filters=[lambda_.FilterCriteria.filter(DAY_ITEM_FILTER)],
            )
        )
