"""``SensorDigestPipeline`` as a user composes it: inside a stack of the user's own (not app.py's),
two at once, with its props checked, its grants, the producers' restriction and cdk-nag. Template
tests on CDK's synthesizer (no AWS); properties and references, never hashed logical ids."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Match, Template

from sensor_digest_cdk import PipelineShape, SensorDigestPipeline, ShapeError
from sensor_digest_cdk.pipeline import PRODUCERS_SID
from tests.support.nag import unaccepted
from tests.support.templates import resources

PRODUCER = "arn:aws:iam::123456789012:role/producer"


def foreign_stack(build: Callable[[cdk.Stack], object], name: str = "Readings") -> tuple[cdk.Stack, Template]:
    """A user's own app and stack, ``build`` composing pipelines in it, cdk-nag on the app."""
    app = cdk.App()
    stack = cdk.Stack(app, name)
    build(stack)
    return stack, Template.from_stack(stack)


@pytest.fixture(scope="module")
def two_pipelines() -> tuple[cdk.Stack, Template, dict[str, SensorDigestPipeline]]:
    made: dict[str, SensorDigestPipeline] = {}

    def build(stack: cdk.Stack) -> None:
        made["plain"] = SensorDigestPipeline(stack, "Plain")
        made["ordered"] = SensorDigestPipeline(stack, "Ordered", queue_type="fifo", removal="destroy")

    stack, template = foreign_stack(build)
    return stack, template, made


def test_two_pipelines_in_one_stack_get_their_own_resources_under_generated_names(
    two_pipelines: tuple[cdk.Stack, Template, dict[str, SensorDigestPipeline]],
) -> None:
    _, template, _ = two_pipelines
    template.resource_count_is("AWS::DynamoDB::Table", 4)
    template.resource_count_is("AWS::SQS::Queue", 8)
    template.resource_count_is("AWS::Lambda::Function", 8)  # ingest, summary, alarm announcer, read API
    template.resource_count_is("AWS::CloudWatch::Alarm", 24)  # 12 each: the read API's 5xx alarm among them
    template.resource_count_is("AWS::CloudWatch::Dashboard", 2)
    assert all("TableName" not in t["Properties"] for t in resources(template, "AWS::DynamoDB::Table").values())
    dashboards = resources(template, "AWS::CloudWatch::Dashboard").values()
    assert all("DashboardName" not in d["Properties"] for d in dashboards)
    assert len([q for q in resources(template, "AWS::SQS::Queue").values() if q["Properties"].get("FifoQueue")]) == 2


def test_each_pipelines_ingest_reads_its_own_tables_and_queue(
    two_pipelines: tuple[cdk.Stack, Template, dict[str, SensorDigestPipeline]],
) -> None:
    stack, template, made = two_pipelines
    for pipeline, queue_type in ((made["plain"], "standard"), (made["ordered"], "fifo")):
        template.has_resource_properties(
            "AWS::Lambda::Function",
            {
                "Handler": "ingest.handler.handler",
                "Environment": {
                    "Variables": Match.object_like(
                        {
                            "TABLE_NAME": stack.resolve(pipeline.table.table_name),
                            "LEDGER_TABLE_NAME": stack.resolve(pipeline.ledger.table_name),
                            "DLQ_URL": stack.resolve(pipeline.dead_letter_queue.queue_url),
                            "QUEUE_TYPE": queue_type,
                        }
                    )
                },
            },
        )


def test_cdk_nag_finds_nothing_unsuppressed_in_a_users_stack(
    two_pipelines: tuple[cdk.Stack, Template, dict[str, SensorDigestPipeline]],
) -> None:
    stack, _, _ = two_pipelines
    assert unaccepted(stack.node.root, stack) == []


def test_bad_props_are_refused_before_anything_is_built_one_line_each() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Readings")
    with pytest.raises(ShapeError) as refused:
        SensorDigestPipeline(
            stack,
            "Bad",
            queue_typ="fifo",  # type: ignore[call-arg]
            ingest_batch_size=0,
            alarm_email="x",
            read_capacity="5",  # type: ignore[typeddict-item]
        )
    assert refused.value.problems == [
        "unknown prop 'queue_typ': did you mean 'queue_type'?",
        "prop read_capacity='5' is not allowed: read_capacity takes a whole number from 1 to 40000 "
        "(DynamoDB's default quota per table; with billing=provisioned)",
        "prop ingest_batch_size=0 is not allowed: ingest_batch_size takes a whole number from 1 to 10000 "
        "(Lambda's limit for a standard queue)",
        "prop alarm_email='x' is not allowed: alarm_email takes an email address (name@example.com), or nothing "
        "for no subscription",
    ]
    assert stack.node.try_find_child("Bad") is None


