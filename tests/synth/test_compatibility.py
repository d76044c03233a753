"""A stack deployed before the pipeline became a construct updates in place: app.py's stack keeps the
logical id, physical name and retention of every stateful resource (CloudFormation would otherwise
replace a retained, fixed-name table and fail). Template tests on CDK's synthesizer (no AWS).

This module asserts logical ids on purpose: they are the compatibility promise (elsewhere the tests
read properties and references, never hashed ids). The ids below are those of main's template
before the construct, compared resource by resource when the construct was introduced."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.support.templates import resources

STATEFUL_TYPES = ("AWS::DynamoDB::Table", "AWS::SQS::Queue", "AWS::KMS::Key", "AWS::Logs::LogGroup")

# logical id -> (type, the physical name app.py gives it, or None when CloudFormation generates it)
STATEFUL = {
    "StorageDigestTable1B115DC4": ("AWS::DynamoDB::Table", "SensorDigest"),
    "StorageLedgerTable795D73B2": ("AWS::DynamoDB::Table", "SensorDigestLedger"),
    "IngestQueue95F6DB49": ("AWS::SQS::Queue", None),
    "IngestDeadLetterQueueE8016E9B": ("AWS::SQS::Queue", None),
    "SummaryStreamFailureQueueE24FC9A4": ("AWS::SQS::Queue", None),
    "MonitoringAlarmTopicKeyFFA45DC9": ("AWS::KMS::Key", None),
    "IngestFunctionLogs3AD22061": ("AWS::Logs::LogGroup", None),
    "SummaryFunctionLogs397D0B2C": ("AWS::Logs::LogGroup", None),
}
# new with the read API, then with the alarm announcer: added beside the others, replacing nothing
ADDED = {
    "ReadApiAccessLogs1D88287A",
    "ReadApiFunctionLogsD288A994",
    "AnnouncerFailureQueue11D25034",
    "AnnouncerFunctionLogsB87F58BB",
}
NAME_PROPERTY = {"AWS::DynamoDB::Table": "TableName"}


@pytest.mark.parametrize("context", [{}, {"queueType": "fifo"}], ids=["standard", "fifo"])
def test_the_apps_stateful_resources_keep_their_logical_ids_names_and_retention(
    synth_with: Callable[..., tuple[Any, Any]], context: dict[str, str]
) -> None:
    # Given app.py's stack, built over the construct
    _, template = synth_with(**context)

    # When its stateful resources are listed
    found = {
        logical_id: resource for kind in STATEFUL_TYPES for logical_id, resource in resources(template, kind).items()
    }

    # Then they are exactly those of the stack before the construct, each named and retained as before
    assert set(found) == set(STATEFUL) | ADDED
    for logical_id, (kind, name) in STATEFUL.items():
        resource = found[logical_id]
        assert resource["Type"] == kind
        assert resource["DeletionPolicy"] == "Retain"
        if kind in NAME_PROPERTY:
            assert resource["Properties"][NAME_PROPERTY[kind]] == name


def test_the_apps_dashboard_keeps_its_name(template: Any) -> None:
    template.has_resource_properties("AWS::CloudWatch::Dashboard", {"DashboardName": "SensorDigest-pipeline"})
