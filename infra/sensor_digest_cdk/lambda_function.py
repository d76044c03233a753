"""What the pipeline's functions share: runtime, architecture, Powertools layer, asset, logs, tracing;
and what each one is (``FunctionKind``: its handler, its service name, its props for timeout and memory)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aws_cdk import Duration, Fn
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from sensor_digest import names
from sensor_digest_cdk.removal import removal_policy
from sensor_digest_cdk.shape import PipelineShape

# Python 3.13: the newest the project can also test on (`make test-unit-py313`); the Powertools layer
# follows it (rules.py LAMBDA_PYTHON)
RUNTIME = lambda_.Runtime.PYTHON_3_13


@dataclass(frozen=True)
class FunctionKind:
    """One of the pipeline's functions: its handler, its service name, and its props' prefix
    (``<prefix>_timeout_seconds``, ``<prefix>_memory_mb`` of ``PipelineShape``), or, for a function no
    prop tunes, its timeout and memory (``fixed``)."""

    handler: str
    service: str
    prefix: str = ""
    fixed: tuple[int, int] | None = None  # (timeout in seconds, memory in MB) when no prop sets them

    def timeout_seconds(self, shape: PipelineShape) -> int:
        return self.fixed[0] if self.fixed else int(getattr(shape, f"{self.prefix}_timeout_seconds"))

    def memory_mb(self, shape: PipelineShape) -> int:
        return self.fixed[1] if self.fixed else int(getattr(shape, f"{self.prefix}_memory_mb"))


INGEST = FunctionKind("ingest.handler.handler", names.INGEST_SERVICE, "ingest")
SUMMARY = FunctionKind("summary.handler.handler", names.SUMMARY_SERVICE, "summary")
API = FunctionKind("api.handler.handler", names.API_SERVICE, "api")
# the alarm announcer (alarm_announcer.py): per stream record, a PutEvents of its transitions and a
# PutItem each for the log; a batch of 100 records is seconds of I/O, no CPU to speak of
ANNOUNCER = FunctionKind("announcer.handler.handler", names.ANNOUNCER_SERVICE, fixed=(60, 256))
# the scheduled silence check (silence_check.py): about 7 batched reads per 100 sensors silent for
# days; at 100,000 its time is botocore's CPU (about 60 s of one core, bench/silence.py --at-scale),
# so it gets one full vCPU (1,769 MB: Lambda's CPU grows with memory, and one Python process uses one
# core; CPU-bound work costs about the same GB-seconds at any size) and 300 s
SILENCE = FunctionKind("silence.handler.handler", names.SILENCE_SERVICE, fixed=(300, 1769))
# the history import (history_import.py): the prepare step reads an object through once (its lines and
# its SHA-256, one core: a full vCPU, 15 minutes); a chunk of 10,000 rows takes a few seconds of one
# core to read (an express child workflow: at most 5 minutes); a partition (about 200,000 rows, or one
# sensor-day of up to a million) is counted in a standard child workflow, a full vCPU for its threads and
# the identities it holds; the finish step reads the run's results
IMPORT_PREPARE = FunctionKind("history.handler.prepare", names.IMPORT_SERVICE, fixed=(900, 1769))
IMPORT_READ = FunctionKind("history.handler.read", names.IMPORT_SERVICE, fixed=(240, 1024))
IMPORT_COUNT = FunctionKind("history.handler.count", names.IMPORT_SERVICE, fixed=(900, 1769))
IMPORT_FINISH = FunctionKind("history.handler.finish", names.IMPORT_SERVICE, fixed=(900, 1024))


def python_function(
    scope: Construct,
    construct_id: str,
    *,
    shape: PipelineShape,
    asset: Path,
    kind: FunctionKind,
    environment: dict[str, str],
) -> lambda_.Function:
    service = kind.service
    log_group = logs.LogGroup(
        scope,
        f"{construct_id}Logs",
        retention=RETENTION[shape.log_retention_days],
        removal_policy=removal_policy(shape),
    )
    # A role of its own instead of AWSLambdaBasicExecutionRole (logs:CreateLogGroup, CreateLogStream
    # and PutLogEvents on "*"): the log group exists, so the function may only write its own streams.
    role = iam.Role(
        scope,
        f"{construct_id}Role",
        assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        description=f"{service}: its own logs, and the grants the stack adds",
    )
    role.add_to_policy(
        iam.PolicyStatement(
            actions=["logs:CreateLogStream", "logs:PutLogEvents"],
            resources=[log_group.log_group_arn],  # arn:...:log-group:<name>:*, this group's streams only
        )
    )
    powertools = lambda_.LayerVersion.from_layer_version_arn(
        scope, f"{construct_id}Powertools", Fn.sub(shape.powertools_layer_arn)
    )
    return lambda_.Function(
        scope,
        construct_id,
        runtime=RUNTIME,
        architecture=lambda_.Architecture.ARM_64,
        code=lambda_.Code.from_asset(str(asset)),
        handler=kind.handler,
        role=role,
        layers=[powertools],
        timeout=Duration.seconds(kind.timeout_seconds(shape)),
        memory_size=kind.memory_mb(shape),
        tracing=lambda_.Tracing.ACTIVE,
        log_group=log_group,
        logging_format=lambda_.LoggingFormat.JSON,
        environment={
            "POWERTOOLS_SERVICE_NAME": service,
            "POWERTOOLS_METRICS_NAMESPACE": names.METRICS_NAMESPACE,
            "POWERTOOLS_LOG_LEVEL": "INFO",
            **environment,
        },
    )


RETENTION = {
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    90: logs.RetentionDays.THREE_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
}
