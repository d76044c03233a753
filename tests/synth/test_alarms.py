"""Alarms as deployed, in the synthesized template: the sparse ``Alarms`` index; the announcer
(``AlarmAnnouncer``) on the table's stream with the alarm filter, its failure queue and what its role
may do (put its own events on the default bus, put log items); the rule that sends each event to the
alarm topic as a line of text, and what EventBridge may do with the topic and its key; the alarms on
a stuck announcement and on the announcer's lag; and the read API's two grants, reading
(``grant_invoke``) and acting on alarms (``grant_alarm_operations``), apart. Template tests on CDK's
synthesizer (no AWS); properties and references, never hashed logical ids."""

from __future__ import annotations

import json
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Match, Template

from app import build_app
from sensor_digest import names
from sensor_digest.alarms.model import ACTIONS
from sensor_digest.store import schema
from sensor_digest.stream_filter import ALARM_FILTER
from sensor_digest_cdk import PipelineShape, SensorDigestPipeline
from sensor_digest_cdk.read_api import ReadApi
from tests.support.nag import unaccepted
from tests.support.templates import actions, policy_of, resources, statements

HANDLER = "announcer.handler.handler"
FIELDS = ("sensor_id", "rule", "previous", "state", "value", "report_time", "transition_id")


def function_id(template: Template, handler: str) -> str:
    """The logical id of the function with this handler (to match references to it, never to assert on it)."""
    functions = resources(template, "AWS::Lambda::Function")
    return next(k for k, f in functions.items() if f["Properties"]["Handler"] == handler)


def mapping_of(template: Template, handler: str) -> dict[str, Any]:
    """The properties of the event source mapping of the function with this handler."""
    function = function_id(template, handler)
    mappings = resources(template, "AWS::Lambda::EventSourceMapping").values()
    [mapping] = [m["Properties"] for m in mappings if m["Properties"]["FunctionName"] == {"Ref": function}]
    return mapping


def failure_queue_id(template: Template, handler: str) -> str:
    """The logical id of the on-failure queue of the function's event source."""
    return mapping_of(template, handler)["DestinationConfig"]["OnFailure"]["Destination"]["Fn::GetAtt"][0]


def topic_id(template: Template) -> str:
    [topic] = resources(template, "AWS::SNS::Topic")
    return topic


def test_the_digest_table_has_the_sparse_alarms_index_of_every_attribute(template: Template) -> None:
    (hash_key, hash_type, _), (range_key, range_type, _) = schema.ALARM_INDEX_KEY_SCHEMA
    template.has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "AttributeDefinitions": Match.array_with([{"AttributeName": hash_key, "AttributeType": hash_type}]),
            "GlobalSecondaryIndexes": Match.array_with(
                [
                    {
                        "IndexName": schema.ALARM_INDEX,
                        "KeySchema": [
                            {"AttributeName": hash_key, "KeyType": "HASH"},
                            {"AttributeName": range_key, "KeyType": "RANGE"},
                        ],
                        "Projection": {"ProjectionType": "ALL"},
                    }
                ]
            ),
        },
    )
    assert (hash_key, range_key, range_type) == (schema.ALERTING, schema.SENSOR_ID, "N")


def test_the_announcer_runs_as_the_other_functions_do_and_reads_only_alarm_transitions_from_the_stream(
    template: Template,
) -> None:
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Handler": HANDLER,
            "Runtime": "python3.13",
            "Architectures": ["arm64"],
            "TracingConfig": {"Mode": "Active"},
            "LoggingConfig": Match.object_like({"LogFormat": "JSON"}),
            "Environment": {
                "Variables": Match.object_like(
                    {
                        "TABLE_NAME": Match.any_value(),
                        "POWERTOOLS_SERVICE_NAME": names.ANNOUNCER_SERVICE,
                        names.PIPELINE_ENV: "SensorDigest",
                    }
                )
            },
        },
    )
    mapping = mapping_of(template, HANDLER)
    assert mapping["EventSourceArn"] == mapping_of(template, "summary.handler.handler")["EventSourceArn"]
    assert mapping["FilterCriteria"] == {"Filters": [{"Pattern": json.dumps(ALARM_FILTER, separators=(",", ":"))}]}
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BisectBatchOnFunctionError"] is True
    assert 0 < mapping["MaximumRetryAttempts"] <= 10  # bounded, then the failure queue
    assert mapping["StartingPosition"] == "TRIM_HORIZON"


