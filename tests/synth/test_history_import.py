"""The history import in the synthesized template (CDK's synthesizer, no AWS): off by default; with
``importEnabled``, a versioned, encrypted, TLS-only bucket and a state machine whose Distributed Map
reads the prepared object's version (JSON lines or CSV) in batches of 1,000 rows for the batch
function, at ``importMaxConcurrency``, retried, then the finish step; each function granted what it
calls and no more."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template

from sensor_digest import names
from sensor_digest_cdk.history_import import IMPORT_BATCH_ROWS
from tests.support.templates import actions, policy_of, resources

Synth = Callable[..., tuple[Any, Template]]
PREPARE, BATCH, FINISH = "import_.handler.prepare", "import_.handler.handler", "import_.handler.finish"


def definition(template: Template) -> dict[str, Any]:
    """The state machine's definition, each reference to another resource written as ``<LogicalId>``."""
    (machine,) = resources(template, "AWS::StepFunctions::StateMachine").values()
    parts = machine["Properties"]["DefinitionString"]["Fn::Join"][1]
    text = "".join(p if isinstance(p, str) else f"<{(p.get('Ref') or p['Fn::GetAtt'][0])}>" for p in parts)
    return json.loads(text)  # type: ignore[no-any-return]


def actions_of(statements: list[dict[str, Any]]) -> set[str]:
    return {a for s in statements for a in actions(s)}


def function_id(template: Template, handler: str) -> str:
    return next(
        logical
        for logical, f in resources(template, "AWS::Lambda::Function").items()
        if f["Properties"]["Handler"] == handler
    )


@pytest.fixture(scope="module")
def enabled(synth_with: Synth) -> Template:
    return synth_with(importEnabled="true")[1]


def test_nothing_of_the_import_is_deployed_by_default(template: Template) -> None:
    assert resources(template, "AWS::StepFunctions::StateMachine") == {}
    handlers = {f["Properties"]["Handler"] for f in resources(template, "AWS::Lambda::Function").values()}
    assert not handlers & {PREPARE, BATCH, FINISH}
    assert names.OUTPUT_IMPORT_BUCKET not in template.to_json().get("Outputs", {})


def test_the_bucket_is_encrypted_versioned_private_and_tls_only(enabled: Template) -> None:
    enabled.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "BucketEncryption": {
                "ServerSideEncryptionConfiguration": [{"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]
            },
            "VersioningConfiguration": {"Status": "Enabled"},
            "PublicAccessBlockConfiguration": {
                "BlockPublicAcls": True,
                "BlockPublicPolicy": True,
                "IgnorePublicAcls": True,
                "RestrictPublicBuckets": True,
            },
        },
    )
    enabled.has_resource_properties(
        "AWS::S3::BucketPolicy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Effect": "Deny",
                                "Action": "s3:*",
                                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                            }
                        )
                    ]
                )
            }
        },
    )


