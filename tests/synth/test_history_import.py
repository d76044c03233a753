"""The history import in the synthesized template (CDK's synthesizer, no AWS): off by default; with
``importEnabled``, a versioned, encrypted, TLS-only bucket and a state machine: prepare, a Distributed
Map of the read function over the run's chunks (its S3 JSON item reader), one of the count function
over the partitions, at ``importMaxConcurrency``, retried, then the finish step; each function granted
what it calls and no more."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template

from sensor_digest import names
from tests.support.templates import actions, policy_of, resources

Synth = Callable[..., tuple[Any, Template]]
PREPARE, READ, COUNT, FINISH = (f"history.handler.{step}" for step in ("prepare", "read", "count", "finish"))


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
    assert not handlers & {PREPARE, READ, COUNT, FINISH}
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


def test_prepare_then_a_map_reads_the_chunks_and_one_counts_the_partitions_then_finish(enabled: Template) -> None:
    states = definition(enabled)["States"]
    prepare = states[definition(enabled)["StartAt"]]
    assert prepare["Resource"] == f"<{function_id(enabled, PREPARE)}>"
    assert prepare["Parameters"] == {"input.$": "$", "run.$": "$$.Execution.Name"}  # a run's own prefix
    bucket = next(iter(resources(enabled, "AWS::S3::Bucket")))
    read, count = states["ReadChunks"], states["CountPartitions"]
    assert read["ItemReader"]["ReaderConfig"] == {"InputType": "JSON"}
    assert read["ItemReader"]["Parameters"] == {"Bucket": f"<{bucket}>", "Key.$": "$.prepared.chunks"}
    assert count["ItemsPath"] == "$.prepared.partitions"
    assert read["Next"] == "CountPartitions" and count["Next"] == "Finish"
    for mapped, item, handler, mode in ((read, "chunk", READ, "EXPRESS"), (count, "partition", COUNT, "STANDARD")):
        assert mapped["ItemProcessor"]["ProcessorConfig"] == {"Mode": "DISTRIBUTED", "ExecutionType": mode}
        assert mapped["ItemSelector"] == {f"{item}.$": "$$.Map.Item.Value", "prepared.$": "$.prepared"}
        assert mapped["MaxConcurrency"] == 10  # the default, importMaxConcurrency
        assert mapped.get("ToleratedFailurePercentage", 0) == 0  # a failed item fails the run: redrive it
        assert mapped["ResultWriter"]["Resource"] == "arn:<AWS::Partition>:states:::s3:putObject"  # results kept apart
        assert mapped["ResultWriter"]["Parameters"]["Bucket"] == f"<{bucket}>"
        assert mapped["ResultPath"] is None
        (step,) = mapped["ItemProcessor"]["States"].values()
        assert step["Resource"] == f"<{function_id(enabled, handler)}>"
        every_error = next(r for r in step["Retry"] if r["ErrorEquals"] == ["States.ALL"])
        assert every_error["MaxAttempts"] >= 2
    assert states["Finish"]["Resource"] == f"<{function_id(enabled, FINISH)}>"
    assert states["Finish"]["End"] is True
    assert any(r["ErrorEquals"] == ["States.TaskFailed"] for r in states["Finish"]["Retry"])
    skip = {c["StringEquals"]: c["Next"] for c in states["What"]["Choices"]}
    assert states[skip["skip"]]["Type"] == "Succeed"  # an object imported before: nothing read again


def test_concurrency_is_the_stack_option(synth_with: Synth) -> None:
    _, template = synth_with(importEnabled="true", importMaxConcurrency="40")
    states = definition(template)["States"]
    assert states["ReadChunks"]["MaxConcurrency"] == states["CountPartitions"]["MaxConcurrency"] == 40


def test_the_count_function_may_only_write_counts_and_its_reports(enabled: Template) -> None:
    statements = policy_of(enabled, COUNT)
    granted = actions_of(statements)
    assert {a for a in granted if a.startswith("dynamodb:")} == {
        "dynamodb:UpdateItem",
        "dynamodb:PutItem",
        "dynamodb:GetItem",  # a day read again, strongly consistent, after a write failed
        "dynamodb:BatchGetItem",
    }
    assert {a for a in granted if a.startswith("s3:")} == {"s3:PutObject", "s3:GetObject", "s3:ListBucket"}
    for statement in statements:  # the run's objects only: never an input
        if actions_of([statement]) & {"s3:PutObject", "s3:GetObject"}:
            assert "import-reports/" in json.dumps(statement["Resource"])
    assert not [a for a in granted if "*" in a]  # no action wildcard


def test_the_read_function_reads_the_inputs_and_profiles_and_writes_no_count(enabled: Template) -> None:
    granted = actions_of(policy_of(enabled, READ))
    assert {a for a in granted if a.startswith("dynamodb:")} == {
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
        "dynamodb:PutItem",  # a sensor's zone pin, in the ledger alone
    }
    read = policy_of(enabled, READ)
    puts = [s for s in read if "dynamodb:PutItem" in actions_of([s])]
    assert all("Ledger" in json.dumps(s["Resource"]) for s in puts)
    assert {"s3:GetObject", "s3:GetObjectVersion", "s3:PutObject"} == {a for a in granted if a.startswith("s3:")}


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
