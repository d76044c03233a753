"""The app's context: ``AppSettings`` (the stack's name and its one pipeline's shape, read from
``cdk.json``, ``cdk.context.json`` and every ``-c key=value``), each value read by its field's type
(a ``-c`` value arrives as text), misspelt keys refused with the nearest name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, replace
from typing import Any

from sensor_digest_cdk.rules import (
    FIFO_STACK_NAME_MAX,
    NAME_FIELDS,
    SQS_QUEUE_NAME_MAX,
    STACK_NAME,
    STACK_NAME_MAX,
    TABLE_NAME_MIN,
    Rule,
    context_key,
    refused,
    unknown_key_problems,
)
from sensor_digest_cdk.shape import PipelineShape
from sensor_digest_cdk.tunables import KIND, RULES
from sensor_digest_cdk.workable import admits_no_sender

# Context keys of CDK itself (feature flags, the CLI's own settings): never ours, never checked.
CDK_KEY_PREFIXES = ("@aws-cdk", "aws:cdk:", "aws-cdk:", "cdk-", "cdk:")

CONTEXT_FIELDS = tuple(f.name for f in fields(PipelineShape) if f.name not in NAME_FIELDS)
"""The shape's fields a context key sets (``queueType``, ...): all but the physical names."""

STACK_NAME_RULE = Rule(
    f"{TABLE_NAME_MIN} to {STACK_NAME_MAX} letters, digits and hyphens, starting with a letter "
    "(CloudFormation's stack names; the tables are named after it)",
    lambda name: TABLE_NAME_MIN <= len(name) <= STACK_NAME_MAX and STACK_NAME.fullmatch(name) is not None,
)
STACK_NAME_MEANING = "stack name (tables `<stackName>`, `<stackName>Ledger`)"


@dataclass(frozen=True)
class AppSettings:
    """What app.py builds: the stack's name, and the shape of its one pipeline, whose tables and
    dashboard keep the names they have always had (``<stackName>``, ``<stackName>Ledger``,
    ``<stackName>-pipeline``)."""

    stack_name: str = "SensorDigest"
    shape: PipelineShape = field(default_factory=lambda: AppSettings.named("SensorDigest", PipelineShape()))

    @staticmethod
    def named(stack_name: str, shape: PipelineShape) -> PipelineShape:
        """``shape`` with the app's fixed names, derived from the stack's."""
        return replace(
            shape,
            table_name=stack_name,
            ledger_table_name=f"{stack_name}Ledger",
            dashboard_name=f"{stack_name}-pipeline",
        )

    @classmethod
    def from_context(cls, get: Callable[[str], Any], keys: Iterable[str] = ()) -> AppSettings:
        """``get`` is ``node.try_get_context``; context keys are the camelCase field names plus
        ``stackName``. ``keys`` are all the keys the context holds (app.py reads them from what the
        CDK CLI hands the app), checked for misspellings of ours. Every problem found is refused at
        once (``ShapeError``), one line each."""
        problems, values, unreadable = read_context(get, keys)
        stack_name = get("stackName")
        if stack_name is None:
            stack_name = cls.stack_name
        if not isinstance(stack_name, str) or not STACK_NAME_RULE.ok(stack_name):
            problems.append(
                f"context value stackName={stack_name!r} is not allowed: stackName takes {STACK_NAME_RULE.allowed}"
            )
            stack_name = cls.stack_name
            unreadable.add("stack_name")
        elif values.get("queue_type") == "fifo" and len(stack_name) > FIFO_STACK_NAME_MAX:
            # the construct's own check (pipeline_parts.FifoNamesFit) at the app's longest queue id
            problems.append(
                f"context value stackName={stack_name!r} with queueType='fifo' is not allowed: queueType=fifo "
                f"needs a stackName of at most {FIFO_STACK_NAME_MAX} characters (CloudFormation's generated FIFO "
                f"queue names must stay within SQS's {SQS_QUEUE_NAME_MAX})"
            )
        if values.get("restrict_producers") and not values.get("producer_arns") and not values.get("iot_topic"):
            # the construct's users may grant_send later; the app has no later: refused here, in one line
            problems.append(f"context value {admits_no_sender(context_key, construct=False)}")
        values.update(
            table_name=stack_name, ledger_table_name=f"{stack_name}Ledger", dashboard_name=f"{stack_name}-pipeline"
        )
        shape = PipelineShape.built(values, unreadable, problems, context_key, "context value")
        return cls(stack_name=stack_name, shape=shape)


def shape_from_context(get: Callable[[str], Any], keys: Iterable[str] = ()) -> PipelineShape:
    """The shape that context keys (``queueType``, ...) set, the physical names generated: ``ShapeError``
    names every problem in camelCase (the benchmark's settings are given so)."""
    problems, values, unreadable = read_context(get, keys)
    return PipelineShape.built(values, unreadable, problems, context_key, "context value")


def read_context(get: Callable[[str], Any], keys: Iterable[str]) -> tuple[list[str], dict[str, Any], set[str]]:
    """The shape's values the context sets, read by type: the problems found (misspelt keys, values
    of the wrong kind), the values read, and the fields whose value could not be read."""
    known = {context_key(name): name for name in CONTEXT_FIELDS} | {"stackName": "stack_name"}
    problems = unknown_key_problems(
        dict.fromkeys(keys), known, lambda k: k, "context key", strict=False, ignored=CDK_KEY_PREFIXES
    )
    values: dict[str, Any] = {}
    unreadable: set[str] = set()
    for name in CONTEXT_FIELDS:
        raw = get(context_key(name))
        if raw is None:
            continue
        value = KIND[name].read(raw)
        if value is None:
            problems.append(refused("context value", context_key, name, raw, RULES[name]))
            unreadable.add(name)
            continue
        values[name] = value
    return problems, values, unreadable
