"""cdk-nag's verdict on an app, on cdk-nag 3 (a validation plugin, ``validate_scope``) or 2 (an Aspect,
annotations): the findings not accepted, and the findings the constructs accept with their reasons."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import cdk_nag
from aws_cdk.assertions import Annotations, Match

from sensor_digest_cdk.nag import NAG_2


def unaccepted(app: cdk.App, *stacks: cdk.Stack) -> list[str]:
    """Every AWS Solutions finding in ``stacks`` of ``app`` that no construct accepts, as
    ``<rule id>[<finding>]`` (cdk-nag 2: the annotation's text, which starts with it)."""
    if NAG_2:
        cdk.Aspects.of(app).add(cdk_nag.AwsSolutionsChecks(verbose=True))  # type: ignore[call-arg]
        found = []
        for stack in stacks:
            annotations = Annotations.from_stack(stack)
            for entries in (annotations.find_error, annotations.find_warning):
                found += [e.entry.data for e in entries("*", Match.string_like_regexp("AwsSolutions-.*"))]
        return found
    report = cdk_nag.AwsSolutionsChecks(app, verbose=True).validate_scope(app)  # type: ignore[call-arg, attr-defined]
    return [violation.rule_name for violation in report.violations]


def accepted(scope: Any) -> dict[str, str]:
    """Every finding accepted in ``scope``, by id (``AwsSolutions-IAM5[Resource::*]``, or the rule
    alone), with its reason: cdk-nag 3's acknowledged rules, or cdk-nag 2's suppressions."""
    found: dict[str, str] = {}
    for construct in scope.node.find_all():
        if NAG_2 and isinstance(construct, cdk.CfnResource):
            for rule in (construct.get_metadata("cdk_nag") or {}).get("rules_to_suppress", []):
                for applies in rule.get("applies_to") or [None]:
                    text = applies if isinstance(applies, str) else (applies or {}).get("regex")
                    found[f"{rule['id']}[{text}]" if text else rule["id"]] = rule["reason"]
        for entry in [] if NAG_2 else construct.node.metadata:
            if entry.type == cdk.Validations.ACKNOWLEDGED_RULES_METADATA_KEY:
                found |= {_unqualified(key): reason for key, reason in entry.data.items()}
    return found


def _unqualified(key: str) -> str:
    """An acknowledged id without the prefix CDK's ``acknowledge`` adds (``Annotation::``)."""
    return key.split("::", 1)[1] if key.lower().startswith("annotation::") else key
