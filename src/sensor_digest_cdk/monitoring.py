"""Alarms (to an encrypted SNS topic) and one dashboard for the whole pipeline."""

from __future__ import annotations

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

from sensor_digest_cdk.shape import Settings

NAMESPACE = "SensorDigest"
PERIOD = Duration.minutes(5)


class Monitoring(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: Settings,
        queue: sqs.IQueue,
        dead_letter_queue: sqs.IQueue,
        stream_failure_queue: sqs.IQueue,
        ingest: lambda_.IFunction,
        summary: lambda_.IFunction,
        table: dynamodb.ITable,
        ledger: dynamodb.ITable,
    ) -> None:
        super().__init__(scope, construct_id)
        # CloudWatch cannot publish to a topic encrypted with the AWS-managed aws/sns key (its key
        # policy cannot admit cloudwatch.amazonaws.com), so the topic gets a key of its own whose
        # policy lets CloudWatch alarms of this account use it, and a topic policy that lets them publish.
        cloudwatch_of_this_account = {
            "principals": [iam.ServicePrincipal("cloudwatch.amazonaws.com")],
            "conditions": {"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}},
        }
        self.key = kms.Key(
            self,
            "AlarmTopicKey",
            description=f"{settings.stack_name}: encrypts the alarm topic; CloudWatch alarms may use it",
            enable_key_rotation=True,
            removal_policy=settings.removal_policy,
        )
        self.key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowCloudWatchAlarmsToUseTheKey",
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],  # in a key policy, "*" is this key
                **cloudwatch_of_this_account,  # type: ignore[arg-type]
            )
        )
        self.topic = sns.Topic(self, "AlarmTopic", master_key=self.key, enforce_ssl=True)
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowCloudWatchAlarmsToPublish",
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                **cloudwatch_of_this_account,  # type: ignore[arg-type]
            )
        )
        if settings.alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(settings.alarm_email))

        throttled_ops = [
            dynamodb.Operation.PUT_ITEM,
            dynamodb.Operation.UPDATE_ITEM,
            dynamodb.Operation.TRANSACT_WRITE_ITEMS,
        ]
        alarms = {
            "DeadLetters": (
                dead_letter_queue.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum"),
                0,
                "Rejected or repeatedly failing messages wait in the dead-letter queue",
            ),
            "IngestStalled": (
                queue.metric_approximate_age_of_oldest_message(period=PERIOD, statistic="Maximum"),
                settings.queue_age_threshold_seconds,
                "Reports wait in the ingest queue longer than they would through every retry: "
                "ingest is not consuming (event source disabled, a broken deploy, a stuck function)",
            ),
            "IngestErrors": (
                ingest.metric_errors(period=PERIOD),
                0,
                "The ingest function raised (a batch failed as a whole)",
            ),
            "SummaryIteratorAge": (
                summary.metric("IteratorAge", period=PERIOD, statistic="Maximum"),
                settings.iterator_age_alarm_seconds * 1000,
                "The summary falls behind the table's stream",
            ),
            "IngestThrottles": (ingest.metric_throttles(period=PERIOD), 0, "Ingest invocations are throttled"),
            "SummaryThrottles": (summary.metric_throttles(period=PERIOD), 0, "Summary invocations are throttled"),
            "TableThrottles": (
                table.metric_throttled_requests_for_operations(operations=throttled_ops, period=PERIOD),
                0,
                "DynamoDB throttles writes to the digest table",
            ),
            "LedgerThrottles": (
                ledger.metric_throttled_requests_for_operations(operations=throttled_ops, period=PERIOD),
                0,
                "DynamoDB throttles writes to the ledger",
            ),
            "StreamFailures": (
                stream_failure_queue.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum"),
                0,
                "The summary gave up on stream records (see the stream failure queue)",
            ),
        }
        self.alarms: dict[str, cloudwatch.Alarm] = {}
        for name, (metric, threshold, description) in alarms.items():
            alarm = cloudwatch.Alarm(
                self,
                f"{name}Alarm",
                metric=metric,
                threshold=threshold,
                evaluation_periods=1,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
                alarm_description=description,
            )
            alarm.add_alarm_action(actions.SnsAction(self.topic))
            self.alarms[name] = alarm

        def custom(name: str, service: str) -> cloudwatch.Metric:
            return cloudwatch.Metric(
                namespace=NAMESPACE,
                metric_name=name,
                dimensions_map={"service": service},
                statistic="Sum",
                period=PERIOD,
            )

        self.dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=f"{settings.stack_name}-pipeline")
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Ingest outcomes",
                left=[custom(n, "sensor-digest-ingest") for n in ("counted", "duplicate", "rejected", "failed")],
            ),
            cloudwatch.GraphWidget(
                title="Queues",
                left=[
                    queue.metric_approximate_number_of_messages_visible(period=PERIOD),
                    dead_letter_queue.metric_approximate_number_of_messages_visible(period=PERIOD),
                    stream_failure_queue.metric_approximate_number_of_messages_visible(period=PERIOD),
                ],
                right=[queue.metric_approximate_age_of_oldest_message(period=PERIOD, statistic="Maximum")],
                right_annotations=[
                    cloudwatch.HorizontalAnnotation(
                        value=settings.queue_age_threshold_seconds, label="ingest stalled (alarm)"
                    )
                ],
            ),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Summary",
                left=[custom(n, "sensor-digest-summary") for n in ("summaryWritten", "summaryStale", "summaryFailed")],
                right=[summary.metric("IteratorAge", period=PERIOD, statistic="Maximum")],
            ),
            cloudwatch.GraphWidget(
                title="Functions",
                left=[ingest.metric_errors(period=PERIOD), summary.metric_errors(period=PERIOD)],
                right=[ingest.metric_duration(period=PERIOD), summary.metric_duration(period=PERIOD)],
            ),
            cloudwatch.GraphWidget(
                title="DynamoDB write capacity consumed",
                left=[
                    table.metric_consumed_write_capacity_units(period=PERIOD),
                    ledger.metric_consumed_write_capacity_units(period=PERIOD),
                ],
            ),
        )
        self.dashboard_url = (
            f"https://{Aws.REGION}.console.aws.amazon.com/cloudwatch/home?region={Aws.REGION}"
            f"#dashboards:name={settings.stack_name}-pipeline"
        )
