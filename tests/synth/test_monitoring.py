"""Monitoring (``PipelineMonitoring``) in the synthesized template: the alarms, the alarm topic
CloudWatch may use (its key and its policy), the stalled-queue alarm and the dashboard."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template

from sensor_digest_cdk.context import AppSettings
from sensor_digest_cdk.shape import PipelineShape, ShapeError
from tests.support.templates import actions, resources


@pytest.mark.parametrize(
    ("metric", "namespace"),
    [
        ("ApproximateNumberOfMessagesVisible", "AWS/SQS"),
        ("Errors", "AWS/Lambda"),
        ("IteratorAge", "AWS/Lambda"),
        ("Throttles", "AWS/Lambda"),
    ],
)
def test_alarms_watch_the_pipeline(template: Template, metric: str, namespace: str) -> None:
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {"MetricName": metric, "Namespace": namespace, "AlarmActions": [{"Ref": Match.any_value()}]},
    )


def test_dead_letters_and_stream_failures_alarm_above_zero(template: Template) -> None:
    alarms = resources(template, "AWS::CloudWatch::Alarm").values()
    depth = [a for a in alarms if a["Properties"].get("MetricName") == "ApproximateNumberOfMessagesVisible"]
    assert len(depth) == 3  # the dead-letter queue, the summary's and the announcer's failure queues
    assert all(
        a["Properties"]["Threshold"] == 0 and a["Properties"]["ComparisonOperator"] == "GreaterThanThreshold"
        for a in depth
    )
    throttles = [a for a in alarms if "Metrics" in a["Properties"]]  # DynamoDB throttles: a metric math sum
    assert len(throttles) == 2


CLOUDWATCH_OF_THIS_ACCOUNT = {
    "Effect": "Allow",
    "Principal": {"Service": "cloudwatch.amazonaws.com"},
    "Condition": {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}},
}


def test_the_alarm_topic_key_is_customer_managed_rotated_and_admits_cloudwatch(template: Template) -> None:
    # AWS-managed aws/sns cannot admit cloudwatch.amazonaws.com: with it no alarm could ever notify.
    [topic] = resources(template, "AWS::SNS::Topic").values()
    key_ref = topic["Properties"]["KmsMasterKeyId"]
    assert key_ref != "alias/aws/sns"
    keys = resources(template, "AWS::KMS::Key")
    key = keys[key_ref["Fn::GetAtt"][0]]
    assert key["Properties"]["EnableKeyRotation"] is True
    [grant] = [
        st
        for st in key["Properties"]["KeyPolicy"]["Statement"]
        if st.get("Principal") == CLOUDWATCH_OF_THIS_ACCOUNT["Principal"]
    ]
    assert grant["Effect"] == "Allow"
    assert grant["Condition"] == CLOUDWATCH_OF_THIS_ACCOUNT["Condition"]
    assert sorted(actions(grant)) == ["kms:Decrypt", "kms:GenerateDataKey*"]


def test_cloudwatch_of_this_account_may_publish_to_the_alarm_topic(template: Template) -> None:
    [policy] = resources(template, "AWS::SNS::TopicPolicy").values()
    publish = [
        st
        for st in policy["Properties"]["PolicyDocument"]["Statement"]
        if st.get("Principal") == CLOUDWATCH_OF_THIS_ACCOUNT["Principal"]
    ]
    assert len(publish) == 1
    assert actions(publish[0]) == ["sns:Publish"]
    assert publish[0]["Effect"] == "Allow"
    assert publish[0]["Condition"] == CLOUDWATCH_OF_THIS_ACCOUNT["Condition"]
    assert publish[0]["Resource"] == {"Ref": next(iter(resources(template, "AWS::SNS::Topic")))}


def test_a_stalled_ingest_queue_alarms_and_shows_on_the_dashboard(template: Template) -> None:
    settings = PipelineShape()
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "MetricName": "ApproximateAgeOfOldestMessage",
            "Namespace": "AWS/SQS",
            "Statistic": "Maximum",
            "Threshold": settings.queue_age_threshold_seconds,
            "ComparisonOperator": "GreaterThanThreshold",
            "AlarmActions": [{"Ref": Match.any_value()}],
        },
    )
    # above what one message can reach through all its retries, so that retries alone never fire it
    assert settings.queue_age_threshold_seconds > settings.max_receive_count * settings.visibility_timeout_seconds
    [dashboard] = resources(template, "AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    assert "ApproximateAgeOfOldestMessage" in body
    assert "ingest stalled (alarm)" in body


def test_the_stall_threshold_is_a_setting(synth_with: Callable[..., Any]) -> None:
    _, template = synth_with(queueAgeAlarmSeconds="3600")
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm", {"MetricName": "ApproximateAgeOfOldestMessage", "Threshold": 3600}
    )
    with pytest.raises(ShapeError, match="queueAgeAlarmSeconds"):
        AppSettings.from_context({"queueAgeAlarmSeconds": "600"}.get)  # under 5 receives x 200 s
