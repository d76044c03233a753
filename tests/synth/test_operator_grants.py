"""``grant_redrive`` covers the dead-letter procedures the operations page prescribes, and no more:
every SQS call that ``dlq list``, ``dlq redrive`` and ``dlq stamp`` make, and what SQS's own redrive
(a message move task) requires of its caller, is allowed on the queue it goes to; nothing else is.

The procedures run on the in-process SQS broker (their calls recorded, with the parameters they were
given, by botocore's ``provide-client-params`` event, as IAM would authorize them); the grant is read
from CDK's synthesized template (no AWS).
"""

from __future__ import annotations

import json
from typing import Any

import aws_cdk as cdk
import boto3
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template

from sensor_digest_cdk import SensorDigestPipeline
from sensor_digest_tools.aws.sqs_broker import ENDPOINT, LocalSqsBroker
from sensor_digest_tools.ops.dlq import list_dead_letters, plan_redrive, queue_depth, redrive, stamp
from tests.support.templates import actions, resources

# IAM authorizes a batch call as its single action ("Batch actions" in SQS's IAM reference)
BATCHED = {"SendMessageBatch": "SendMessage", "DeleteMessageBatch": "DeleteMessage"}
# What SQS's own redrive needs of its caller beyond the call that starts it (SQS's "Configure queue
# permissions for dead-letter queue redrive"): seeing and cancelling the task, and the receive,
# delete and send SQS performs on the caller's behalf
MOVE_TASK_ON_CALLERS_BEHALF = {
    ("dlq", "sqs:ListMessageMoveTasks"),
    ("dlq", "sqs:CancelMessageMoveTask"),
    ("dlq", "sqs:ReceiveMessage"),
    ("dlq", "sqs:DeleteMessage"),
    ("dlq", "sqs:GetQueueAttributes"),
    ("queue", "sqs:SendMessage"),
}


def procedures_calls() -> set[tuple[str, str]]:
    """(queue, IAM action) of every call the dead-letter procedures make, run on the local SQS."""
    broker = LocalSqsBroker()
    session = boto3.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1")
    broker.install(session)
    sqs = session.client("sqs", endpoint_url=ENDPOINT)
    dlq = broker.create_queue("dlq")
    queue = broker.create_queue("queue", dead_letter_url=dlq, max_receive_count=5)
    arns = {
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]: name
        for url, name in ((dlq, "dlq"), (queue, "queue"))
    }
    urls = {dlq: "dlq", queue: "queue"}
    calls: set[tuple[str, str]] = set()

    def record(params: dict[str, Any], model: Any, **_: Any) -> None:
        where = urls.get(params.get("QueueUrl", "")) or arns[params["SourceArn"]]
        calls.add((where, f"sqs:{BATCHED.get(model.name, model.name)}"))

    sqs.meta.events.register("provide-client-params.sqs.*", record)
    for n in range(12):  # letters ingest rejected, and letters SQS moved there itself
        attributes = {"error": {"DataType": "String", "StringValue": "bad"}} if n % 2 else {}
        sqs.send_message(QueueUrl=dlq, MessageBody=json.dumps({"sensor_id": n}), MessageAttributes=attributes)
    calls.clear()  # what the test put there is no procedure's

    list_dead_letters(sqs, dlq)  # dlq list
    queue_depth(sqs, dlq)
    stamp(sqs, dlq)  # dlq stamp
    plan_redrive(sqs, dlq)  # dlq redrive: the question, then the pass
    redrive(sqs, dlq, queue, at_most=6)
    sqs.start_message_move_task(SourceArn=next(a for a, name in arns.items() if name == "dlq"))  # SQS's own
    return calls


def granted(
    template: Template, stack: cdk.Stack, pipeline: SensorDigestPipeline, operator: iam.Role
) -> set[tuple[str, str]]:
    """(queue, action) of what the operator's role may do, from its policy in the template."""
    role = {"Ref": stack.resolve(operator.node.default_child.logical_id)}
    queues = {
        json.dumps(stack.resolve(pipeline.dead_letter_queue.queue_arn)): "dlq",
        json.dumps(stack.resolve(pipeline.queue.queue_arn)): "queue",
    }
    [policy] = [p for p in resources(template, "AWS::IAM::Policy").values() if p["Properties"]["Roles"] == [role]]
    return {
        (queues[json.dumps(statement["Resource"])], action)
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        for action in actions(statement)
    }


def test_grant_redrive_allows_every_call_of_the_documented_procedures_and_nothing_else() -> None:
    # Given an operator granted redrive on a pipeline
    app = cdk.App()
    stack = cdk.Stack(app, "Readings")
    pipeline = SensorDigestPipeline(stack, "Pipeline")
    operator = iam.Role(stack, "Operator", assumed_by=iam.AccountRootPrincipal())
    pipeline.grant_redrive(operator)
    allowed = granted(Template.from_stack(stack), stack, pipeline, operator)

    # When the procedures of the operations page run
    needed = procedures_calls() | MOVE_TASK_ON_CALLERS_BEHALF

    # Then each of their calls is allowed, and the grant holds nothing they do not use (GetQueueUrl
    # comes with CDK's queue grants, for clients that look a queue up by name)
    assert needed <= allowed, needed - allowed
    assert allowed - needed == {
        ("dlq", "sqs:GetQueueUrl"),
        ("queue", "sqs:GetQueueUrl"),
        ("queue", "sqs:GetQueueAttributes"),
    }
