"""Template tests on the synthesized stack (aws_cdk.assertions): properties, never logical ids."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Annotations, Match, Template

from sensor_digest.dead_letter_format import DEAD_LETTER_OVERHEAD_BYTES
from sensor_digest.stream_filter import DAY_ITEM_FILTER
from sensor_digest_cdk.lambda_asset import BUILD
from sensor_digest_cdk.shape import Settings, SettingsError

DAY = 24 * 3600


def resources(template: Template, kind: str) -> dict[str, Any]:
    return template.find_resources(kind)


def statements(template: Template) -> list[dict[str, Any]]:
    out = []
    for policy in resources(template, "AWS::IAM::Policy").values():
        out.extend(policy["Properties"]["PolicyDocument"]["Statement"])
    return out


def policy_of(template: Template, function_handler: str) -> list[dict[str, Any]]:
    """The statements of the role of the function with this handler."""
    functions = resources(template, "AWS::Lambda::Function")
    role = next(
        f["Properties"]["Role"]["Fn::GetAtt"][0]
        for f in functions.values()
        if f["Properties"]["Handler"] == function_handler
    )
    out = []
    for policy in resources(template, "AWS::IAM::Policy").values():
        if {"Ref": role} in policy["Properties"]["Roles"]:
            out.extend(policy["Properties"]["PolicyDocument"]["Statement"])
    return out


def actions(statement: dict[str, Any]) -> list[str]:
    value = statement["Action"]
    return [value] if isinstance(value, str) else list(value)


# -- storage ----------------------------------------------------------------------------------


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


# -- queues -----------------------------------------------------------------------------------


def test_every_queue_is_encrypted_and_refuses_plain_http(template: Template) -> None:
    queues = resources(template, "AWS::SQS::Queue")
    assert len(queues) == 3
    assert all(q["Properties"]["SqsManagedSseEnabled"] is True for q in queues.values())
    policies = resources(template, "AWS::SQS::QueuePolicy").values()
    guarded = {
        p["Properties"]["Queues"][0]["Ref"]
        for p in policies
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    }
    assert guarded == set(queues)


def test_the_queue_redrives_to_a_dead_letter_queue_after_five_receives(template: Template) -> None:
    settings = Settings()
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


# -- functions --------------------------------------------------------------------------------


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
                    "MARKER_TTL_SECONDS": str(29 * DAY),
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


def test_both_functions_run_python_3_13_with_the_powertools_layer_built_for_it(template: Template) -> None:
    # 3.13 is the newest Python the unit tier also runs on (make test-unit-py313); layer 36 is Powertools 3.31.1
    functions = [
        f["Properties"] for f in resources(template, "AWS::Lambda::Function").values() if "Layers" in f["Properties"]
    ]
    assert sorted(f["Handler"] for f in functions) == ["ingest.handler.handler", "summary.handler.handler"]
    for function in functions:
        assert function["Runtime"] == "python3.13"
        assert function["Architectures"] == ["arm64"]
        (layer,) = function["Layers"]
        assert layer["Fn::Sub"].endswith(":017000801446:layer:AWSLambdaPowertoolsPythonV3-python313-arm64:36")


def test_a_digest_timezone_the_functions_cannot_load_is_refused_at_synth(synth_with: Callable[..., Any]) -> None:
    # posix/Asia/Tokyo loads on a machine with /usr/share/zoneinfo, never from the tzdata the asset ships
    with pytest.raises(SettingsError, match=r"digestTimezone 'posix/Asia/Tokyo' is not an IANA time zone of tzdata"):
        Settings.from_context({"digestTimezone": "posix/Asia/Tokyo"}.get)
    _, template = synth_with(digestTimezone="Asia/Tokyo")
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {"Environment": {"Variables": Match.object_like({"DIGEST_TIMEZONE": "Asia/Tokyo"})}},
    )


def test_the_marker_lifetime_is_derived_from_the_queue_and_redrive_windows() -> None:
    settings = Settings(queue_retention_days=4, dead_letter_retention_days=14)
    assert settings.marker_ttl_seconds == (4 + 14 + 1) * DAY


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


def test_the_function_asset_carries_the_handlers_and_zone_data_but_no_tests(stack_and_template: Any) -> None:
    assert (BUILD / "ingest" / "handler.py").is_file()
    assert (BUILD / "summary" / "handler.py").is_file()
    assert (BUILD / "sensor_digest" / "counting" / "ledger.py").is_file()
    assert (BUILD / "tzdata" / "zoneinfo" / "Asia" / "Tokyo").is_file()
    assert not list(BUILD.rglob("__pycache__"))
    assert not (BUILD / "tests").exists()


# -- least privilege --------------------------------------------------------------------------


def test_ingest_may_only_write_items_and_send_to_the_dead_letter_queue(template: Template) -> None:
    granted = {
        (a, json.dumps(s["Resource"])) for s in policy_of(template, "ingest.handler.handler") for a in actions(s)
    }
    dynamodb = {(a, r) for a, r in granted if a.startswith("dynamodb:")}
    assert {a for a, _ in dynamodb} == {
        "dynamodb:UpdateItem",
        "dynamodb:PutItem",
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
    }
    ledger = json.dumps({"Fn::GetAtt": [_table_id(template, "SensorDigestLedger"), "Arn"]})
    assert {a for a, r in dynamodb if r == ledger} == {"dynamodb:PutItem", "dynamodb:BatchGetItem"}  # markers only
    assert {r for a, r in dynamodb if a == "dynamodb:UpdateItem"} == {
        json.dumps({"Fn::GetAtt": [_table_id(template, "SensorDigest"), "Arn"]})
    }
    assert {a for a, r in granted if "DeadLetter" in r} == {"sqs:SendMessage"}


def test_summary_may_only_update_the_digest_and_read_its_stream(template: Template) -> None:
    granted = {
        a for s in policy_of(template, "summary.handler.handler") for a in actions(s) if a.startswith("dynamodb:")
    }
    assert granted == {
        "dynamodb:UpdateItem",
        "dynamodb:DescribeStream",
        "dynamodb:GetRecords",
        "dynamodb:GetShardIterator",
        "dynamodb:ListStreams",
    }


def test_functions_write_only_their_own_log_group(template: Template) -> None:
    # No AWSLambdaBasicExecutionRole (logs:* actions on "*"): each role writes its own group's streams.
    log_groups = resources(template, "AWS::Logs::LogGroup")
    for role in resources(template, "AWS::IAM::Role").values():
        assert not role["Properties"].get("ManagedPolicyArns"), role
    for handler in ("ingest.handler.handler", "summary.handler.handler"):
        [function] = [
            f for f in resources(template, "AWS::Lambda::Function").values() if f["Properties"]["Handler"] == handler
        ]
        own_group = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert own_group in log_groups
        logs = [s for s in policy_of(template, handler) if any(a.startswith("logs:") for a in actions(s))]
        assert len(logs) == 1
        assert sorted(actions(logs[0])) == ["logs:CreateLogStream", "logs:PutLogEvents"]
        assert logs[0]["Resource"] == {"Fn::GetAtt": [own_group, "Arn"]}


def test_the_ingest_queue_leaves_room_in_the_dead_letter_queue_for_the_reason(template: Template) -> None:
    settings = Settings()
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


def test_no_policy_grants_deletes_scans_or_wildcard_actions(template: Template) -> None:
    for statement in statements(template):
        for action in actions(statement):
            assert not action.endswith("*"), action
            assert action not in ("dynamodb:DeleteItem", "dynamodb:Scan", "dynamodb:BatchWriteItem"), action
        if statement["Resource"] == "*":
            assert set(actions(statement)) <= {
                "xray:PutTraceSegments",
                "xray:PutTelemetryRecords",
                "dynamodb:ListStreams",
            }


def _table_id(template: Template, name: str) -> str:
    tables = resources(template, "AWS::DynamoDB::Table")
    return next(k for k, v in tables.items() if v["Properties"]["TableName"] == name)


# -- monitoring -------------------------------------------------------------------------------


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
    assert len(depth) == 2
    assert all(
        a["Properties"]["Threshold"] == 0 and a["Properties"]["ComparisonOperator"] == "GreaterThanThreshold"
        for a in depth
    )
    throttles = [a for a in alarms if "Metrics" in a["Properties"]]  # DynamoDB throttles: a metric math sum
    assert len(throttles) == 2


def test_the_alarm_topic_is_encrypted_and_tls_only(template: Template) -> None:
    template.has_resource_properties("AWS::SNS::Topic", {"KmsMasterKeyId": Match.any_value()})
    template.has_resource_properties(
        "AWS::SNS::TopicPolicy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [Match.object_like({"Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": "false"}}})]
                )
            }
        },
    )


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
    settings = Settings()
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
    assert settings.queue_age_threshold_seconds > settings.max_receive_count * settings.visibility_timeout.to_seconds()
    [dashboard] = resources(template, "AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    assert "ApproximateAgeOfOldestMessage" in body
    assert "ingest stalled (alarm)" in body


def test_the_stall_threshold_is_a_setting(synth_with: Callable[..., Any]) -> None:
    _, template = synth_with(queueAgeAlarmSeconds="3600")
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm", {"MetricName": "ApproximateAgeOfOldestMessage", "Threshold": 3600}
    )
    with pytest.raises(SettingsError, match="queueAgeAlarmSeconds"):
        Settings.from_context({"queueAgeAlarmSeconds": "600"}.get)  # under 5 receives x 200 s


def test_the_stack_outputs_what_the_command_line_reads(template: Template) -> None:
    outputs = template.find_outputs("*")
    assert {"QueueUrl", "DeadLetterQueueUrl", "TableName", "LedgerTableName", "DashboardUrl"} <= set(outputs)
    template.resource_count_is("AWS::CloudWatch::Dashboard", 1)


# -- checks -----------------------------------------------------------------------------------


QUEUE_TYPES = pytest.mark.parametrize("context", [{}, {"queueType": "fifo"}], ids=["standard", "fifo"])


@QUEUE_TYPES
def test_cdk_nag_reports_no_unsuppressed_finding(synth_with: Callable[..., Any], context: dict[str, str]) -> None:
    stack, _ = synth_with(**context)
    annotations = Annotations.from_stack(stack)
    errors = annotations.find_error("*", Match.string_like_regexp("AwsSolutions-.*"))
    warnings = annotations.find_warning("*", Match.string_like_regexp("AwsSolutions-.*"))
    assert [e.entry.data for e in errors] == []
    assert [w.entry.data for w in warnings] == []


def test_every_nag_suppression_has_a_reason_and_wildcards_are_scoped(template: Template) -> None:
    suppressions = []
    for resource in template.to_json()["Resources"].values():
        suppressions += resource.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", [])
    assert suppressions
    for rule in suppressions:
        assert len(rule["reason"]) >= 40, rule
        if rule["id"] in ("AwsSolutions-IAM4", "AwsSolutions-IAM5"):
            assert rule.get("applies_to"), rule


@QUEUE_TYPES
def test_cfn_lint_finds_no_error(synth_with: Callable[..., Any], context: dict[str, str], tmp_path: Path) -> None:
    _, template = synth_with(**context)
    path = tmp_path / "template.json"
    path.write_text(json.dumps(template.to_json()))
    cfn_lint = Path(sys.executable).parent / "cfn-lint"
    result = subprocess.run([str(cfn_lint), "--format", "json", str(path)], capture_output=True, text=True, check=False)
    assert result.returncode in (0, 4), result.stderr  # bit 2 set means errors (or a crash)
    findings = json.loads(result.stdout)
    errors = [f for f in findings if f["Level"] == "Error"]
    assert errors == []
    # Accepted: W3005, a DependsOn that CDK itself emits (function -> its role's default policy).
    assert {f["Rule"]["Id"] for f in findings} <= {"W3005"}


def test_bad_context_is_refused_with_the_reason() -> None:
    with pytest.raises(SettingsError, match="maxReceiveCount must be at least 5"):
        Settings.from_context({"maxReceiveCount": "3"}.get)
    with pytest.raises(SettingsError, match="billing must be on-demand or provisioned"):
        Settings.from_context({"billing": "free"}.get)


def test_every_checkov_skip_names_its_reason() -> None:
    # .checkov.yaml is what `make lint` runs Checkov with; a skip without a written reason is refused.
    lines = (Path(__file__).resolve().parents[2] / ".checkov.yaml").read_text().splitlines()
    start = lines.index("skip-check:")
    skips = [line for line in lines[start + 1 :] if line.startswith("  - ")]
    assert skips
    for line in skips:
        check, _, reason = line.removeprefix("  - ").partition("#")
        assert check.strip().startswith("CKV"), line
        assert len(reason.strip()) >= 60, line
