"""The one SensorDigest stack: composes the capabilities, grants the narrowest actions, runs cdk-nag."""

from __future__ import annotations

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_iam as iam
from cdk_nag import NagPackSuppression, NagSuppressions
from constructs import Construct

from sensor_digest import names
from sensor_digest_cdk.digest_tables import DigestTables
from sensor_digest_cdk.lambda_asset import build_function_asset
from sensor_digest_cdk.monitoring import PipelineMonitoring
from sensor_digest_cdk.queue_ingest import QueueIngest
from sensor_digest_cdk.read_api import ReadApi
from sensor_digest_cdk.shape import Settings
from sensor_digest_cdk.stream_summary import StreamSummary

# IAM has no action named TransactWriteItems: each action inside a transaction is authorised as
# its own PutItem / UpdateItem / ConditionCheckItem ("Using IAM with DynamoDB transactions").
# Only what the code calls: the count update/insert and the sensor profiles' reads on the digest,
# marker puts and the batch's lookup of known markers on the ledger, the map upsert (UpdateItem) for the summary.
INGEST_DIGEST_ACTIONS = ["dynamodb:UpdateItem", "dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:BatchGetItem"]
INGEST_LEDGER_ACTIONS = ["dynamodb:PutItem", "dynamodb:BatchGetItem"]  # markers, and the lookup of known ones
INGEST_DLQ_ACTIONS = ["sqs:SendMessage"]
SUMMARY_DIGEST_ACTIONS = ["dynamodb:UpdateItem"]


class SensorDigestStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, **kwargs: object) -> None:
        super().__init__(scope, construct_id, **kwargs)  # type: ignore[arg-type]
        asset = build_function_asset()
        storage = DigestTables(self, "Storage", settings=settings)
        ingest = QueueIngest(
            self,
            "Ingest",
            settings=settings,
            asset=asset,
            table_name=storage.table.table_name,
            ledger_table_name=storage.ledger.table_name,
        )
        summary = StreamSummary(self, "Summary", settings=settings, asset=asset, table=storage.table)
        monitoring = PipelineMonitoring(
            self,
            "Monitoring",
            settings=settings,
            queue=ingest.queue,
            dead_letter_queue=ingest.dead_letter_queue,
            stream_failure_queue=summary.failure_queue,
            ingest=ingest.function,
            summary=summary.function,
            table=storage.table,
            ledger=storage.ledger,
        )

        api = ReadApi(
            self, "ReadApi", settings=settings, asset=asset, table=storage.table, alarm_topic=monitoring.topic
        )

        # Least privilege: exactly the item actions each function performs, on its tables only.
        ingest.function.add_to_role_policy(
            iam.PolicyStatement(actions=INGEST_DIGEST_ACTIONS, resources=[storage.table.table_arn])
        )
        # markers (one per message; in ordered mode only for a counted message listed behind a failed
        # one) and the lookup of known ones
        ingest.function.add_to_role_policy(
            iam.PolicyStatement(actions=INGEST_LEDGER_ACTIONS, resources=[storage.ledger.table_arn])
        )
        ingest.function.add_to_role_policy(
            iam.PolicyStatement(actions=INGEST_DLQ_ACTIONS, resources=[ingest.dead_letter_queue.queue_arn])
        )
        summary.function.add_to_role_policy(
            iam.PolicyStatement(actions=SUMMARY_DIGEST_ACTIONS, resources=[storage.table.table_arn])
        )
        # Stream read (DescribeStream, GetRecords, GetShardIterator, ListStreams) comes with the event source.

        CfnOutput(self, names.OUTPUT_QUEUE_URL, value=ingest.queue.queue_url)
        CfnOutput(self, names.OUTPUT_DEAD_LETTER_QUEUE_URL, value=ingest.dead_letter_queue.queue_url)
        CfnOutput(self, names.OUTPUT_TABLE_NAME, value=storage.table.table_name)
        CfnOutput(self, names.OUTPUT_LEDGER_TABLE_NAME, value=storage.ledger.table_name)
        CfnOutput(self, names.OUTPUT_DASHBOARD_URL, value=monitoring.dashboard_url)
        CfnOutput(self, names.OUTPUT_STREAM_FAILURE_QUEUE_URL, value=summary.failure_queue.queue_url)
        CfnOutput(self, names.OUTPUT_API_URL, value=api.url)

        self._suppress_nag_findings(ingest, summary)

    def _suppress_nag_findings(self, ingest: QueueIngest, summary: StreamSummary) -> None:
        """Each accepted cdk-nag finding, with the reason and the exact finding it applies to."""
        for function in (ingest.function, summary.function):
            NagSuppressions.add_resource_suppressions(
                function.role,  # type: ignore[arg-type]
                [
                    NagPackSuppression(
                        id="AwsSolutions-IAM5",
                        reason="X-Ray PutTraceSegments/PutTelemetryRecords and DynamoDB ListStreams support no "
                        "resource-level permissions; every other action is scoped to one table, stream or queue.",
                        applies_to=["Resource::*"],
                    ),
                ],
                apply_to_children=True,
            )
        NagSuppressions.add_resource_suppressions(
            [ingest.function, summary.function],
            [
                NagPackSuppression(
                    id="AwsSolutions-L1",
                    reason="Python 3.13, not the newest Lambda runtime (3.14): the newest Python the project runs "
                    "its unit tier on (make test-unit-py313), and no verdict of the functions depends on the "
                    "Python version (their own timestamp grammar and character rule, zones from tzdata).",
                )
            ],
        )
        NagSuppressions.add_resource_suppressions(
            [ingest.dead_letter_queue, summary.failure_queue],
            [
                NagPackSuppression(
                    id="AwsSolutions-SQS3",
                    reason="This queue is itself a dead-letter destination (SQS redrive target or the stream "
                    "event source's on-failure destination); a queue for its failures would have no reader.",
                )
            ],
        )