def test_a_combination_aws_refuses_is_named_in_the_props_own_words() -> None:
    with pytest.raises(ShapeError, match=r"^prop delivery_mode='at-least-once' with queue_type='fifo' is not allowed"):
        PipelineShape.from_props(queue_type="fifo", delivery_mode="at-least-once")


def test_a_shape_built_beforehand_is_the_props() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Readings")
    pipeline = SensorDigestPipeline(stack, "Pipeline", shape=PipelineShape(ingest_batch_size=500, table_name="Counts"))
    template = Template.from_stack(stack)
    template.has_resource_properties("AWS::DynamoDB::Table", {"TableName": "Counts"})
    template.has_resource_properties("AWS::Lambda::EventSourceMapping", {"BatchSize": 500})
    assert pipeline.shape.ingest_batch_size == 500


def test_grant_send_and_grant_read_give_producers_and_consumers_what_they_need_only() -> None:
    def build(stack: cdk.Stack) -> None:
        pipeline = SensorDigestPipeline(stack, "Pipeline")
        pipeline.grant_send(iam.Role(stack, "Producer", assumed_by=iam.AccountRootPrincipal()))
        pipeline.grant_read(iam.Role(stack, "Reader", assumed_by=iam.AccountRootPrincipal()))

    _, template = foreign_stack(build)
    policies = resources(template, "AWS::IAM::Policy").values()
    by_role = {p["Properties"]["Roles"][0]["Ref"]: p["Properties"]["PolicyDocument"]["Statement"] for p in policies}
    [producer] = [s for r, s in by_role.items() if r.startswith("Producer")]
    [reader] = [s for r, s in by_role.items() if r.startswith("Reader")]
    assert [s["Action"] for s in producer] == [["sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"]]
    assert all(not a.startswith(("dynamodb:Put", "dynamodb:Update", "dynamodb:Delete")) for a in reader[0]["Action"])
    assert "dynamodb:Query" in reader[0]["Action"]
    assert all(PRODUCERS_SID not in str(p) for p in resources(template, "AWS::SQS::QueuePolicy").values())


def test_restricted_producers_leave_the_queue_to_the_granted_principals_alone() -> None:
    # Given a pipeline that restricts its producers to one ARN and one role granted later
    made: dict[str, Any] = {}

    def build(stack: cdk.Stack) -> None:
        made["pipeline"] = pipeline = SensorDigestPipeline(
            stack, "Pipeline", restrict_producers=True, producer_arns=(PRODUCER,)
        )
        made["role"] = role = iam.Role(stack, "Sender", assumed_by=iam.AccountRootPrincipal())
        pipeline.grant_send(role)

    # When it is synthesized
    stack, template = foreign_stack(build)

    # Then the ingest queue's policy denies SendMessage to every other principal
    template.has_resource_properties(
        "AWS::SQS::QueuePolicy",
        {
            "Queues": [stack.resolve(made["pipeline"].queue.queue_url)],
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        {
                            "Sid": PRODUCERS_SID,
                            "Effect": "Deny",
                            "Principal": {"AWS": "*"},
                            "Action": "sqs:SendMessage",
                            "Resource": stack.resolve(made["pipeline"].queue.queue_arn),
                            "Condition": {
                                "ArnNotEquals": {"aws:PrincipalArn": [PRODUCER, stack.resolve(made["role"].role_arn)]}
                            },
                        }
                    ]
                )
            },
        },
    )
    # and nothing about the dead-letter queue or the receive side changes (one Deny of this kind only)
    denies = [
        s
        for p in resources(template, "AWS::SQS::QueuePolicy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if s.get("Sid") == PRODUCERS_SID
    ]
    assert len(denies) == 1


def test_restricting_producers_without_admitting_any_is_refused_at_synth() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Readings")
    SensorDigestPipeline(stack, "Pipeline", restrict_producers=True)
    with pytest.raises(RuntimeError, match="restrict_producers=True admits no sender"):
        app.synth()


def test_grant_send_with_restricted_producers_refuses_a_principal_without_an_arn() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Readings")
    pipeline = SensorDigestPipeline(stack, "Pipeline", restrict_producers=True, producer_arns=[PRODUCER])
    with pytest.raises(TypeError, match="admits producers by IAM ARN"):
        pipeline.grant_send(iam.ServicePrincipal("sns.amazonaws.com"))  # type: ignore[arg-type]


def test_a_fifo_pipeline_whose_generated_queue_names_would_pass_80_characters_is_refused() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "S" * 30)
    SensorDigestPipeline(stack, "OrderedReadingsOfTheNorthSite", queue_type="fifo")
    with pytest.raises(RuntimeError, match=r"would get a generated name of .* characters, over SQS's 80"):
        app.synth()


