"""Every queue of the stack: SSE-SQS encryption, TLS only, removed or kept with the stack."""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_sqs as sqs
from constructs import Construct

from sensor_digest_cdk.shape import Settings


def secure_queue(scope: Construct, construct_id: str, *, settings: Settings, **props: Any) -> sqs.Queue:
    return sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        removal_policy=settings.removal_policy,
        **props,
    )
