"""Security checks of the synthesized template: encryption and TLS-only access of the queues and the
alarm topic, cdk-nag and cfn-lint for both queue types, and the reasons of nag suppressions and
Checkov skips (.checkov.yaml, what `make lint` runs Checkov with)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template

from tests.support.nag import accepted, unaccepted
from tests.support.templates import resources


def test_every_queue_is_encrypted_and_refuses_plain_http(template: Template) -> None:
    queues = resources(template, "AWS::SQS::Queue")
    assert len(queues) == 4
    assert all(q["Properties"]["SqsManagedSseEnabled"] is True for q in queues.values())
    policies = resources(template, "AWS::SQS::QueuePolicy").values()
    guarded = {
        p["Properties"]["Queues"][0]["Ref"]
        for p in policies
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    }
    assert guarded == set(queues)


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


QUEUE_TYPES = pytest.mark.parametrize(
    "context",
    [
        {},
        {"queueType": "fifo"},
        {"iotTopic": "sensors/+/reports", "restrictProducers": "true"},
        {"silenceHours": "6"},
        {"importEnabled": "true"},
    ],
    ids=["standard", "fifo", "iot-restricted", "silence-check", "history-import"],
)


@QUEUE_TYPES
def test_cdk_nag_reports_no_unsuppressed_finding(synth_with: Callable[..., Any], context: dict[str, str]) -> None:
    stack, _ = synth_with(**context)
    assert unaccepted(stack.node.root, stack) == []


def test_every_accepted_nag_finding_has_a_reason_and_wildcards_are_scoped(
    stack_and_template: tuple[Any, Template],
) -> None:
    findings = accepted(stack_and_template[0])
    assert findings
    for finding, reason in findings.items():
        assert len(reason) >= 40, finding
        if finding.startswith(("AwsSolutions-IAM4", "AwsSolutions-IAM5")):
            assert finding.endswith("]"), finding  # one finding, never the whole rule


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
