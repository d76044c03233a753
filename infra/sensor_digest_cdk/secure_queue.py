"""Every queue of the stack: SSE-SQS encryption, TLS only, removed or kept with the stack."""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_sqs as sqs
from constructs import Construct

from sensor_digest_cdk.removal import removal_policy
from sensor_digest_cdk.shape import PipelineShape


def secure_queue(scope: Construct, construct_id: str, *, shape: PipelineShape, **props: Any) -> sqs.Queue:
    return sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        removal_policy=removal_policy(shape),
        **props,
    )
