"""What ``SensorDigestPipeline`` checks and derives beside its resources: the name its metrics carry,
the producers' ARNs its queue policy admits, and the validations it adds at synth (a restricted
queue that admits nobody, FIFO queue names past SQS's 80 characters)."""

from __future__ import annotations

import jsii
from aws_cdk import IStableListProducer, Stack, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sqs as sqs
from constructs import Construct, IValidation

from sensor_digest.config import PIPELINE_NAME_MAX
from sensor_digest_cdk.rules import SQS_QUEUE_NAME_MAX, fifo_queue_name_length, prop_key
from sensor_digest_cdk.workable import admits_no_sender


def pipeline_name(pipeline: Construct, stack: Stack, *, hidden: bool) -> str:
    """The value of the ``pipeline`` dimension of every metric the pipeline publishes and graphs:
    its stack's name (unique in an account and region), and its path in the stack unless it is the
    app's ``Default``: ``SensorDigest``, ``SensorDigestStaging``, ``Readings/Plain``. CloudWatch
    takes ASCII only (``config.pipeline_name`` checks it again at the functions' cold start)."""
    within = pipeline.node.path.removeprefix(f"{stack.node.path}/") if stack.node.path else pipeline.node.path
    name = stack.stack_name if hidden else f"{stack.stack_name}/{within}"
    if not Token.is_unresolved(name) and (not name.isascii() or len(name) > PIPELINE_NAME_MAX):
        raise ValueError(
            f"the pipeline's name {name[:60]!r} (its stack's name and construct path) names its metrics: CloudWatch "
            f"takes at most {PIPELINE_NAME_MAX} ASCII characters; use construct ids in ASCII"
        )
    return name


def principal_arn(grantee: iam.IGrantable, home: Stack) -> str:
    """The ARN the queue policy's ``aws:PrincipalArn`` condition sees for ``grantee``, whose ARN the
    policy in stack ``home`` can name: a role or user made in another stack cannot be, since the
    grant already makes that stack depend on ``home`` (the two would depend on each other)."""
    principal = grantee.grant_principal
    for attribute in ("role_arn", "user_arn", "arn"):
        arn = getattr(principal, attribute, None)
        if not isinstance(arn, str):
            continue
        if isinstance(principal, Construct) and Token.is_unresolved(arn):
            theirs = Stack.of(principal)
            if theirs.node.path != home.node.path:
                raise ValueError(
                    f"grant_send with restrict_producers: {principal.node.path} is made in stack {theirs.stack_name}, "
                    f"not {home.stack_name}, so the queue policy naming its ARN and its grant would make the two "
                    "stacks depend on each other; give its ARN as text in producer_arns and grant it in its own "
                    "stack with pipeline.queue.grant_send_messages(role)"
                )
        return arn
    raise TypeError(
        f"grant_send with restrict_producers admits producers by IAM ARN: {principal} is no IAM role, user "
        "or ArnPrincipal"
    )


@jsii.implements(IStableListProducer)
class Producers:
    """The producers' ARNs as they stand at synth (``grant_send`` may add some after construction)."""

    def __init__(self, arns: list[str]) -> None:
        self._arns = arns

    def produce(self) -> list[str]:
        return list(self._arns)


@jsii.implements(IValidation)
class SomeProducer:
    """restrict_producers with nobody admitted would close the queue to every sender; ``producers`` is
    the list ``grant_send`` adds to, read at synth."""

    def __init__(self, producers: list[str]) -> None:
        self._producers = producers

    def validate(self) -> list[str]:
        return [] if self._producers else [admits_no_sender(prop_key, construct=True)]


@jsii.implements(IValidation)
class FifoNamesFit:
    """A FIFO queue's generated name (<stack>-<logical id>-<suffix>.fifo) must fit SQS's 80 characters
    (``rules.fifo_queue_name_length``)."""

    def __init__(self, stack: Stack, queues: tuple[sqs.Queue, ...]) -> None:
        self._stack = stack
        self._queues = queues

    def validate(self) -> list[str]:
        stack = self._stack
        problems = []
        for queue in self._queues:
            logical_id = stack.resolve(queue.node.default_child.logical_id)  # type: ignore[union-attr]
            length = fifo_queue_name_length(stack.stack_name, logical_id)
            if length > SQS_QUEUE_NAME_MAX:
                problems.append(
                    f"queue_type='fifo': the FIFO queue {logical_id} of stack {stack.stack_name} would get a "
                    f"generated name of {length} characters, over SQS's {SQS_QUEUE_NAME_MAX}: use a shorter "
                    "stack name or construct id"
                )
        return problems
