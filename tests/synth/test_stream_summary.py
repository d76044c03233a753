"""The summary function on the table's stream (``StreamSummary``) in the synthesized template: the
stream event source, its filter on day items, and the function's environment."""

from __future__ import annotations

import json

from aws_cdk.assertions import Match, Template

from sensor_digest.stream_filter import DAY_ITEM_FILTER
from tests.support.templates import DAY


def test_the_summary_reads_only_day_items_from_the_stream(template: Template) -> None:
    template.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "EventSourceArn": {"Fn::GetAtt": [Match.any_value(), "StreamArn"]},
            "StartingPosition": "TRIM_HORIZON",
            "BatchSize": 1000,
            "MaximumBatchingWindowInSeconds": 5,
            "BisectBatchOnFunctionError": True,
            "MaximumRetryAttempts": 10,
            "MaximumRecordAgeInSeconds": DAY,
            "DestinationConfig": {"OnFailure": {"Destination": {"Fn::GetAtt": [Match.any_value(), "Arn"]}}},
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
            "FilterCriteria": {"Filters": [{"Pattern": json.dumps(DAY_ITEM_FILTER, separators=(",", ":"))}]},
        },
    )
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Handler": "summary.handler.handler",
            "Environment": {"Variables": Match.object_like({"TABLE_NAME": Match.any_value()})},
        },
    )
