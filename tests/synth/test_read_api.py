"""The read API (``ReadApi``) in the synthesized template: an HTTP API whose every route takes IAM
(SigV4) callers only, a query function whose role may read the digest table and its ``Profiles``
index and, for the alarm routes, query the ``Alarms`` index, put alarm items and get the ledger's
two rule items, stage throttling and access logs, a 5xx alarm to the alarm topic, the URL as an
output, and ``grant_invoke`` for consumers (its ``GET`` routes only: the operator's ``POST`` routes
are ``grant_alarm_operations``', tests/synth/test_alarms.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Match, Template

from app import build_app
from sensor_digest import names
from sensor_digest.store import schema
from sensor_digest_cdk import SensorDigestPipeline
from sensor_digest_cdk.read_api import ReadApi
from tests.support.nag import unaccepted
from tests.support.templates import actions, policy_of, resources, table_id

HANDLER = "api.handler.handler"


def test_every_route_of_the_api_takes_iam_callers_only(template: Template) -> None:
    routes = resources(template, "AWS::ApiGatewayV2::Route")
    assert {r["Properties"]["RouteKey"] for r in routes.values()} == {
        "$default",
        "GET /sensors",
        "GET /sensors/{sensor_id}/days",
        "GET /sensors/{sensor_id}/months",
        "GET /sensors/{sensor_id}/hours",
        "GET /sensors/{sensor_id}/readings",
        "GET /sensors/{sensor_id}/readings/hours",
        "GET /silence",
        "GET /alarms",
        "GET /sensors/{sensor_id}/alarms",
        "GET /alarms/{alarm_id}/history",
        "POST /alarms/{alarm_id}/acknowledge",
        "POST /alarms/{alarm_id}/snooze",
        "POST /alarms/{alarm_id}/reset",
        "POST /alarms/{alarm_id}/disable",
        "POST /alarms/{alarm_id}/enable",
    }
    assert {r["Properties"].get("AuthorizationType") for r in routes.values()} == {"AWS_IAM"}


def test_the_api_calls_its_function_with_payload_2_0(template: Template) -> None:
    template.has_resource_properties(
        "AWS::ApiGatewayV2::Integration",
        {"IntegrationType": "AWS_PROXY", "PayloadFormatVersion": "2.0"},
    )
    template.has_resource_properties(
        "AWS::Lambda::Function", {"Handler": HANDLER, "Environment": {"Variables": Match.object_like({})}}
    )


def test_the_query_function_reads_the_digest_and_writes_alarm_items_and_reads_only_the_rules_of_the_ledger(
    template: Template,
) -> None:
    granted = [s for s in policy_of(template, HANDLER) if any(a.startswith("dynamodb:") for a in actions(s))]
    digest = {"Fn::GetAtt": [table_id(template, "SensorDigest"), "Arn"]}
    ledger = {"Fn::GetAtt": [table_id(template, "SensorDigestLedger"), "Arn"]}
    by_resource = {json.dumps(s["Resource"]): (sorted(actions(s)), s.get("Condition")) for s in granted}

    assert len(granted) == 4
    assert by_resource == {
        # the counts, the profiles and a sensor's alarms and their logs
        json.dumps([digest, {"Fn::Join": ["", [digest, f"/index/{schema.PROFILE_INDEX}"]]}]): (
            ["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:Query"],
            None,
        ),
        # GET /alarms: the alarms in a state
        json.dumps({"Fn::Join": ["", [digest, f"/index/{schema.ALARM_INDEX}"]]}): (["dynamodb:Query"], None),
        # an operator's action: the alarm's next version
        json.dumps(digest): (["dynamodb:PutItem"], None),
        # the alarm rules' two items, and no other item of the ledger
        json.dumps(ledger): (
            ["dynamodb:GetItem"],
            {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": [schema.RULES_KEY, schema.RULES_VERSION_KEY]}},
        ),
    }
    other = {a for s in policy_of(template, HANDLER) for a in actions(s)} - {a for s in granted for a in actions(s)}
    assert not {a for a in other if a.split(":")[0] in ("dynamodb", "sqs", "sns", "kms", "events")}


def test_the_query_function_is_told_both_tables(template: Template) -> None:
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Handler": HANDLER,
            "Environment": {
                "Variables": Match.object_like(
                    {
                        "TABLE_NAME": {"Ref": table_id(template, "SensorDigest")},
                        "LEDGER_TABLE_NAME": {"Ref": table_id(template, "SensorDigestLedger")},
                    }
                )
            },
        },
    )


def test_the_stage_throttles_and_writes_json_access_logs_to_a_group_with_retention(
    synth_with: Callable[..., tuple[Any, Template]],
) -> None:
    _, template = synth_with(apiThrottleRateLimit=20, apiThrottleBurstLimit=40)

    template.has_resource_properties(
        "AWS::ApiGatewayV2::Stage",
        {
            "StageName": "$default",
            "AutoDeploy": True,
            "DefaultRouteSettings": {"ThrottlingRateLimit": 20, "ThrottlingBurstLimit": 40},
            "AccessLogSettings": {
                "DestinationArn": {"Fn::GetAtt": [Match.string_like_regexp("ReadApiAccessLogs"), "Arn"]},
                "Format": Match.string_like_regexp(r'"status":"\$context.status"'),
            },
        },
    )
    [group] = [
        g for key, g in resources(template, "AWS::Logs::LogGroup").items() if key.startswith("ReadApiAccessLogs")
    ]
    assert group["Properties"]["RetentionInDays"] == 30


def test_an_alarm_on_5xx_notifies_the_alarm_topic(template: Template) -> None:
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "MetricName": "5xx",
            "Namespace": "AWS/ApiGateway",
            "Threshold": 0,
            "ComparisonOperator": "GreaterThanThreshold",
            "AlarmActions": [{"Ref": Match.string_like_regexp("AlarmTopic")}],
        },
    )


def test_the_digest_table_has_the_sparse_profiles_index(template: Template) -> None:
    template.has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "GlobalSecondaryIndexes": Match.array_with(
                [
                    {
                        "IndexName": schema.PROFILE_INDEX,
                        "KeySchema": [
                            {"AttributeName": schema.PROFILE_LIST, "KeyType": "HASH"},
                            {"AttributeName": schema.SENSOR_ID, "KeyType": "RANGE"},
                        ],
                        "Projection": {
                            "ProjectionType": "INCLUDE",
                            "NonKeyAttributes": [schema.NAME, schema.TIME_ZONE],
                        },
                    }
                ]
            )
        },
    )


def test_the_api_url_is_a_stack_output(template: Template) -> None:
    output = template.find_outputs(names.OUTPUT_API_URL)[names.OUTPUT_API_URL]
    assert "execute-api" in json.dumps(output["Value"])


def invoke_paths(statement: dict[str, Any]) -> list[str]:
    """The stage, method and path each of a statement's execute-api ARNs ends with."""
    found = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
    return [arn["Fn::Join"][1][-1].split("/", 1)[1] for arn in found]


