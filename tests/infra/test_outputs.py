"""The stack's outputs in the synthesized template: what the command line reads."""

from __future__ import annotations

from aws_cdk.assertions import Template


def test_the_stack_outputs_what_the_command_line_reads(template: Template) -> None:
    outputs = template.find_outputs("*")
    assert {"QueueUrl", "DeadLetterQueueUrl", "TableName", "LedgerTableName", "DashboardUrl"} <= set(outputs)
    template.resource_count_is("AWS::CloudWatch::Dashboard", 1)
