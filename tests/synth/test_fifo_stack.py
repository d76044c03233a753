"""The stack with ``-c queueType=fifo`` (ordered mode): template tests on properties."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Match, Template

from sensor_digest.store import schema
from sensor_digest_cdk import SensorDigestPipeline
from sensor_digest_cdk.context import AppSettings
from sensor_digest_cdk.rules import APP_LONGEST_FIFO_QUEUE_ID, FIFO_STACK_NAME_MAX
from sensor_digest_cdk.shape import PipelineShape, ShapeError
from tests.support.templates import actions, policy_of, resources

HIGH_THROUGHPUT = {
    "FifoQueue": True,
    "ContentBasedDeduplication": False,
    "DeduplicationScope": "messageGroup",
    "FifoThroughputLimit": "perMessageGroupId",
}


@pytest.fixture(scope="module")
def fifo(synth_with: Callable[..., Any]) -> Template:
    return synth_with(queueType="fifo")[1]


def test_both_ingest_queues_are_fifo_in_high_throughput_mode_and_encrypted(fifo: Template) -> None:
    queues = [q["Properties"] for q in resources(fifo, "AWS::SQS::Queue").values() if q["Properties"].get("FifoQueue")]
    assert len(queues) == 2  # the ingest queue and its dead-letter queue (the stream's failure queue stays standard)
    for queue in queues:
        assert {k: queue.get(k) for k in HIGH_THROUGHPUT} == HIGH_THROUGHPUT
        assert queue["SqsManagedSseEnabled"] is True
    fifo.has_resource_properties(
        "AWS::SQS::Queue",
        {
            **HIGH_THROUGHPUT,
            "VisibilityTimeout": 180,  # six function timeouts, no window
            "RedrivePolicy": {"deadLetterTargetArn": Match.any_value(), "maxReceiveCount": 5},
        },
    )


def test_the_event_source_takes_what_fifo_allows(fifo: Template) -> None:
    [mapping] = [
        m["Properties"]
        for m in resources(fifo, "AWS::Lambda::EventSourceMapping").values()
        if "IngestQueue" in json.dumps(m["Properties"]["EventSourceArn"])
    ]
    assert mapping["BatchSize"] == 10
    assert "MaximumBatchingWindowInSeconds" not in mapping
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": 10}


def test_the_function_is_told_the_queue_type_and_may_only_put_and_read_markers_in_the_ledger(fifo: Template) -> None:
    fifo.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Handler": "ingest.handler.handler",
            "Environment": {"Variables": Match.object_like({"QUEUE_TYPE": "fifo", "MAX_RECEIVE_COUNT": "5"})},
        },
    )
    granted = {(a, json.dumps(s["Resource"])) for s in policy_of(fifo, "ingest.handler.handler") for a in actions(s)}
    # the markers of counted messages that may come back through the dead-letter queue, and the alarm
    # rules' two items (GetItem of no other: tests/synth/test_alarms.py)
    assert {a for a, r in granted if "Ledger" in r} == {"dynamodb:PutItem", "dynamodb:BatchGetItem", "dynamodb:GetItem"}
    [rules] = [s for s in policy_of(fifo, "ingest.handler.handler") if actions(s) == ["dynamodb:GetItem"]]
    assert set(rules["Condition"]["ForAllValues:StringEquals"]["dynamodb:LeadingKeys"]) == {
        schema.RULES_KEY,
        schema.RULES_VERSION_KEY,
    }
    assert {a for a, r in granted if "DeadLetter" in r} == {"sqs:SendMessage"}


def test_fifo_settings_are_checked() -> None:
    assert PipelineShape(queue_type="fifo").visibility_timeout_seconds == 180
    with pytest.raises(ShapeError, match="fifoBatchSize takes a whole number from 1 to 10"):
        AppSettings.from_context({"queueType": "fifo", "fifoBatchSize": "11"}.get)
    with pytest.raises(ShapeError, match="leave deliveryMode exactly-once"):
        AppSettings.from_context({"queueType": "fifo", "deliveryMode": "at-least-once"}.get)
    with pytest.raises(ShapeError, match="stackName of at most 30"):
        AppSettings.from_context({"queueType": "fifo", "stackName": "S" * 31}.get)
    AppSettings.from_context({"queueType": "fifo", "stackName": "S" * 30}.get)
    AppSettings.from_context({"stackName": "S" * 31}.get)  # a standard queue's name is shortened
    with pytest.raises(ShapeError, match="queueType takes standard or fifo"):
        AppSettings.from_context({"queueType": "FIFO"}.get)


def test_the_apps_stack_name_bound_is_the_constructs_queue_name_rule_at_the_apps_longest_queue(fifo: Template) -> None:
    # one rule (rules.fifo_queue_name_length): the app applies it to stackName before anything is
    # built, at its longest FIFO queue's id; the construct applies it to its queues at synth
    fifo_queues = [name for name, q in resources(fifo, "AWS::SQS::Queue").items() if q["Properties"].get("FifoQueue")]
    assert max(fifo_queues, key=len) == APP_LONGEST_FIFO_QUEUE_ID
    assert FIFO_STACK_NAME_MAX == 30
    app = cdk.App()
    SensorDigestPipeline(cdk.Stack(app, "S" * (FIFO_STACK_NAME_MAX + 1)), "Default", queue_type="fifo")
    with pytest.raises(RuntimeError, match=f"{APP_LONGEST_FIFO_QUEUE_ID} of stack S+ would get a generated name of 81"):
        app.synth()
