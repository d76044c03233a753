"""The ingest queue and its function (``QueueIngest``) in the synthesized template: the redrive to
the dead-letter queue, the visibility timeout, the function's environment, the SQS event source,
and the dead-letter queue's room for the reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_cdk.assertions import Match, Template

from sensor_digest.dead_letter_format import DEAD_LETTER_OVERHEAD_BYTES
from sensor_digest_cdk.shape import PipelineShape
from tests.support.templates import DAY, resources


def test_the_queue_redrives_to_a_dead_letter_queue_after_five_receives(template: Template) -> None:
    settings = PipelineShape()
    template.has_resource_properties(
        "AWS::SQS::Queue",
        {
            "RedrivePolicy": {"deadLetterTargetArn": Match.any_value(), "maxReceiveCount": Match.any_value()},
            "VisibilityTimeout": 6 * settings.ingest_timeout_seconds + settings.ingest_batching_window_seconds,
            "MessageRetentionPeriod": 14 * DAY,
        },
    )
    queue = next(q for q in resources(template, "AWS::SQS::Queue").values() if "RedrivePolicy" in q["Properties"])
    assert queue["Properties"]["RedrivePolicy"]["maxReceiveCount"] >= 5
    dead_letter_id = queue["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
    dead_letter = resources(template, "AWS::SQS::Queue")[dead_letter_id]["Properties"]
    assert dead_letter["MessageRetentionPeriod"] == 14 * DAY
    assert dead_letter["MaximumMessageSize"] == 1_048_576  # room for the original body plus the error attribute


def test_the_visibility_timeout_covers_six_function_timeouts_plus_the_window(synth_with: Callable[..., Any]) -> None:
    _, template = synth_with(ingestTimeoutSeconds=60, ingestBatchingWindowSeconds=10)
    template.has_resource_properties("AWS::SQS::Queue", {"VisibilityTimeout": 370})
    template.has_resource_properties("AWS::Lambda::Function", {"Handler": "ingest.handler.handler", "Timeout": 60})


def test_the_ingest_function_gets_the_contract_environment(template: Template) -> None:
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Handler": "ingest.handler.handler",
            "Runtime": "python3.13",
            "Architectures": ["arm64"],
            "TracingConfig": {"Mode": "Active"},
            "Layers": [{"Fn::Sub": Match.string_like_regexp(r"AWSLambdaPowertoolsPythonV3-python313-arm64:36$")}],
            "Environment": {
                "Variables": {
                    "TABLE_NAME": {"Ref": Match.any_value()},
                    "LEDGER_TABLE_NAME": {"Ref": Match.any_value()},
                    "DLQ_URL": {"Ref": Match.any_value()},
                    "DIGEST_TIMEZONE": "UTC",
                    "DELIVERY_MODE": "exactly-once",
                    "MARKER_TTL_SECONDS": str(43 * DAY),
                    "INGEST_MAX_WORKERS": "8",
                    "UNKNOWN_SENSORS": "accept",
                    "PROFILE_CACHE_SECONDS": "60",
                    "QUEUE_TYPE": "standard",
                    "POWERTOOLS_SERVICE_NAME": "sensor-digest-ingest",
                    "POWERTOOLS_METRICS_NAMESPACE": "SensorDigest",
                    "POWERTOOLS_LOG_LEVEL": "INFO",
                }
            },
        },
    )


def test_the_sqs_event_source_reports_item_failures_and_bounds_concurrency(template: Template) -> None:
    template.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "EventSourceArn": {"Fn::GetAtt": [Match.string_like_regexp("IngestQueue"), "Arn"]},
            "BatchSize": 1000,
            "MaximumBatchingWindowInSeconds": 20,
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
            "ScalingConfig": {"MaximumConcurrency": 2},
        },
    )


def test_the_ingest_queue_leaves_room_in_the_dead_letter_queue_for_the_reason(template: Template) -> None:
    settings = PipelineShape()
    queues = resources(template, "AWS::SQS::Queue").values()
    [source] = [q for q in queues if "RedrivePolicy" in q["Properties"]]
    [dead_letters] = [
        q
        for q in queues
        if q["Properties"].get("MaximumMessageSize") == settings.dead_letter_max_message_bytes
        and "RedrivePolicy" not in q["Properties"]
    ]
    assert dead_letters["Properties"]["MaximumMessageSize"] == 1_048_576
    assert source["Properties"]["MaximumMessageSize"] == settings.ingest_max_message_bytes
    assert settings.ingest_max_message_bytes + DEAD_LETTER_OVERHEAD_BYTES == 1_048_576
