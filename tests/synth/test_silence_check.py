"""The scheduled silence check in the synthesized template: off by default; with ``silenceHours``,
an hourly EventBridge rule, a function that may only Query and BatchGetItem the digest table and its
Profiles index, and alarms on ``silentSensors`` and ``silenceUnchecked`` (this pipeline's series) to
the alarm topic."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_cdk.assertions import Match, Template

from sensor_digest import names
from tests.support.templates import policy_of, resources

HANDLER = "silence.handler.handler"


def test_no_silence_check_is_deployed_by_default(template: Template) -> None:
    handlers = [f["Properties"]["Handler"] for f in resources(template, "AWS::Lambda::Function").values()]
    assert HANDLER not in handlers
    rules = resources(template, "AWS::Events::Rule").values()
    assert not [r for r in rules if "ScheduleExpression" in r["Properties"]]  # the alarm events' rule only


def test_with_a_default_threshold_the_check_runs_hourly_and_alarms_through_the_topic(
    synth_with: Callable[..., tuple[Any, Template]],
) -> None:
    _, template = synth_with(silenceHours=6)

    template.has_resource_properties("AWS::Events::Rule", {"ScheduleExpression": "rate(1 hour)", "State": "ENABLED"})
    template.has_resource_properties(  # a full vCPU: at 100,000 sensors the check is CPU-bound (bench.silence)
        "AWS::Lambda::Function",
        {
            "Handler": HANDLER,
            "MemorySize": 1769,
            "Timeout": 300,
            "Environment": {"Variables": Match.object_like({"SILENCE_HOURS": "6"})},
        },
    )
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "MetricName": names.METRIC_SILENT_SENSORS,
            "Namespace": names.METRICS_NAMESPACE,
            "Dimensions": Match.array_with([Match.object_like({"Name": names.PIPELINE_DIMENSION})]),
            "Threshold": 0,
            "ComparisonOperator": "GreaterThanThreshold",
            "AlarmActions": [{"Ref": Match.any_value()}],
        },
    )
    template.has_resource_properties(  # a sensor the check could not decide (its reads failed) alarms too
        "AWS::CloudWatch::Alarm",
        {
            "MetricName": names.METRIC_SILENCE_UNCHECKED,
            "Dimensions": Match.array_with([Match.object_like({"Name": names.PIPELINE_DIMENSION})]),
            "Threshold": 0,
            "ComparisonOperator": "GreaterThanThreshold",
            "AlarmActions": [{"Ref": Match.any_value()}],
        },
    )
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Handler": "api.handler.handler",
            "Environment": {"Variables": Match.object_like({"SILENCE_HOURS": "6"})},
        },
    )


def test_the_check_may_only_read_the_digest_table_and_its_profiles_index(
    synth_with: Callable[..., tuple[Any, Template]],
) -> None:
    _, template = synth_with(silenceHours=6)

    dynamo = [s for s in policy_of(template, HANDLER) if "dynamodb" in str(s["Action"])]
    assert len(dynamo) == 1
    assert sorted(dynamo[0]["Action"]) == ["dynamodb:BatchGetItem", "dynamodb:Query"]
    assert len(dynamo[0]["Resource"]) == 2  # the table and its Profiles index