def test_the_distributed_map_reads_the_prepared_version_in_batches_for_the_batch_function(enabled: Template) -> None:
    states = definition(enabled)["States"]
    assert states[definition(enabled)["StartAt"]]["Resource"] == f"<{function_id(enabled, PREPARE)}>"
    bucket = next(iter(resources(enabled, "AWS::S3::Bucket")))
    for name, reader in (
        ("RowsJSONL", {"InputType": "JSONL"}),
        ("RowsCSV", {"InputType": "CSV", "CSVHeaderLocation": "FIRST_ROW"}),
    ):
        rows = states[name]
        assert rows["ItemProcessor"]["ProcessorConfig"]["Mode"] == "DISTRIBUTED"
        assert rows["ItemReader"]["ReaderConfig"] == reader
        assert rows["ItemReader"]["Parameters"] == {
            "Bucket": f"<{bucket}>",
            "Key.$": "$.prepared.object.key",
            "VersionId.$": "$.prepared.object.version",  # the object prepare identified, not one put since
        }
        batcher = rows["ItemBatcher"]
        assert batcher["MaxItemsPerBatch"] == IMPORT_BATCH_ROWS
        assert batcher["MaxInputBytesPerBatch"] <= 256 * 1024  # Step Functions' payload limit
        assert batcher["BatchInput"]["object_id.$"] == "$.prepared.object_id"
        assert rows["ItemSelector"] == {"position.$": "$$.Map.Item.Index", "row.$": "$$.Map.Item.Value"}
        assert rows["MaxConcurrency"] == 10  # the default, importMaxConcurrency
        assert rows.get("ToleratedFailurePercentage", 0) == 0  # a failed batch fails the run: redrive it
        assert rows["ResultWriter"]["Parameters"]["Bucket"] == f"<{bucket}>"
        assert rows["Next"] == "Finish"
        (count,) = rows["ItemProcessor"]["States"].values()
        assert count["Resource"] == f"<{function_id(enabled, BATCH)}>"
        every_error = next(r for r in count["Retry"] if r["ErrorEquals"] == ["States.ALL"])
        assert every_error["MaxAttempts"] >= 2
    assert states["Finish"]["Resource"] == f"<{function_id(enabled, FINISH)}>"
    assert states["Finish"]["End"] is True
    assert any(r["ErrorEquals"] == ["States.TaskFailed"] for r in states["Finish"]["Retry"])
    assert states["Format"]["Choices"][0] == {"Variable": "$.prepared.format", "StringEquals": "csv", "Next": "RowsCSV"}
    skip = {c["StringEquals"]: c["Next"] for c in states["What"]["Choices"]}
    assert states[skip["skip"]]["Type"] == "Succeed"  # an object imported before: nothing read again


def test_concurrency_is_the_stack_option(synth_with: Synth) -> None:
    _, template = synth_with(importEnabled="true", importMaxConcurrency="40")
    states = definition(template)["States"]
    assert states["RowsJSONL"]["MaxConcurrency"] == states["RowsCSV"]["MaxConcurrency"] == 40


def test_the_batch_function_may_only_write_counts_and_its_reports(enabled: Template) -> None:
    statements = policy_of(enabled, BATCH)
    granted = actions_of(statements)
    assert {a for a in granted if a.startswith("dynamodb:")} == {
        "dynamodb:UpdateItem",
        "dynamodb:PutItem",
        "dynamodb:GetItem",  # a day read again, strongly consistent, after a write failed
        "dynamodb:BatchGetItem",
    }
    assert {a for a in granted if a.startswith("s3:")} == {"s3:PutObject"}  # its batch's report, nothing read
    puts = [s for s in statements if "s3:PutObject" in actions_of([s])]
    assert all("import-reports/" in json.dumps(s["Resource"]) for s in puts)
    assert not [a for a in granted if "*" in a]  # no action wildcard


def test_the_prepare_and_finish_functions_touch_no_count(enabled: Template) -> None:
    for handler in (PREPARE, FINISH):
        granted = actions_of(policy_of(enabled, handler))
        assert {a for a in granted if a.startswith("dynamodb:")} == {"dynamodb:GetItem", "dynamodb:UpdateItem"}
    assert "s3:ListBucket" in actions_of(policy_of(enabled, FINISH))
    assert "s3:ListBucket" not in actions_of(policy_of(enabled, PREPARE))


def test_the_stack_names_the_bucket_and_state_machine_for_the_cli(enabled: Template) -> None:
    outputs = enabled.to_json()["Outputs"]
    assert {names.OUTPUT_IMPORT_BUCKET, names.OUTPUT_IMPORT_STATE_MACHINE} <= set(outputs)
    enabled.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {"MetricName": "ExecutionsFailed", "Namespace": "AWS/States", "AlarmActions": [{"Ref": Match.any_value()}]},
    )


def test_the_one_checkov_skip_of_the_bucket_says_why(enabled: Template) -> None:
    # Checkov's finding on the import's bucket (no server access logs) is skipped on that bucket alone
    (bucket,) = resources(enabled, "AWS::S3::Bucket").values()
    (skip,) = bucket["Metadata"]["checkov"]["skip"]
    assert skip["id"] == "CKV_AWS_18" and len(skip["comment"]) >= 60
