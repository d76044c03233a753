"""Synthesizes the stack once per context (jsii needs Node; Node 22 comes with `make setup`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE_BIN = ROOT / ".cache" / "node" / "node_modules" / ".bin"
if NODE_BIN.is_dir():
    os.environ["PATH"] = f"{NODE_BIN}{os.pathsep}{os.environ['PATH']}"
os.environ.setdefault("JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION", "1")

from aws_cdk.assertions import Template  # noqa: E402

from tests.support.templates import synth  # noqa: E402


@pytest.fixture(scope="session")
def stack_and_template() -> tuple[Any, Template]:
    return synth()


@pytest.fixture(scope="session")
def template(stack_and_template: tuple[Any, Template]) -> Template:
    return stack_and_template[1]


@pytest.fixture(scope="session")
def synth_with() -> Callable[..., tuple[Any, Template]]:
    return synth
