"""``SilenceCheck``: the scheduled silence check (``sensor_digest/silence/``), deployed when the
shape's ``silence_hours`` is set (off by default: see docs/operations.md, "Silent sensors").

An EventBridge rule runs the check function every hour (a threshold is whole hours of the sensors'
``HourCounts``: checking more often finds nothing new); the function reads the ``Profiles`` index,
the profiles, the day items and month summaries (``Query`` and ``BatchGetItem``, on the digest table
and that index only: no ``Scan``, no write), and publishes ``silentSensors`` and
``silenceUnchecked`` with the pipeline's dimension; an alarm on each notifies the pipeline's alarm
topic: while any registered sensor is silent, and when the check could not decide a sensor (its
reads failed: the check's log line names it).
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_sns as sns
from constructs import Construct

from sensor_digest import names
from sensor_digest_cdk import nag
from sensor_digest_cdk.lambda_function import SILENCE
from sensor_digest_cdk.monitoring import alarm
from sensor_digest_cdk.read_api import table_reader
from sensor_digest_cdk.shape import PipelineShape

CHECK_EVERY = Duration.hours(1)
# Only what the check calls: a Query of the Profiles index (and of a sensor's partition, for the day
# it last reported) and BatchGetItem of profiles and day items
CHECK_ACTIONS = ["dynamodb:Query", "dynamodb:BatchGetItem"]


class SilenceCheck(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        shape: PipelineShape,
        asset: Path,
        table: dynamodb.ITable,
        pipeline: str,
        alarm_topic: sns.ITopic,
    ) -> None:
        super().__init__(scope, construct_id)
        self.function = table_reader(
            self,
            shape=shape,
            asset=asset,
            kind=SILENCE,
            table=table,
            actions=CHECK_ACTIONS,
            environment=shape.silence_environment(table=table.table_name),
        )
        self.rule = events.Rule(
            self,
            "Schedule",
            description="SensorDigest: find the registered sensors silent past their threshold",
            schedule=events.Schedule.rate(CHECK_EVERY),
            targets=[targets.LambdaFunction(self.function, retry_attempts=2)],
        )
        self.metric = cloudwatch.Metric(
            namespace=names.METRICS_NAMESPACE,
            metric_name=names.METRIC_SILENT_SENSORS,
            dimensions_map={"service": names.SILENCE_SERVICE, names.PIPELINE_DIMENSION: pipeline},
            statistic="Maximum",
            period=CHECK_EVERY,
        )
        self.alarm = alarm(
            self,
            "SilentSensorsAlarm",
            self.metric,
            "Registered sensors sent no report for longer than their silence threshold "
            "(sensor-digest silence, or GET /silence, names them and since when)",
            topic=alarm_topic,
        )
        self.unchecked_alarm = alarm(
            self,
            "UncheckedSensorsAlarm",
            cloudwatch.Metric(
                namespace=names.METRICS_NAMESPACE,
                metric_name=names.METRIC_SILENCE_UNCHECKED,
                dimensions_map={"service": names.SILENCE_SERVICE, names.PIPELINE_DIMENSION: pipeline},
                statistic="Maximum",
                period=CHECK_EVERY,
            ),
            "The silence check could not decide some registered sensors: their reads failed "
            "(the check's log line `silence checked` names them and why; the others were checked)",
            topic=alarm_topic,
        )
        self.errors_alarm = alarm(
            self,
            "SilenceCheckErrorsAlarm",
            self.function.metric_errors(period=CHECK_EVERY),
            "The silence check failed: silent sensors would go unreported",
            topic=alarm_topic,
        )
        self._suppress_nag_findings()

    def _suppress_nag_findings(self) -> None:
        """The check function's accepted cdk-nag findings (the read API's query function's, alike)."""
        nag.accept_table_reader(self.function, self.function.role, "the check")  # type: ignore[arg-type]