def test_the_construct_takes_the_app_stacks_longest_fifo_stack_name() -> None:
    # app.py's own bound (stackName at most 30 with queueType=fifo) is the construct's at its ids
    app = cdk.App()
    stack = cdk.Stack(app, "S" * 30)
    SensorDigestPipeline(stack, "Default", queue_type="fifo")
    app.synth()


def test_grant_send_with_restricted_producers_refuses_a_role_of_another_stack_in_one_line() -> None:
    # Given a producer role made in a stack of its own, as apps split producers from the pipeline
    app = cdk.App()
    pipeline = SensorDigestPipeline(cdk.Stack(app, "Readings"), "Pipeline", restrict_producers=True)
    role = iam.Role(cdk.Stack(app, "Producers"), "Sender", assumed_by=iam.AccountRootPrincipal())

    # When it is granted: the queue policy would name its ARN (Readings needs Producers) while its grant
    # names the queue (Producers needs Readings): refused now, in one line, rather than a cycle at synth
    with pytest.raises(ValueError, match="would make the two stacks depend on each other") as refused:
        pipeline.grant_send(role)
    assert "\n" not in str(refused.value)


def test_a_role_of_another_stack_is_admitted_by_its_arn_as_text_and_granted_in_its_own_stack() -> None:
    # The way the refusal names: the ARN as text in producer_arns, the grant in the producer's stack
    app = cdk.App()
    arn = "arn:aws:iam::123456789012:role/sender"
    pipeline = SensorDigestPipeline(
        cdk.Stack(app, "Readings"), "Pipeline", restrict_producers=True, producer_arns=[arn]
    )
    producers = cdk.Stack(app, "Producers")
    role = iam.Role(producers, "Sender", role_name="sender", assumed_by=iam.AccountRootPrincipal())
    pipeline.queue.grant_send_messages(role)

    app.synth()  # no dependency cycle

    statements = [
        s
        for p in resources(Template.from_stack(producers), "AWS::IAM::Policy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    assert any("sqs:SendMessage" in s["Action"] for s in statements)


@pytest.mark.parametrize("region", [None, "eu-west-1"], ids=["any-region", "region-bound"])
def test_the_import_and_an_operator_granted_to_start_it_are_cdk_nag_clean_in_any_stack(region: str | None) -> None:
    # Given a user's stack (bound to a region, or not) with the import, and a role of the user's granted to run it
    app = cdk.App()
    stack = cdk.Stack(app, "Imports", env=cdk.Environment(region=region) if region else None)
    pipeline = SensorDigestPipeline(stack, "Pipeline", import_enabled=True)
    operator = iam.Role(stack, "Operator", assumed_by=iam.AccountRootPrincipal())
    assert pipeline.history_import is not None
    pipeline.history_import.grant_start(operator)

    # Then cdk-nag finds nothing the constructs did not accept, and the grant names no wildcard action
    assert unaccepted(app, stack) == []
    policy = next(
        p
        for p in resources(Template.from_stack(stack), "AWS::IAM::Policy").values()
        if p["Properties"]["Roles"] == [{"Ref": stack.get_logical_id(operator.node.default_child)}]  # type: ignore[arg-type]
    )
    granted = {a for s in policy["Properties"]["PolicyDocument"]["Statement"] for a in _listed(s["Action"])}
    assert granted == {
        "s3:PutObject",
        "s3:GetObject",
        "s3:AbortMultipartUpload",
        "s3:ListBucket",
        "states:StartExecution",
        "states:ListMapRuns",
        "states:DescribeExecution",
        "states:RedriveExecution",
        "states:DescribeMapRun",
    }


def _listed(actions: str | list[str]) -> list[str]:
    return [actions] if isinstance(actions, str) else actions