def test_grant_invoke_lets_a_principal_get_the_apis_routes_and_nothing_else() -> None:
    # Given a consumer's role, granted by the construct, in a stack of its own making
    _, stack = build_app({"stackName": "SensorDigestGrant"})
    [read_api] = [c for c in stack.node.find_all() if isinstance(c, ReadApi)]
    role = iam.Role(stack, "DashboardRole", assumed_by=iam.AccountRootPrincipal())
    read_api.grant_invoke(role)

    # Then its policy allows execute-api:Invoke on GET of the routes of the API's stage, and no POST
    [policy] = [
        p
        for p in resources(Template.from_stack(stack), "AWS::IAM::Policy").values()
        if p["Properties"]["Roles"] == [{"Ref": stack.resolve(role.node.default_child.logical_id)}]
    ]
    [statement] = policy["Properties"]["PolicyDocument"]["Statement"]
    assert (statement["Action"], statement["Effect"]) == ("execute-api:Invoke", "Allow")
    assert invoke_paths(statement) == [
        "$default/GET/sensors",
        "$default/GET/sensors/*/days",
        "$default/GET/sensors/*/months",
        "$default/GET/sensors/*/hours",
        "$default/GET/sensors/*/readings",
        "$default/GET/sensors/*/readings/hours",
        "$default/GET/silence",
        "$default/GET/alarms",
        "$default/GET/sensors/*/alarms",
        "$default/GET/alarms/*/history",
    ]


@pytest.mark.parametrize(
    "env",
    [None, cdk.Environment(account="123456789012", region="eu-west-1")],
    ids=["environment-agnostic", "explicit-account-and-region"],
)
def test_grant_invoke_in_a_users_app_with_cdk_nag_synthesizes_clean_and_hides_no_other_finding(
    env: cdk.Environment | None,
) -> None:
    # Given a user's app with AwsSolutionsChecks, a pipeline (in a stack with or without an explicit
    # account and region: found in review, the accepted finding named the tokens only), and a role
    # granted the read API as the construct docs show it, which also holds a wildcard of its own
    app = cdk.App()
    stack = cdk.Stack(app, "Readings", env=env)
    pipeline = SensorDigestPipeline(stack, "Plain")
    role = iam.Role(stack, "Dashboards", assumed_by=iam.AccountRootPrincipal())
    pipeline.read_api.grant_invoke(role)
    role.add_to_policy(iam.PolicyStatement(actions=["s3:GetObject"], resources=["arn:aws:s3:::dashboards/*"]))

    # When cdk-nag checks it
    errors = unaccepted(app, stack)

    # Then the only finding is the role's own wildcard: the read API's route ARNs are accepted, with a reason
    assert len(errors) == 1 and errors[0].startswith("AwsSolutions-IAM5[Resource::arn:aws:s3:::dashboards/*]"), errors
