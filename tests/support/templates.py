"""The synthesized stack and reading its template: resources by type, the statements of a
function's role, a statement's actions. Properties, never logical ids. And ``cdk synth`` (or
``make``) run as a deployer runs it, in a process of its own.

Synthesis needs Node: importing this module puts the checkout's Node 22 first on ``PATH``
(``tests.support.node``), before jsii starts it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support import node
from tests.support.node import NODE_BIN, ROOT

node.on_path()

from aws_cdk.assertions import Template  # noqa: E402

from app import build_app  # noqa: E402

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


def deployer_env() -> dict[str, str]:
    """A deployer's shell as the Makefile sets it up: the virtualenv's python3 and the checkout's CDK
    CLI first on ``PATH``, and no AWS settings (the tests' fake credentials would send the CLI to
    look for an account it cannot reach; synth needs none)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), str(NODE_BIN), env.get("PATH", "")])
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    env["CDK_DISABLE_VERSION_CHECK"] = "true"
    env["CDK_DISABLE_CLI_TELEMETRY"] = "true"
    env["JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION"] = "1"
    return env


def cdk_synth(*options: str, output: Path) -> subprocess.CompletedProcess[str]:
    """``cdk synth --quiet`` with ``options`` (``-c key=value`` ...), the cloud assembly into ``output``."""
    command = [str(NODE_BIN / "cdk"), "synth", "--quiet", "--no-notices", "--output", str(output), *options]
    env = deployer_env()
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


def error_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    """The app's refusals: its lines starting with ``error:``."""
    return [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("error:")]