def test_what_the_announcer_gives_up_on_goes_to_a_failure_queue_of_its_own(template: Template) -> None:
    queue = failure_queue_id(template, HANDLER)
    assert queue != failure_queue_id(template, "summary.handler.handler")  # a stuck announcement is told apart
    properties = resources(template, "AWS::SQS::Queue")[queue]["Properties"]
    assert properties["SqsManagedSseEnabled"] is True
    assert properties["MessageRetentionPeriod"] == 14 * 24 * 3600


def test_the_announcer_may_put_only_its_own_events_on_the_default_bus(template: Template) -> None:
    [put] = [s for s in policy_of(template, HANDLER) if "events:PutEvents" in actions(s)]
    assert actions(put) == ["events:PutEvents"]
    assert put["Resource"] == {
        "Fn::Join": [
            "",
            [
                "arn:",
                {"Ref": "AWS::Partition"},
                ":events:",
                {"Ref": "AWS::Region"},
                ":",
                {"Ref": "AWS::AccountId"},
                ":event-bus/default",
            ],
        ]
    }
    assert put["Condition"] == {"StringEquals": {"events:source": names.ALARM_EVENT_SOURCE}}
    # and no other role of the stack may put events at all
    assert [s for s in statements(template) if "events:PutEvents" in actions(s)] == [put]


def test_the_announcer_may_only_put_log_items_read_its_stream_and_send_to_its_failure_queue(
    template: Template,
) -> None:
    granted = {a for s in policy_of(template, HANDLER) for a in actions(s)}
    assert {a for a in granted if a.startswith("dynamodb:")} == {
        "dynamodb:PutItem",
        "dynamodb:DescribeStream",
        "dynamodb:GetRecords",
        "dynamodb:GetShardIterator",
        "dynamodb:ListStreams",
    }
    queue = failure_queue_id(template, HANDLER)
    sqs = [s for s in policy_of(template, HANDLER) if any(a.startswith("sqs:") for a in actions(s))]
    assert [s["Resource"] for s in sqs] == [{"Fn::GetAtt": [queue, "Arn"]}]


def test_a_rule_on_the_default_bus_sends_each_alarm_event_to_the_alarm_topic_as_a_line(template: Template) -> None:
    [rule] = [
        r["Properties"] for r in resources(template, "AWS::Events::Rule").values() if "EventPattern" in r["Properties"]
    ]
    assert "EventBusName" not in rule  # the default bus, where the announcer puts its events
    assert rule["EventPattern"]["source"] == [names.ALARM_EVENT_SOURCE]
    assert rule["EventPattern"]["detail-type"] == [names.ALARM_DETAIL_TYPE]
    # its own pipeline's events only: the default bus is the account's
    assert rule["EventPattern"]["detail"] == {"pipeline": ["SensorDigest"]}  # the announcer's PIPELINE_ENV
    [target] = rule["Targets"]
    assert target["Arn"] == {"Ref": topic_id(template)}
    transformer = target["InputTransformer"]
    assert transformer["InputPathsMap"] == {f"detail-{field}": f"$.detail.{field}" for field in FIELDS}
    assert transformer["InputTemplate"] == (
        '"Sensor Digest alarm: sensor <detail-sensor_id>, rule <detail-rule>: <detail-previous> -> <detail-state>, '
        'value <detail-value>, report time <detail-report_time> (transition <detail-transition_id>)"'
    )


def test_eventbridge_may_publish_to_the_alarm_topic_and_use_its_key(template: Template) -> None:
    events = {"Service": "events.amazonaws.com"}
    [policy] = resources(template, "AWS::SNS::TopicPolicy").values()
    [publish] = [s for s in policy["Properties"]["PolicyDocument"]["Statement"] if s.get("Principal") == events]
    assert (publish["Effect"], actions(publish), publish["Resource"]) == (
        "Allow",
        ["sns:Publish"],
        {"Ref": topic_id(template)},
    )
    [key] = resources(template, "AWS::KMS::Key").values()
    [use] = [s for s in key["Properties"]["KeyPolicy"]["Statement"] if s.get("Principal") == events]
    assert use["Effect"] == "Allow"
    assert sorted(actions(use)) == ["kms:Decrypt", "kms:GenerateDataKey*"]


