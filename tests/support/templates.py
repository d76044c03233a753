"""The synthesized stack and reading its template: resources by type, the statements of a
function's role, a statement's actions. Properties, never logical ids.

Synthesis needs Node on ``PATH`` (tests/infra/conftest.py puts the checkout's there first).
"""

from __future__ import annotations

from typing import Any

from aws_cdk.assertions import Template

from app import build_app

DAY = 24 * 3600
"""A day in seconds."""

_cache: dict[str, tuple[Any, Template]] = {}


def synth(**context: object) -> tuple[Any, Template]:
    """The stack built from ``context`` and its template, synthesized once per context."""
    key = repr(sorted(context.items()))
    if key not in _cache:
        _, stack = build_app(context)
        _cache[key] = (stack, Template.from_stack(stack))
    return _cache[key]


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


def table_id(template: Template, name: str) -> str:
    """The logical id of the table named ``name`` (to match references to it, never to assert on it)."""
    tables = resources(template, "AWS::DynamoDB::Table")
    return next(k for k, v in tables.items() if v["Properties"]["TableName"] == name)
