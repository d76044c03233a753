"""Alarms (to an encrypted SNS topic) and one dashboard for the whole pipeline.

``PipelineMonitoring`` builds them in three steps, one method each: ``_alarm_topic`` (the topic and
its key, which CloudWatch alarms may use), ``_alarms`` (one per way the pipeline can go wrong, each
to the topic) and ``_dashboard``. ``alarm`` is the shape of every alarm of the pipeline, the other
constructs' (the read API's, the silence check's, the history import's) too.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Aws, Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from sensor_digest import names
from sensor_digest_cdk.removal import removal_policy
from sensor_digest_cdk.shape import PipelineShape

PERIOD = Duration.minutes(5)


def alarm(
    scope: Construct,
    construct_id: str,
    metric: cloudwatch.IMetric,
    description: str,
    *,
    threshold: float = 0,
    topic: sns.ITopic | None = None,
) -> cloudwatch.Alarm:
    """One of the pipeline's alarms: ``metric`` above ``threshold`` in one period (no data: not breaching),
    notifying ``topic`` when given."""
    made = cloudwatch.Alarm(
        scope,
        construct_id,
        metric=metric,
        threshold=threshold,
        evaluation_periods=1,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        alarm_description=description,
    )
    if topic is not None:
        made.add_alarm_action(actions.SnsAction(topic))
    return made


@dataclass(frozen=True)
class Watched:
    """What the alarms and the dashboard watch."""

    queue: sqs.IQueue
    dead_letter_queue: sqs.IQueue
    stream_failure_queue: sqs.IQueue
    ingest: lambda_.IFunction
    summary: lambda_.IFunction
    table: dynamodb.ITable
    ledger: dynamodb.ITable
    announcer: lambda_.IFunction
    announcer_failure_queue: sqs.IQueue


class PipelineMonitoring(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        shape: PipelineShape,
        label: str,
        queue: sqs.IQueue,
        dead_letter_queue: sqs.IQueue,
        stream_failure_queue: sqs.IQueue,
        ingest: lambda_.IFunction,
        summary: lambda_.IFunction,
        table: dynamodb.ITable,
        ledger: dynamodb.ITable,
        announcer: lambda_.IFunction,
        announcer_failure_queue: sqs.IQueue,
        pipeline: str,
    ) -> None:
        super().__init__(scope, construct_id)
        self._shape = shape
        self._label = label
        self._pipeline = pipeline
        self.key, self.topic = self._alarm_topic()
        self._watched = Watched(
            queue,
            dead_letter_queue,
            stream_failure_queue,
            ingest,
            summary,
            table,
            ledger,
            announcer,
            announcer_failure_queue,
        )
        self.alarms = self._alarms()
        self.dashboard = self._dashboard()
        self.dashboard_url = (
            f"https://{Aws.REGION}.console.aws.amazon.com/cloudwatch/home?region={Aws.REGION}"
            f"#dashboards:name={shape.dashboard_name or self.dashboard.dashboard_name}"
        )

    def _alarm_topic(self) -> tuple[kms.Key, sns.Topic]:
        """CloudWatch cannot publish to a topic encrypted with the AWS-managed aws/sns key (its key
        policy cannot admit cloudwatch.amazonaws.com), so the topic gets a key of its own whose
        policy lets CloudWatch alarms of this account use it, and a topic policy that lets them publish."""
        cloudwatch_of_this_account = {
            "principals": [iam.ServicePrincipal("cloudwatch.amazonaws.com")],
            "conditions": {"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}},
        }
        key = kms.Key(
            self,
            "AlarmTopicKey",
            description=f"{self._label}: encrypts the alarm topic; CloudWatch alarms may use it",
            enable_key_rotation=True,
            removal_policy=removal_policy(self._shape),
        )
        key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowCloudWatchAlarmsToUseTheKey",
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],  # in a key policy, "*" is this key
                **cloudwatch_of_this_account,  # type: ignore[arg-type]
            )
        )
        topic = sns.Topic(self, "AlarmTopic", master_key=key, enforce_ssl=True)
        topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowCloudWatchAlarmsToPublish",
                actions=["sns:Publish"],
                resources=[topic.topic_arn],
                **cloudwatch_of_this_account,  # type: ignore[arg-type]
            )
        )
        if self._shape.alarm_email:
            topic.add_subscription(subscriptions.EmailSubscription(self._shape.alarm_email))
        return key, topic

    def _alarms(self) -> dict[str, cloudwatch.Alarm]:
        """One alarm per way the pipeline can go wrong, each notifying the topic."""
        w = self._watched
        throttled_ops = [
            dynamodb.Operation.PUT_ITEM,
            dynamodb.Operation.UPDATE_ITEM,
            dynamodb.Operation.TRANSACT_WRITE_ITEMS,
        ]
        alarms = {
            "DeadLetters": (
                w.dead_letter_queue.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum"),
                0,
                "Rejected or repeatedly failing messages wait in the dead-letter queue",
            ),
            "IngestStalled": (
                w.queue.metric_approximate_age_of_oldest_message(period=PERIOD, statistic="Maximum"),
                self._shape.queue_age_threshold_seconds,
                "Reports wait in the ingest queue longer than they would through every retry: "
                "ingest is not consuming (event source disabled, a broken deploy, a stuck function)",
            ),
            "IngestErrors": (
                w.ingest.metric_errors(period=PERIOD),
                0,
                "The ingest function raised (a batch failed as a whole)",
            ),
            "SummaryIteratorAge": (
                w.summary.metric("IteratorAge", period=PERIOD, statistic="Maximum"),
                self._shape.iterator_age_alarm_seconds * 1000,
                "The summary falls behind the table's stream",
            ),
            "IngestThrottles": (w.ingest.metric_throttles(period=PERIOD), 0, "Ingest invocations are throttled"),
            "SummaryThrottles": (w.summary.metric_throttles(period=PERIOD), 0, "Summary invocations are throttled"),
            "TableThrottles": (
                w.table.metric_throttled_requests_for_operations(operations=throttled_ops, period=PERIOD),
                0,
                "DynamoDB throttles writes to the digest table",
            ),
            "LedgerThrottles": (
                w.ledger.metric_throttled_requests_for_operations(operations=throttled_ops, period=PERIOD),
                0,
                "DynamoDB throttles writes to the ledger",
            ),
            "StreamFailures": (
                w.stream_failure_queue.metric_approximate_number_of_messages_visible(
                    period=PERIOD, statistic="Maximum"
                ),
                0,
                "The summary gave up on stream records (see the stream failure queue)",
            ),
            "AnnouncementStuck": (
                w.announcer_failure_queue.metric_approximate_number_of_messages_visible(
                    period=PERIOD, statistic="Maximum"
                ),
                0,
                "An announcement is stuck: the announcer gave up on alarm transitions after its retries "
                "(their stream positions wait in its failure queue; the alarms' states are stored)",
            ),
            "AnnouncerIteratorAge": (
                w.announcer.metric("IteratorAge", period=PERIOD, statistic="Maximum"),
                self._shape.iterator_age_alarm_seconds * 1000,
                "The alarm announcer falls behind the table's stream: alarm events arrive late",
            ),
        }
        return {
            name: alarm(self, f"{name}Alarm", metric, description, threshold=threshold, topic=self.topic)
            for name, (metric, threshold, description) in alarms.items()
        }

    def _dashboard(self) -> cloudwatch.Dashboard:
        """One dashboard: ingest outcomes, queues, summary, functions, write capacity."""
        w = self._watched

        def custom(name: str, service: str) -> cloudwatch.Metric:
            """One of the functions' own metrics: this pipeline's series only (its ``pipeline`` dimension)."""
            return cloudwatch.Metric(
                namespace=names.METRICS_NAMESPACE,
                metric_name=name,
                dimensions_map={"service": service, names.PIPELINE_DIMENSION: self._pipeline},
                statistic="Sum",
                period=PERIOD,
            )

        dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=self._shape.dashboard_name or None)
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Ingest outcomes",
                left=[custom(n, names.INGEST_SERVICE) for n in names.INGEST_METRICS],
            ),
            cloudwatch.GraphWidget(
                title="Queues",
                left=[
                    w.queue.metric_approximate_number_of_messages_visible(period=PERIOD),
                    w.dead_letter_queue.metric_approximate_number_of_messages_visible(period=PERIOD),
                    w.stream_failure_queue.metric_approximate_number_of_messages_visible(period=PERIOD),
                    w.announcer_failure_queue.metric_approximate_number_of_messages_visible(period=PERIOD),
                ],
                right=[w.queue.metric_approximate_age_of_oldest_message(period=PERIOD, statistic="Maximum")],
                right_annotations=[
                    cloudwatch.HorizontalAnnotation(
                        value=self._shape.queue_age_threshold_seconds, label="ingest stalled (alarm)"
                    )
                ],
            ),
        )
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Summary",
                left=[
                    custom(n, names.SUMMARY_SERVICE)
                    for n in (names.METRIC_SUMMARY_WRITTEN, names.METRIC_SUMMARY_STALE, names.METRIC_SUMMARY_FAILED)
                ],
                right=[w.summary.metric("IteratorAge", period=PERIOD, statistic="Maximum")],
            ),
            cloudwatch.GraphWidget(
                title="Functions",
                left=[f.metric_errors(period=PERIOD) for f in (w.ingest, w.summary, w.announcer)],
                right=[f.metric_duration(period=PERIOD) for f in (w.ingest, w.summary, w.announcer)],
            ),
            cloudwatch.GraphWidget(
                title="DynamoDB write capacity consumed",
                left=[
                    w.table.metric_consumed_write_capacity_units(period=PERIOD),
                    w.ledger.metric_consumed_write_capacity_units(period=PERIOD),
                ],
            ),
        )
        return dashboard
