"""What docs/deploy.md tells a first deployer about the template, held to it: the outputs the
steps read, what an idle stack is billed for (alarm metrics, the dashboard, the key, point-in-time
recovery), what `make destroy` keeps and under which names, and what switching queueType replaces."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_cdk.assertions import Template

from tests.support.templates import resources

STATEFUL = {"AWS::DynamoDB::Table", "AWS::SQS::Queue", "AWS::Logs::LogGroup", "AWS::KMS::Key"}


def alarm_metrics(alarm: dict[str, Any]) -> int:
    """CloudWatch bills an alarm per metric it reads: one, or each metric of its math expression."""
    properties = alarm["Properties"]
    if "MetricName" in properties:
        return 1
    return sum("MetricStat" in m for m in properties["Metrics"])


def test_the_outputs_the_steps_read(template: Template) -> None:
    assert set(template.find_outputs("*")) == {
        "QueueUrl",
        "DeadLetterQueueUrl",
        "TableName",
        "LedgerTableName",
        "DashboardUrl",
        "StreamFailureQueueUrl",
        "ApiUrl",
        "UnknownSensors",
        "DigestTimezone",
    }


def test_what_an_idle_stack_is_billed_for(template: Template) -> None:
    alarms = resources(template, "AWS::CloudWatch::Alarm").values()
    assert len(alarms) == 12
    assert sum(alarm_metrics(a) for a in alarms) == 16  # 10 alarms on one metric, 2 over three metrics each
    periods = {a["Properties"]["Period"] for a in alarms if "Period" in a["Properties"]} | {
        m["MetricStat"]["Period"] for a in alarms for m in a["Properties"].get("Metrics", []) if "MetricStat" in m
    }
    assert periods == {300}  # standard resolution only
    assert len(resources(template, "AWS::CloudWatch::Dashboard")) == 1
    [key] = resources(template, "AWS::KMS::Key").values()
    assert key["Properties"]["EnableKeyRotation"] is True
    tables = resources(template, "AWS::DynamoDB::Table").values()
    assert len(tables) == 2
    for table in tables:
        assert table["Properties"]["BillingMode"] == "PAY_PER_REQUEST"
        assert table["Properties"]["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    event_sources = resources(template, "AWS::Lambda::EventSourceMapping").values()
    assert len(event_sources) == 3  # the ingest queue's (polled while idle) and the stream's two


def test_destroy_keeps_the_tables_under_fixed_names_and_the_rest_under_generated_ones(template: Template) -> None:
    kept = {k: r for k, r in template.to_json()["Resources"].items() if r.get("DeletionPolicy") == "Retain"}
    assert sorted(r["Type"] for r in kept.values()) == sorted(
        ["AWS::DynamoDB::Table"] * 2 + ["AWS::SQS::Queue"] * 4 + ["AWS::Logs::LogGroup"] * 5 + ["AWS::KMS::Key"]
    )
    assert all(r["UpdateReplacePolicy"] == "Retain" for r in kept.values())
    names = {r["Properties"].get("TableName") for r in kept.values() if r["Type"] == "AWS::DynamoDB::Table"}
    assert names == {"SensorDigest", "SensorDigestLedger"}
    for resource in kept.values():
        assert "QueueName" not in resource["Properties"]
        assert "LogGroupName" not in resource["Properties"]
    for table in resources(template, "AWS::DynamoDB::Table").values():
        assert table["Properties"]["DeletionProtectionEnabled"] is True


def test_a_dev_stack_takes_everything_with_it(synth_with: Callable[..., Any]) -> None:
    _, template = synth_with(stackName="SensorDigestDev", removal="destroy")
    stateful = [r for r in template.to_json()["Resources"].values() if r["Type"] in STATEFUL]
    assert len(stateful) == 12  # the read API's two log groups, the announcer's queue and log group among them
    assert all(r.get("DeletionPolicy") == "Delete" for r in stateful)
    for table in resources(template, "AWS::DynamoDB::Table").values():
        assert table["Properties"]["DeletionProtectionEnabled"] is False


def test_switching_the_queue_type_replaces_the_ingest_queue_and_its_dead_letter_queue(
    template: Template, synth_with: Callable[..., Any]
) -> None:
    _, fifo = synth_with(queueType="fifo")
    standard_queues = resources(template, "AWS::SQS::Queue")
    fifo_queues = resources(fifo, "AWS::SQS::Queue")
    assert set(standard_queues) == set(fifo_queues)  # the same logical ids...
    changed = {
        k
        for k in standard_queues
        if standard_queues[k]["Properties"].get("FifoQueue") != fifo_queues[k]["Properties"].get("FifoQueue")
    }
    assert len(changed) == 2  # ...whose FifoQueue changes: CloudFormation replaces them (not in place)
    assert all("DeadLetterQueue" in k or "IngestQueue" in k for k in changed)
