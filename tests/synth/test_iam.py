"""Least privilege in the synthesized template: what each function's role may do, and on what."""

from __future__ import annotations

import json

from aws_cdk.assertions import Template

from tests.support.templates import actions, policy_of, resources, statements, table_id


def test_ingest_may_only_write_items_and_send_to_the_dead_letter_queue(template: Template) -> None:
    granted = {
        (a, json.dumps(s["Resource"])) for s in policy_of(template, "ingest.handler.handler") for a in actions(s)
    }
    dynamodb = {(a, r) for a, r in granted if a.startswith("dynamodb:")}
    assert {a for a, _ in dynamodb} == {
        "dynamodb:UpdateItem",
        "dynamodb:PutItem",
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
    }
    ledger = json.dumps({"Fn::GetAtt": [table_id(template, "SensorDigestLedger"), "Arn"]})
    # markers, identity pages and their lookups (ingest run against the grant:
    # tests/dynamodb_local/counting/test_granted_actions.py)
    assert {a for a, r in dynamodb if r == ledger} == {
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
    }
    assert {r for a, r in dynamodb if a == "dynamodb:UpdateItem"} == {
        json.dumps({"Fn::GetAtt": [table_id(template, "SensorDigest"), "Arn"]}),
        ledger,
    }
    assert {a for a, r in granted if "DeadLetter" in r} == {"sqs:SendMessage"}


def test_summary_may_only_update_the_digest_and_read_its_stream(template: Template) -> None:
    granted = {
        a for s in policy_of(template, "summary.handler.handler") for a in actions(s) if a.startswith("dynamodb:")
    }
    assert granted == {
        "dynamodb:UpdateItem",
        "dynamodb:DescribeStream",
        "dynamodb:GetRecords",
        "dynamodb:GetShardIterator",
        "dynamodb:ListStreams",
    }


def test_functions_write_only_their_own_log_group(template: Template) -> None:
    # No AWSLambdaBasicExecutionRole (logs:* actions on "*"): each role writes its own group's streams.
    log_groups = resources(template, "AWS::Logs::LogGroup")
    for role in resources(template, "AWS::IAM::Role").values():
        assert not role["Properties"].get("ManagedPolicyArns"), role
    for handler in ("ingest.handler.handler", "summary.handler.handler", "announcer.handler.handler"):
        [function] = [
            f for f in resources(template, "AWS::Lambda::Function").values() if f["Properties"]["Handler"] == handler
        ]
        own_group = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert own_group in log_groups
        logs = [s for s in policy_of(template, handler) if any(a.startswith("logs:") for a in actions(s))]
        assert len(logs) == 1
        assert sorted(actions(logs[0])) == ["logs:CreateLogStream", "logs:PutLogEvents"]
        assert logs[0]["Resource"] == {"Fn::GetAtt": [own_group, "Arn"]}


def test_no_policy_grants_deletes_scans_or_wildcard_actions(template: Template) -> None:
    for statement in statements(template):
        for action in actions(statement):
            assert not action.endswith("*"), action
            assert action not in ("dynamodb:DeleteItem", "dynamodb:Scan", "dynamodb:BatchWriteItem"), action
        if statement["Resource"] == "*":
            assert set(actions(statement)) <= {
                "xray:PutTraceSegments",
                "xray:PutTelemetryRecords",
                "dynamodb:ListStreams",
            }
