"""The alarm announcer: the function fed by the digest table's stream with the alarm writes that made
transitions (``stream_filter.ALARM_FILTER``), its failure queue, and the rule that tells people.

The function (``functions/announcer/handler.py``) puts one event per transition on the account's
default bus (``names.ALARM_EVENT_SOURCE``, ``ALARM_DETAIL_TYPE``) and keeps each in the alarm's log
(a ``PutItem`` of the digest table); its role may put events of that source on that bus only. The
event source reports partial batches, bisects on error, retries a bounded number of times and then
records the batch's stream positions in ``failure_queue`` (an alarm fires on it: an announcement is
stuck). ``announce_to(topic)`` adds the EventBridge rule that sends each event to the alarm topic as
one line of text.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import ArnFormat, Duration, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sns as sns
from constructs import Construct

from sensor_digest import names
from sensor_digest.stream_filter import ALARM_FILTER
from sensor_digest_cdk.lambda_function import ANNOUNCER, python_function
from sensor_digest_cdk.secure_queue import secure_queue
from sensor_digest_cdk.shape import PipelineShape

# Only what the function calls: one PutItem per transition, into the alarm's log
ANNOUNCER_DIGEST_ACTIONS = ["dynamodb:PutItem"]
# The stream's event source: a record carries an alarm's transitions (few), and waits for no window
BATCH_SIZE = 100
RETRY_ATTEMPTS = 10
MAX_RECORD_AGE = Duration.days(1)  # the stream's own retention
DEFAULT_BUS = "default"


def _field(name: str) -> str:
    return events.EventField.from_path(f"$.detail.{name}")


class AlarmAnnouncer(Construct):
    def __init__(
        self, scope: Construct, construct_id: str, *, shape: PipelineShape, asset: Path, table: dynamodb.ITable
    ) -> None:
        super().__init__(scope, construct_id)
        # Where Lambda records a batch it gave up on (the records' stream positions, not the data)
        self.failure_queue = secure_queue(self, "FailureQueue", shape=shape, retention_period=Duration.days(14))
        self.function = python_function(
            self,
            "Function",
            shape=shape,
            asset=asset,
            kind=ANNOUNCER,
            environment=shape.announcer_environment(table=table.table_name),
        )
        self.function.add_event_source(
            sources.DynamoEventSource(
                table,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=BATCH_SIZE,
                bisect_batch_on_error=True,
                retry_attempts=RETRY_ATTEMPTS,
                max_record_age=MAX_RECORD_AGE,
                on_failure=sources.SqsDlq(self.failure_queue),
                report_batch_item_failures=True,
                filters=[lambda_.FilterCriteria.filter(ALARM_FILTER)],
            )
        )
        self.function.add_to_role_policy(
            iam.PolicyStatement(actions=ANNOUNCER_DIGEST_ACTIONS, resources=[table.table_arn])
        )
        self.event_bus_arn = Stack.of(self).format_arn(
            service="events",
            resource="event-bus",
            resource_name=DEFAULT_BUS,
            arn_format=ArnFormat.SLASH_RESOURCE_NAME,
        )
        # the account's default bus, and only events of the announcer's source
        self.function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["events:PutEvents"],
                resources=[self.event_bus_arn],
                conditions={"StringEquals": {"events:source": names.ALARM_EVENT_SOURCE}},
            )
        )
        self.rule: events.Rule | None = None

    def announce_to(self, topic: sns.ITopic, *, label: str, pipeline: str) -> events.Rule:
        """The rule on the default bus that sends each alarm event to ``topic`` as one line:
        ``Sensor Digest alarm: sensor 7, rule hot: NORMAL -> ACTIVE, value 41.5, report time ...
        (transition ...)``. Its target grants EventBridge ``sns:Publish`` in the topic's policy and the
        use of its key. The default bus is the account's: the rule takes this pipeline's events only
        (``detail.pipeline``, the announcer's ``SENSOR_DIGEST_PIPELINE``), never a second pipeline's."""
        line = (
            f"Sensor Digest alarm: sensor {_field('sensor_id')}, rule {_field('rule')}: "
            f"{_field('previous')} -> {_field('state')}, value {_field('value')}, "
            f"report time {_field('report_time')} (transition {_field('transition_id')})"
        )
        self.rule = events.Rule(
            self,
            "StateChanges",
            description=f"{label}: alarm state changes to the alarm topic, one line each",
            event_pattern=events.EventPattern(
                source=[names.ALARM_EVENT_SOURCE],
                detail_type=[names.ALARM_DETAIL_TYPE],
                detail={"pipeline": [pipeline]},
            ),
            targets=[targets.SnsTopic(topic, message=events.RuleTargetInput.from_text(line))],
        )
        return self.rule
