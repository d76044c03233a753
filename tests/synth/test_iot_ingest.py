"""AWS IoT Core ingestion (``-c iotTopic=...``, the prop ``iot_topic``): the topic rule to the ingest
queue, its role (that queue only), its error action, and the refusals (a FIFO queue, a topic filter
IoT would refuse or the SQL could not quote). Template tests on CDK's synthesizer and the app's
context check (no AWS); one ``cdk synth`` in a process of its own, as a deployer runs it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Stack
from hypothesis import given, settings
from hypothesis import strategies as st

from sensor_digest.errors import RejectedMessage
from sensor_digest.messages import read_pending
from sensor_digest_cdk.context import AppSettings
from sensor_digest_cdk.iot_ingest import ERROR_LOG_ACTIONS, IOT_SQL_VERSION
from sensor_digest_cdk.pipeline import PRODUCERS_SID
from sensor_digest_cdk.rules import IOT_RULE_NAME, MESSAGE_FIELDS, iot_readings_ok
from sensor_digest_cdk.shape import PipelineShape, ShapeError, iot_topic_ok
from sensor_digest_cdk.stack import OUTPUT_IOT_RULE_NAME
from tests.support.templates import cdk_synth, error_lines, resources

TOPIC = "sensors/+/reports"


def test_iot_topic_adds_a_rule_that_forwards_the_topics_reports_to_the_ingest_queue(
    synth_with: Callable[..., Any],
) -> None:
    stack, template = synth_with(iotTopic=TOPIC)
    pipeline = stack.pipeline
    template.has_resource_properties(
        "AWS::IoT::TopicRule",
        {
            "TopicRulePayload": {
                "Sql": "SELECT * FROM 'sensors/+/reports'",
                "AwsIotSqlVersion": IOT_SQL_VERSION,
                "RuleDisabled": False,
                "Actions": [
                    {
                        "Sqs": {
                            "QueueUrl": stack.resolve(pipeline.queue.queue_url),
                            "RoleArn": stack.resolve(pipeline.iot.role.role_arn),
                            "UseBase64": False,
                        }
                    }
                ],
                "ErrorAction": {
                    "CloudwatchLogs": {
                        "LogGroupName": stack.resolve(pipeline.iot.error_logs.log_group_name),
                        "RoleArn": stack.resolve(pipeline.iot.role.role_arn),
                        "BatchMode": False,
                    }
                },
            }
        },
    )
    outputs = template.find_outputs(OUTPUT_IOT_RULE_NAME)
    assert [o["Value"] for o in outputs.values()] == [stack.resolve(pipeline.iot.rule.ref)]


def test_the_rules_role_may_only_send_to_the_ingest_queue_and_write_its_error_log(
    synth_with: Callable[..., Any],
) -> None:
    stack, template = synth_with(iotTopic=TOPIC)
    iot = stack.pipeline.iot
    assert_trusts_iot_for_its_rule_alone(template, iot.role, rule_name(template))
    role_id = stack.resolve(iot.role.role_name)
    [policy] = [p for p in resources(template, "AWS::IAM::Policy").values() if role_id in p["Properties"]["Roles"]]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert statements == [
        {"Action": "sqs:SendMessage", "Effect": "Allow", "Resource": stack.resolve(stack.pipeline.queue.queue_arn)},
        {"Action": ERROR_LOG_ACTIONS, "Effect": "Allow", "Resource": stack.resolve(iot.error_logs.log_group_arn)},
    ]


def test_the_error_log_keeps_failures_as_long_as_the_functions_logs_and_with_the_tables(
    synth_with: Callable[..., Any],
) -> None:
    stack, template = synth_with(iotTopic=TOPIC, logRetentionDays="90")
    logical_id = stack.resolve(stack.pipeline.iot.error_logs.node.default_child.logical_id)
    group = resources(template, "AWS::Logs::LogGroup")[logical_id]
    assert group["Properties"]["RetentionInDays"] == 90
    assert group["DeletionPolicy"] == "Retain"


def rule_name(template: Any) -> str:
    [rule] = resources(template, "AWS::IoT::TopicRule").values()
    return str(rule["Properties"]["RuleName"])


def assert_trusts_iot_for_its_rule_alone(template: Any, role: Any, name: str) -> None:
    """The role's trust: AWS IoT, of this account, acting for the rule named ``name`` (the confused
    deputy guard AWS IoT documents: aws:SourceArn and aws:SourceAccount)."""
    logical_id = Stack.of(role).resolve(role.node.default_child.logical_id)
    assert resources(template, "AWS::IAM::Role")[logical_id]["Properties"]["AssumeRolePolicyDocument"]["Statement"] == [
        {
            "Action": "sts:AssumeRole",
            "Effect": "Allow",
            "Principal": {"Service": "iot.amazonaws.com"},
            "Condition": {
                "StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}},
                "ArnLike": {
                    "aws:SourceArn": {
                        "Fn::Join": [
                            "",
                            [
                                "arn:",
                                {"Ref": "AWS::Partition"},
                                ":iot:",
                                {"Ref": "AWS::Region"},
                                ":",
                                {"Ref": "AWS::AccountId"},
                                f":rule/{name}",
                            ],
                        ]
                    }
                },
            },
        }
    ]


def test_a_rule_name_given_is_the_rules_name_and_the_one_its_role_trusts(synth_with: Callable[..., Any]) -> None:
    stack, template = synth_with(iotTopic=TOPIC, iotRuleName="sensor_reports")
    template.has_resource_properties("AWS::IoT::TopicRule", {"RuleName": "sensor_reports"})
    assert_trusts_iot_for_its_rule_alone(template, stack.pipeline.iot.role, "sensor_reports")


def test_a_rule_without_a_name_given_gets_one_of_its_stack_and_path_that_iot_takes(
    synth_with: Callable[..., Any],
) -> None:
    _, default = synth_with(iotTopic=TOPIC)
    _, staging = synth_with(iotTopic=TOPIC, stackName="SensorDigestStaging")
    names = [rule_name(default), rule_name(staging)]
    assert names[0] != names[1]
    assert all(IOT_RULE_NAME.fullmatch(name) for name in names)
    assert names[0].startswith("SensorDigestIot") and names[1].startswith("SensorDigestStagingIot")


def test_without_iot_topic_there_is_no_rule(template: Any) -> None:
    template.resource_count_is("AWS::IoT::TopicRule", 0)
    assert template.find_outputs(OUTPUT_IOT_RULE_NAME) == {}


def test_iot_topic_with_a_fifo_queue_is_refused_in_one_line() -> None:
    with pytest.raises(ShapeError) as refused:
        AppSettings.from_context({"iotTopic": TOPIC, "queueType": "fifo"}.get)
    assert refused.value.problems == [
        "context value iotTopic='sensors/+/reports' with queueType='fifo' is not allowed: AWS IoT's SQS action "
        "cannot send to a FIFO queue: iotTopic needs queueType=standard"
    ]
    with pytest.raises(ShapeError, match=r"^prop iot_topic='a' with queue_type='fifo' is not allowed"):
        PipelineShape(iot_topic="a", queue_type="fifo")


def test_cdk_synth_refuses_iot_topic_with_fifo_as_a_deployer_sees_it(tmp_path: Path) -> None:
    result = cdk_synth("-c", f"iotTopic={TOPIC}", "-c", "queueType=fifo", output=tmp_path / "out")
    assert result.returncode != 0
    assert error_lines(result) == [
        "error: context value iotTopic='sensors/+/reports' with queueType='fifo' is not allowed: AWS IoT's SQS "
        "action cannot send to a FIFO queue: iotTopic needs queueType=standard"
    ]


@pytest.mark.parametrize(
    "topic",
    ["sensors/+/reports", "sensors/#", "#", "+", "+/+", "sensors", "$aws/things/+/shadow/update", "a/" * 7 + "b"],
)
def test_a_topic_filter_iot_takes_is_taken(topic: str) -> None:
    assert iot_topic_ok(topic)
    assert PipelineShape(iot_topic=topic).iot_rule_sql == f"SELECT * FROM '{topic}'"


@pytest.mark.parametrize(
    "topic",
    [
        "sensors/#/reports",  # '#' only last
        "sensors/a#",  # '#' a whole level
        "sensors/a+/b",  # '+' a whole level
        "a/" * 8 + "b",  # 8 slashes
        "s" * 257,  # over 256 bytes
        "é" * 129,  # 258 bytes of UTF-8
        "sensors' OR 1=1 --",  # would end the SQL literal
        "sensors\\x",
        "sensors/\nx",
        "sensors/\x85/x",  # a C1 control character (NEL)
        "sensors/\ud800/x",  # a lone surrogate
        "$aws/rules/SensorDigest/sensors",  # Basic Ingest addresses a rule; a rule does not select it
    ],
)
def test_a_topic_filter_iot_would_refuse_or_the_sql_could_not_quote_is_refused(topic: str) -> None:
    assert not iot_topic_ok(topic)
    with pytest.raises(ShapeError, match=r"^prop iot_topic=.* is not allowed: iot_topic takes nothing"):
        PipelineShape(iot_topic=topic)


def test_iot_readings_maps_the_payloads_fields_into_readings_in_the_rules_sql(
    synth_with: Callable[..., Any],
) -> None:
    # A device publishes {"sensor_id": 7, "temperature": 21.5, "humidity": 40}: the rule keeps every field
    # and gives the report its readings, an object literal that leaves out a field the payload lacks
    stack, template = synth_with(iotTopic=TOPIC, iotReadings="temperature,humidity")
    template.has_resource_properties(
        "AWS::IoT::TopicRule",
        {
            "TopicRulePayload": {
                "Sql": "SELECT *, {'temperature': temperature, 'humidity': humidity} AS readings "
                "FROM 'sensors/+/reports'",
                "AwsIotSqlVersion": IOT_SQL_VERSION,  # object literals need 2016-03-23
            }
        },
    )
    assert stack.pipeline.shape.iot_readings == ("temperature", "humidity")


def test_the_construct_takes_the_reading_fields_as_a_list_prop() -> None:
    shape = PipelineShape.from_props(iot_topic=TOPIC, iot_readings=["pm25", "co2"])  # type: ignore[typeddict-item]
    assert shape.iot_readings == ("pm25", "co2")
    assert shape.iot_rule_sql == "SELECT *, {'pm25': pm25, 'co2': co2} AS readings FROM 'sensors/+/reports'"


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ("2nd", "a letter first"),
        ("temp-c", "letters, digits or '_'"),
        ("t" * 33, "1 to 32"),
        ("t,t", "none twice"),
        ("count", "none of the message's own fields"),
        ("readings", "none of the message's own fields"),
        (",".join(f"r{i}" for i in range(9)), "at most 8"),
    ],
)
def test_a_reading_field_the_ingest_would_refuse_or_the_message_reads_itself_is_refused(fields: str, why: str) -> None:
    with pytest.raises(ShapeError) as refused:
        AppSettings.from_context({"iotTopic": TOPIC, "iotReadings": fields}.get)
    [problem] = refused.value.problems
    assert problem.startswith(f"context value iotReadings={fields!r} is not allowed: iotReadings takes nothing")
    assert why in problem


@settings(max_examples=300)
@given(st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=40))
def test_a_reading_field_the_construct_takes_is_a_name_the_ingest_takes(name: str) -> None:
    # the construct's rule is the ingest's rule for a reading's name (messages.READING_NAME), and more
    body = json.dumps({"sensor_id": 7, "readings": {name: 1}})
    try:
        read_pending(message_id="m", body=body, sent_timestamp="0")
        ingest_takes = True
    except RejectedMessage:
        ingest_takes = False
    assert iot_readings_ok((name,)) == (ingest_takes and name not in MESSAGE_FIELDS)


def test_reading_fields_without_a_topic_are_refused() -> None:
    with pytest.raises(ShapeError) as refused:
        AppSettings.from_context({"iotReadings": "temperature"}.get)
    assert refused.value.problems == [
        "context value iotReadings='temperature' is not allowed: iotReadings maps payload fields into readings "
        "in the rule iotTopic adds: give iotTopic too"
    ]


def test_a_rule_name_without_a_topic_is_refused() -> None:
    with pytest.raises(ShapeError, match="iot_rule_name names the rule iot_topic adds: give iot_topic too"):
        PipelineShape(iot_rule_name="reports")


def test_with_restricted_producers_the_rules_role_is_admitted_to_send(synth_with: Callable[..., Any]) -> None:
    # Given the app's stack with IoT ingestion, producers restricted and one producer named
    producer = "arn:aws:iam::123456789012:role/producer"
    stack, template = synth_with(iotTopic=TOPIC, restrictProducers="true", producerArns=producer)

    # When the ingest queue's policy is read
    denies = [
        statement
        for policy in resources(template, "AWS::SQS::QueuePolicy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if statement.get("Sid") == PRODUCERS_SID
    ]

    # Then its one Deny spares exactly the named producer and the rule's role
    [deny] = denies
    assert deny["Condition"] == {
        "ArnNotEquals": {"aws:PrincipalArn": [producer, stack.resolve(stack.pipeline.iot.role.role_arn)]}
    }
