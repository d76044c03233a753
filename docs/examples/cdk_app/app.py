#!/usr/bin/env python3
"""A CDK app of your own with two SensorDigest pipelines in one stack: one on a standard queue with
its producers restricted (and, given ``-c iotTopic=...``, fed by AWS IoT Core), one on a FIFO
queue (ordered mode). Needs nothing but ``pip install "sensor-digest[cdk]"`` (or a checkout's
``pip install "<checkout>[cdk]"``) and the CDK CLI: ``cdk synth --app "python app.py"``.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from cdk_nag import AwsSolutionsChecks

from sensor_digest_cdk import SensorDigestPipeline

app = cdk.App()
stack = cdk.Stack(app, "Readings")

# Reports from your services (and devices, through AWS IoT): only the principals granted may send.
plain = SensorDigestPipeline(
    stack,
    "Plain",
    restrict_producers=True,
    iot_topic=app.node.try_get_context("iotTopic") or "",
    alarm_email="ops@example.com",
)
producer = iam.Role(stack, "Producer", assumed_by=iam.ServicePrincipal("ecs-tasks.amazonaws.com"))
plain.grant_send(producer)

# Reports that must count in the order each sensor sent them: a FIFO queue, one group per sensor.
ordered = SensorDigestPipeline(stack, "Ordered", queue_type="fifo", removal="destroy")
reader = iam.Role(stack, "Reader", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
ordered.grant_read(reader)  # the tables themselves
ordered.read_api.grant_invoke(reader)  # its read API's routes (cdk-nag's finding on their {sensor_id} is accepted)

# An operator of the dead-letter queue: dlq list, redrive, stamp, and SQS's own redrive
operator = iam.Role(stack, "Operator", assumed_by=iam.AccountRootPrincipal())
plain.grant_redrive(operator)

cdk.CfnOutput(stack, "PlainQueueUrl", value=plain.queue.queue_url)
cdk.CfnOutput(stack, "OrderedQueueUrl", value=ordered.queue.queue_url)
# cdk-nag 3 runs as a validation plugin: a finding nobody accepted fails the synthesis (on cdk-nag 2,
# `cdk.Aspects.of(app).add(AwsSolutionsChecks(verbose=True))`; the pipelines accept their findings on both)
cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app, verbose=True))
app.synth()