def test_a_stuck_announcement_and_a_lagging_announcer_alarm_through_the_topic(template: Template) -> None:
    queue = failure_queue_id(template, HANDLER)
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "MetricName": "ApproximateNumberOfMessagesVisible",
            "Namespace": "AWS/SQS",
            "Dimensions": [{"Name": "QueueName", "Value": {"Fn::GetAtt": [queue, "QueueName"]}}],
            "Statistic": "Maximum",
            "Threshold": 0,
            "ComparisonOperator": "GreaterThanThreshold",
            "AlarmDescription": Match.string_like_regexp("An announcement is stuck"),
            "AlarmActions": [{"Ref": topic_id(template)}],
        },
    )
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "MetricName": "IteratorAge",
            "Namespace": "AWS/Lambda",
            "Dimensions": [{"Name": "FunctionName", "Value": {"Ref": function_id(template, HANDLER)}}],
            "Threshold": PipelineShape().iterator_age_alarm_seconds * 1000,
            "AlarmActions": [{"Ref": topic_id(template)}],
        },
    )


def test_the_dashboard_graphs_the_announcer_and_its_failure_queue(template: Template) -> None:
    [dashboard] = resources(template, "AWS::CloudWatch::Dashboard").values()
    parts = dashboard["Properties"]["DashboardBody"]["Fn::Join"][1]
    assert {"Ref": function_id(template, HANDLER)} in parts
    assert {"Fn::GetAtt": [failure_queue_id(template, HANDLER), "QueueName"]} in parts


def invoked(stack: cdk.Stack, role: iam.Role) -> list[str]:
    """The method and path of each execute-api ARN the role's policy allows (``GET/alarms``)."""
    [policy] = [
        p
        for p in resources(Template.from_stack(stack), "AWS::IAM::Policy").values()
        if p["Properties"]["Roles"] == [{"Ref": stack.resolve(role.node.default_child.logical_id)}]
    ]
    [statement] = policy["Properties"]["PolicyDocument"]["Statement"]
    assert (statement["Action"], statement["Effect"]) == ("execute-api:Invoke", "Allow")
    found = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
    return [arn["Fn::Join"][1][-1].split("/", 2)[2] for arn in found]


def test_reading_alarms_and_acting_on_them_are_granted_apart() -> None:
    # Given a reader and an operator, each granted by the construct
    _, stack = build_app({"stackName": "SensorDigestAlarmGrants"})
    [read_api] = [c for c in stack.node.find_all() if isinstance(c, ReadApi)]
    reader = iam.Role(stack, "Reader", assumed_by=iam.AccountRootPrincipal())
    operator = iam.Role(stack, "Operator", assumed_by=iam.AccountRootPrincipal())
    read_api.grant_invoke(reader)
    read_api.grant_alarm_operations(operator)

    # Then the reader may GET the alarm routes, and POST nothing
    read = invoked(stack, reader)
    assert {"GET/alarms", "GET/sensors/*/alarms", "GET/alarms/*/history"} <= set(read)
    assert all(path.startswith("GET/") for path in read)
    # And the operator may POST each action of an alarm, and nothing else
    assert invoked(stack, operator) == [f"POST/alarms/*/{action}" for action in ACTIONS]


def test_both_grants_in_a_users_app_with_cdk_nag_synthesize_clean() -> None:
    # Given a user's app with a pipeline and an operator granted to read and act on alarms
    app = cdk.App()
    stack = cdk.Stack(app, "Readings", env=cdk.Environment(account="123456789012", region="eu-west-1"))
    pipeline = SensorDigestPipeline(stack, "Plain")
    operator = iam.Role(stack, "Operator", assumed_by=iam.AccountRootPrincipal())
    pipeline.read_api.grant_invoke(operator)
    pipeline.read_api.grant_alarm_operations(operator)

    # Then cdk-nag finds nothing unaccepted: the {alarm_id} wildcards are accepted for those ARNs
    assert unaccepted(app, stack) == []
