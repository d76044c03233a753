"""The stack's outputs in the synthesized template: what the command line reads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_cdk.assertions import Template

from sensor_digest import names


def test_the_stack_outputs_what_the_command_line_reads(template: Template) -> None:
    outputs = template.find_outputs("*")
    assert {"QueueUrl", "DeadLetterQueueUrl", "TableName", "LedgerTableName", "DashboardUrl"} <= set(outputs)
    template.resource_count_is("AWS::CloudWatch::Dashboard", 1)


def test_every_output_says_what_it_is(template: Template) -> None:
    outputs = template.find_outputs("*")
    assert all(len(output.get("Description", "")) >= 20 for output in outputs.values()), outputs


def test_the_stack_says_what_ingest_does_with_unregistered_sensors(synth_with: Callable[..., Any]) -> None:
    for setting in ("accept", "reject"):
        _, template = synth_with(unknownSensors=setting)
        [output] = template.find_outputs(names.OUTPUT_UNKNOWN_SENSORS).values()
        assert output["Value"] == setting
