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
from sensor_digest_cdk.pipeline import HIDDEN_ID, SensorDigestPipeline
from sensor_digest_cdk.shape import AppSettings

# with iotTopic: the rule Basic Ingest addresses ($aws/rules/<name>/<topic>); the other outputs are
# named in sensor_digest.names, which the CLI reads (this one it does not)
OUTPUT_IOT_RULE_NAME = "IotRuleName"


class SensorDigestStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, settings: AppSettings, **kwargs: object) -> None:
        super().__init__(scope, construct_id, **kwargs)  # type: ignore[arg-type]
        self.pipeline = pipeline = SensorDigestPipeline(self, HIDDEN_ID, shape=settings.shape)
        CfnOutput(self, names.OUTPUT_QUEUE_URL, value=pipeline.queue.queue_url)
        CfnOutput(self, names.OUTPUT_DEAD_LETTER_QUEUE_URL, value=pipeline.dead_letter_queue.queue_url)
        CfnOutput(self, names.OUTPUT_TABLE_NAME, value=pipeline.table.table_name)
        CfnOutput(self, names.OUTPUT_LEDGER_TABLE_NAME, value=pipeline.ledger.table_name)
        CfnOutput(self, names.OUTPUT_DASHBOARD_URL, value=pipeline.dashboard_url)
        CfnOutput(self, names.OUTPUT_STREAM_FAILURE_QUEUE_URL, value=pipeline.stream_failure_queue.queue_url)
        CfnOutput(self, names.OUTPUT_API_URL, value=pipeline.read_api.url)
        if pipeline.iot is not None:
            CfnOutput(self, OUTPUT_IOT_RULE_NAME, value=pipeline.iot.rule_name)
