"""The digest table and the ledger (``DigestTables``) in the synthesized template: the key
schema, the stream, recovery, the ledger's TTL, and what a dev stack's settings change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_cdk.assertions import Match, Template

from tests.support.templates import resources


def test_the_digest_table_follows_the_contract(template: Template) -> None:
    template.has_resource(
        "AWS::DynamoDB::Table",
        {
            "DeletionPolicy": "Retain",
            "Properties": {
                "TableName": "SensorDigest",
                "KeySchema": [
                    {"AttributeName": "SensorId", "KeyType": "HASH"},
                    {"AttributeName": "Date", "KeyType": "RANGE"},
                ],
                "AttributeDefinitions": Match.array_with([{"AttributeName": "SensorId", "AttributeType": "N"}]),
                "BillingMode": "PAY_PER_REQUEST",
                "StreamSpecification": {"StreamViewType": "NEW_AND_OLD_IMAGES"},
                "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
                "SSESpecification": {"SSEEnabled": True},  # KMS with the AWS-managed key aws/dynamodb
                "DeletionProtectionEnabled": True,
            },
        },
    )


def test_the_ledger_expires_markers_by_ttl(template: Template) -> None:
    template.has_resource(
        "AWS::DynamoDB::Table",
        {
            "DeletionPolicy": "Retain",
            "Properties": {
                "TableName": "SensorDigestLedger",
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                "TimeToLiveSpecification": {"AttributeName": "ExpiresAt", "Enabled": True},
                "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
                "SSESpecification": {"SSEEnabled": True},
            },
        },
    )


def test_a_dev_stack_with_provisioned_tables_is_destroyed_with_the_stack(synth_with: Callable[..., Any]) -> None:
    _, template = synth_with(stackName="SensorDigestDev", removal="destroy", billing="provisioned", writeCapacity=7)
    tables = resources(template, "AWS::DynamoDB::Table")
    assert {t["Properties"]["TableName"] for t in tables.values()} == {"SensorDigestDev", "SensorDigestDevLedger"}
    for table in tables.values():
        assert table["DeletionPolicy"] == "Delete"
        assert table["Properties"]["DeletionProtectionEnabled"] is False
        assert table["Properties"]["ProvisionedThroughput"] == {"ReadCapacityUnits": 5, "WriteCapacityUnits": 7}
    assert all(q["DeletionPolicy"] == "Delete" for q in resources(template, "AWS::SQS::Queue").values())
