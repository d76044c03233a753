"""The construct's accepted cdk-nag findings, each with its reason, for users on cdk-nag 3 and on 2.

cdk-nag 3 runs as a CDK validation plugin (``Validations.of(app).add_plugins(AwsSolutionsChecks(app))``)
and reads accepted findings from the acknowledged-rules metadata that ``Validations.of(scope).acknowledge``
writes, on the resource or any construct above it; a finding of a granular rule is acknowledged by its
full id, ``AwsSolutions-IAM5[Resource::*]``. ``acknowledge`` refuses an id with ``::`` in it
(cdklabs/cdk-nag#2351), which every granular IAM finding has, so those are recorded as the same
metadata directly (the documented key, ``Validations.ACKNOWLEDGED_RULES_METADATA_KEY``). cdk-nag 2 ran
as an Aspect and read ``NagSuppressions``; with it installed, the same findings are recorded that way
too, with the ``applies_to`` its granular findings take.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import cdk_nag
from aws_cdk import Acknowledgment, App, Aspects, Stack, Token, Validations
from constructs import IConstruct

NAG_2 = hasattr(cdk_nag, "NagSuppressions")
"""cdk-nag 2 (``NagSuppressions``, an Aspect), else 3 (a validation plugin)."""


def accept(
    scopes: IConstruct | Sequence[IConstruct],
    rule: str,
    reason: str,
    *,
    findings: Iterable[str] = (),
    nag2_applies_to: Sequence[object] | None = None,
    nag2_children: bool = False,
) -> None:
    """Accept ``rule``'s finding on ``scopes`` and everything below them, with ``reason``: the whole
    rule, or with ``findings`` only those (``Resource::*``: ``AwsSolutions-IAM5[Resource::*]``).
    ``nag2_applies_to`` is what cdk-nag 2 matches the findings with, when not their text (a regex);
    cdk-nag 2 reads a scope's own resource only, its children too with ``nag2_children``."""
    findings = list(findings)
    for scope in scopes if isinstance(scopes, Sequence) else [scopes]:
        ids = [f"{rule}[{finding}]" for finding in findings] or [rule]
        plain = [Acknowledgment(id=i, reason=reason) for i in ids if "::" not in i]
        if plain:
            Validations.of(scope).acknowledge(*plain)
        granular = {i: reason for i in ids if "::" in i}  # cdklabs/cdk-nag#2351: acknowledge refuses them
        if granular:
            scope.node.add_metadata(Validations.ACKNOWLEDGED_RULES_METADATA_KEY, granular)
        if NAG_2:
            applies_to = list(nag2_applies_to) if nag2_applies_to is not None else findings
            suppression = cdk_nag.NagPackSuppression(  # type: ignore[attr-defined]
                id=rule, reason=reason, applies_to=applies_to or None
            )
            cdk_nag.NagSuppressions.add_resource_suppressions(  # type: ignore[attr-defined]
                scope, [suppression], apply_to_children=nag2_children
            )


def arn_env(scope: IConstruct) -> tuple[str, str]:
    """How cdk-nag writes the region and account of an ARN of ``scope``'s stack in a finding: the
    pseudo parameters (``<AWS::Region>``, ``<AWS::AccountId>``) for an environment-agnostic stack, the
    values for one bound to an explicit environment."""
    stack = Stack.of(scope)
    region = "<AWS::Region>" if Token.is_unresolved(stack.region) else stack.region
    account = "<AWS::AccountId>" if Token.is_unresolved(stack.account) else stack.account
    return region, account


def accept_table_reader(function: IConstruct, role: IConstruct, who: str) -> None:
    """The two findings every function that only reads the digest table is accepted with: X-Ray's
    actions on ``*`` (its DynamoDB actions scoped to the table and its index) and Python 3.13."""
    accept(
        role,
        "AwsSolutions-IAM5",
        "X-Ray PutTraceSegments/PutTelemetryRecords support no resource-level permissions; "
        f"{who}'s DynamoDB actions are scoped to the digest table and its Profiles index.",
        findings=["Resource::*"],
        nag2_children=True,
    )
    accept(
        function,
        "AwsSolutions-L1",
        "Python 3.13, as the pipeline's other functions: the newest Python the project runs its "
        "unit tier on (make test-unit-py313).",
    )


def check(app: App) -> None:
    """Run cdk-nag's AWS Solutions checks on ``app`` at synth: a finding not accepted fails it."""
    if NAG_2:
        Aspects.of(app).add(cdk_nag.AwsSolutionsChecks(verbose=True))  # type: ignore[call-arg, arg-type]
    else:
        Validations.of(app).add_plugins(cdk_nag.AwsSolutionsChecks(app, verbose=True))  # type: ignore[call-arg, arg-type]


def regex_applies_to(regex: str) -> object:
    """cdk-nag 2's ``RegexAppliesTo`` (``/regex/``), for ``accept``'s ``nag2_applies_to``."""
    return cdk_nag.RegexAppliesTo(regex=regex) if NAG_2 else regex  # type: ignore[attr-defined]
