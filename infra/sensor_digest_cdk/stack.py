"""app.py's one SensorDigest stack: a thin shell over ``SensorDigestPipeline`` with the outputs.

The pipeline's construct id is ``Default``, which CDK leaves out of logical ids, so every resource
keeps the logical id it had before the pipeline became a construct, and with it the stateful ones
(tables, queues, log groups, the alarm key): an existing stack updates in place. Its tables and
dashboard keep their fixed names (``AppSettings``).
"""

from __future__ import annotations

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from sensor_digest import names
from sensor_digest_cdk.context import AppSettings
from sensor_digest_cdk.pipeline import HIDDEN_ID, SensorDigestPipeline

# with iotTopic: the rule Basic Ingest addresses ($aws/rules/<name>/<topic>); the other outputs are
# named in sensor_digest.names, which the CLI reads (this one it does not)
OUTPUT_IOT_RULE_NAME = "IotRuleName"


class SensorDigestStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, settings: AppSettings, **kwargs: object) -> None:
        super().__init__(scope, construct_id, **kwargs)  # type: ignore[arg-type]
        self.pipeline = pipeline = SensorDigestPipeline(self, HIDDEN_ID, shape=settings.shape)
        outputs = {
            names.OUTPUT_QUEUE_URL: (pipeline.queue.queue_url, "The ingest queue: producers send reports here"),
            names.OUTPUT_DEAD_LETTER_QUEUE_URL: (
                pipeline.dead_letter_queue.queue_url,
                "Rejected reports with their reason, and those that failed every receive (sensor-digest dlq list)",
            ),
            names.OUTPUT_TABLE_NAME: (pipeline.table.table_name, "The digest table: day counts, summaries, profiles"),
            names.OUTPUT_LEDGER_TABLE_NAME: (pipeline.ledger.table_name, "The ledger: one marker per counted report"),
            names.OUTPUT_DASHBOARD_URL: (pipeline.dashboard_url, "The pipeline's CloudWatch dashboard"),
            names.OUTPUT_STREAM_FAILURE_QUEUE_URL: (
                pipeline.stream_failure_queue.queue_url,
                "Stream records the summary gave up on (their positions; repair with sensor-digest summary rebuild)",
            ),
            names.OUTPUT_API_URL: (pipeline.read_api.url, "The read API's base URL (IAM auth: sign with SigV4)"),
            names.OUTPUT_UNKNOWN_SENSORS: (
                settings.shape.unknown_sensors,
                "What ingest does with reports of unregistered sensors (accept, reject); sensor-digest send reads it",
            ),
        }
        outputs[names.OUTPUT_DIGEST_TIMEZONE] = (
            settings.shape.digest_timezone,
            "The zone of day boundaries for sensors registered without one; sensor-digest import reads it",
        )
        if pipeline.history_import is not None:
            outputs[names.OUTPUT_IMPORT_BUCKET] = (
                pipeline.history_import.bucket.bucket_name,
                "The history import's bucket: inputs/ and import-reports/ (sensor-digest import --stack)",
            )
            outputs[names.OUTPUT_IMPORT_STATE_MACHINE] = (
                pipeline.history_import.state_machine.state_machine_arn,
                "The history import: one execution imports one object (sensor-digest import --stack starts it)",
            )
        if pipeline.iot is not None:
            outputs[OUTPUT_IOT_RULE_NAME] = (
                pipeline.iot.rule_name,
                "The IoT topic rule: devices on Basic Ingest publish to $aws/rules/<this name>/<topic>",
            )
        for key, (value, description) in outputs.items():
            CfnOutput(self, key, value=value, description=description)
