"""The construct's props and the functions' settings agree: each function's environment is its typed
settings model (``sensor_digest.config``), every variable of it the construct sets, under the same
name, a prop that carries a variable deploys its default as the variable's own and allows exactly
what the settings accept (both read the one declaration): the ingest function's, the read API's and
silence check's, the summary's. Engine: none."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import Field, fields
from typing import Any, get_args, get_type_hints

import pytest

from sensor_digest import config
from sensor_digest.config import (
    ENVIRONMENT_VARIABLES,
    AnnouncerSettings,
    ApiSettings,
    IngestSettings,
    SilenceSettings,
    SummarySettings,
)
from sensor_digest.environment import Choice, Settings, Whole, WholeOrNone
from sensor_digest.errors import ConfigurationError
from sensor_digest_cdk.shape import PipelineShape, ShapeError
from sensor_digest_cdk.tunables import CARRIES, RULES, Tunables

RESOURCES = {"table": "Digest", "ledger": "DigestLedger", "dlq_url": "https://sqs.example/dlq"}
DEPLOYED: dict[type[Settings], Callable[[PipelineShape], dict[str, str]]] = {
    IngestSettings: lambda shape: shape.ingest_environment(**RESOURCES),
    ApiSettings: lambda shape: shape.api_environment(table="Digest", ledger="DigestLedger"),
    SilenceSettings: lambda shape: shape.silence_environment(table="Digest"),
    SummarySettings: lambda shape: shape.summary_environment(table="Digest"),
    AnnouncerSettings: lambda shape: shape.announcer_environment(table="Digest"),
}
CARRIED = [f for f in fields(Tunables) if CARRIES in f.metadata]


def model_of(prop: Field[Any]) -> type[Settings]:
    """The first function's settings model that reads the variable ``prop`` carries."""
    return next(model for model in DEPLOYED if prop.metadata[CARRIES] in model.variables())


def read_back(model: type[Settings], prop: Field[Any], value: object) -> object:
    """What the function reads of the variable ``prop`` carries, deployed with ``prop=value``."""
    settings = model.from_env(DEPLOYED[model](PipelineShape(**{prop.name: value})))
    variable = prop.metadata[CARRIES]
    return next(getattr(settings, f.name) for f in fields(settings) if f.metadata.get("variable") == variable)


@pytest.mark.parametrize("model", list(DEPLOYED), ids=lambda m: m.__name__)
def test_the_construct_sets_the_variables_each_function_reads_in_its_models_order(model: type[Settings]) -> None:
    deployed = DEPLOYED[model](PipelineShape(silence_hours=6))
    assert list(deployed) == [variable.name for variable in model.variables()]
    assert set(deployed) <= ENVIRONMENT_VARIABLES


def test_every_carried_variable_is_one_a_function_reads() -> None:
    assert {f.name for f in CARRIED} >= {"queue_type", "delivery_mode", "digest_timezone", "silence_hours"}
    assert all(any(f.metadata[CARRIES] in model.variables() for model in DEPLOYED) for f in CARRIED)


@pytest.mark.parametrize("prop", CARRIED, ids=lambda f: f.name)
def test_a_props_default_deploys_as_its_variables_own_default(prop: Field[Any]) -> None:
    variable = prop.metadata[CARRIES]
    assert read_back(model_of(prop), prop, prop.default) == variable.read({})


@pytest.mark.parametrize(
    "prop", [f for f in CARRIED if isinstance(f.metadata[CARRIES], Whole | WholeOrNone)], ids=lambda f: f.name
)
def test_every_whole_number_a_prop_allows_the_settings_accept(prop: Field[Any]) -> None:
    variable = prop.metadata[CARRIES]
    allowed = [n for n in range(variable.low - 1, variable.high + 2) if RULES[prop.name].ok(n)]
    assert allowed and allowed[-1] == variable.high
    none = isinstance(variable, WholeOrNone)  # a prop's 0 is such a variable's none
    for value in (allowed[0], allowed[-1]):
        assert read_back(model_of(prop), prop, value) == (None if none and value == 0 else value)
    with pytest.raises(ConfigurationError):
        variable.read({variable.name: str(variable.high + 1)})


@pytest.mark.parametrize("prop", [f for f in CARRIED if isinstance(f.metadata[CARRIES], Choice)], ids=lambda f: f.name)
def test_a_choice_is_the_same_in_the_props_type_the_rule_and_the_settings(prop: Field[Any]) -> None:
    variable = prop.metadata[CARRIES]
    assert get_args(get_type_hints(Tunables)[prop.name]) == variable.choices
    assert all(RULES[prop.name].ok(choice) for choice in variable.choices)
    for choice in variable.choices:
        assert read_back(model_of(prop), prop, choice) == choice


def test_the_deployed_defaults_read_back_as_the_settings_defaults() -> None:
    settings = IngestSettings.from_env(PipelineShape().ingest_environment(**RESOURCES))
    assert settings.marker_ttl_seconds == PipelineShape().marker_ttl_seconds
    assert str(settings.timezone) == "UTC"


def test_the_silence_threshold_prop_and_the_read_apis_settings_agree() -> None:
    variable = config.SILENCE_HOURS
    off = PipelineShape().silence_environment(table="Digest")
    assert variable.name not in off  # 0: no default threshold, no variable
    assert SilenceSettings.from_env(off).silence_hours is None
    api = PipelineShape().api_environment(table="Digest", ledger="DigestLedger")
    assert variable.name not in api and ApiSettings.from_env(api).silence_hours is None
    allowed = [n for n in range(variable.low - 1, variable.high + 2) if RULES["silence_hours"].ok(n)]
    assert allowed == [0, *range(variable.low, variable.high + 1)]  # the prop's 0 is "none"
    for refused in ("0", str(variable.high + 1), "six"):
        with pytest.raises(ConfigurationError):
            variable.read({variable.name: refused})


def test_fifo_with_at_least_once_is_refused_by_the_construct_and_the_function_in_the_same_words() -> None:
    deployed = PipelineShape().ingest_environment(**RESOURCES)
    with pytest.raises(ConfigurationError) as by_function:
        IngestSettings.from_env({**deployed, "QUEUE_TYPE": "fifo", "DELIVERY_MODE": "at-least-once"})
    with pytest.raises(ShapeError) as by_construct:
        PipelineShape(queue_type="fifo", delivery_mode="at-least-once")
    said = "=fifo counts exactly once by sequence number: leave {} exactly-once"
    assert str(by_function.value) == "QUEUE_TYPE" + said.format("DELIVERY_MODE")
    assert str(by_construct.value).endswith("is not allowed: queue_type" + said.format("delivery_mode"))
