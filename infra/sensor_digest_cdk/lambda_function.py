"""What both functions share: runtime, architecture, Powertools layer, asset, logs, tracing."""

from __future__ import annotations

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


def python_function(
    scope: Construct,
    construct_id: str,
    *,
    shape: PipelineShape,
    asset: Path,
    handler: str,
    service: str,
    timeout_seconds: int,
    memory_mb: int,
    environment: dict[str, str],
) -> lambda_.Function:
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
        handler=handler,
        role=role,
        layers=[powertools],
        timeout=Duration.seconds(timeout_seconds),
        memory_size=memory_mb,
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
