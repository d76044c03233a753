"""The ingest capability: the queue, its dead-letter queue, the function and its SQS event source.

``queueType=fifo`` makes both queues FIFO in high-throughput mode (deduplication scoped to the
message group, throughput limited per message group): producers send each sensor's reports as
one group (``MessageGroupId`` = the sensor id) with ``MessageDeduplicationId`` = the ``event_id``.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Duration
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from sensor_digest_cdk.lambda_function import INGEST, python_function
from sensor_digest_cdk.secure_queue import secure_queue
from sensor_digest_cdk.shape import PipelineShape


class QueueIngest(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        shape: PipelineShape,
        asset: Path,
        table_name: str,
        ledger_table_name: str,
    ) -> None:
        super().__init__(scope, construct_id)
        fifo: dict[str, object] = {}
        if shape.fifo:
            fifo = {
                "fifo": True,
                "content_based_deduplication": False,  # producers name each report (its event_id)
                "deduplication_scope": sqs.DeduplicationScope.MESSAGE_GROUP,
                "fifo_throughput_limit": sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
            }
        # Rejected messages keep their original body plus an `error` attribute and their origin
        # (`sensor-digest.source_message_id`, `sensor-digest.source_sent_timestamp`): the source
        # queue's maximum leaves room for them (PipelineShape.ingest_max_message_bytes).
        self.dead_letter_queue = secure_queue(
            self,
            "DeadLetterQueue",
            shape=shape,
            retention_period=Duration.days(shape.dead_letter_retention_days),
            max_message_size_bytes=shape.dead_letter_max_message_bytes,
            **fifo,
        )
        self.queue = secure_queue(
            self,
            "Queue",
            shape=shape,
            retention_period=Duration.days(shape.queue_retention_days),
            visibility_timeout=Duration.seconds(shape.visibility_timeout_seconds),
            max_message_size_bytes=shape.ingest_max_message_bytes,
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letter_queue, max_receive_count=shape.max_receive_count
            ),
            **fifo,
        )
        self.function = python_function(
            self,
            "Function",
            shape=shape,
            asset=asset,
            kind=INGEST,
            environment=shape.ingest_environment(
                table=table_name, ledger=ledger_table_name, dlq_url=self.dead_letter_queue.queue_url
            ),
        )
        window = shape.event_batching_window_seconds
        self.function.add_event_source(
            sources.SqsEventSource(
                self.queue,
                batch_size=shape.event_batch_size,
                max_batching_window=Duration.seconds(window) if window else None,  # FIFO takes none
                report_batch_item_failures=True,
                max_concurrency=shape.event_max_concurrency,
            )
        )
