"""Alarms (to an encrypted SNS topic) and one dashboard for the whole pipeline."""

from __future__ import annotations

from aws_cdk import Aws, Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.settings import Settings

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
        self.topic = sns.Topic(
            self,
            "AlarmTopic",
            master_key=kms.Alias.from_alias_name(self, "SnsKey", "alias/aws/sns"),
            enforce_ssl=True,
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
                right=[queue.metric_approximate_age_of_oldest_message(period=PERIOD)],
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
