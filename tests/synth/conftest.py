"""Synthesizes the stack once per context (jsii needs Node; Node 22 comes with `make setup`, and
``tests.support.templates`` puts it on ``PATH``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.templates import synth

if TYPE_CHECKING:
    from aws_cdk.assertions import Template


@pytest.fixture(scope="session")
def stack_and_template() -> tuple[Any, Template]:
    return synth()


@pytest.fixture(scope="session")
def template(stack_and_template: tuple[Any, Template]) -> Template:
    return stack_and_template[1]


@pytest.fixture(scope="session")
def synth_with() -> Callable[..., tuple[Any, Template]]:
    return synth
