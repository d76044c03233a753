"""The shape's ``removal`` as CDK's policy for every stateful resource: tables, queues, log groups, keys."""

from __future__ import annotations

from aws_cdk import RemovalPolicy

from sensor_digest_cdk.shape import PipelineShape


def removal_policy(shape: PipelineShape) -> RemovalPolicy:
    return RemovalPolicy.DESTROY if shape.destroy else RemovalPolicy.RETAIN
