"""The construct's props and the functions' settings agree: every variable the construct sets is one
the settings read, under the same name, with the same default, and every value a prop allows is one
the settings accept (both read ``sensor_digest.environment``, where each is declared once): the
ingest function's, and the read API's and silence check's ``SILENCE_HOURS``."""

from __future__ import annotations

from dataclasses import fields
from typing import get_args

import pytest

from sensor_digest import environment
from sensor_digest.config import ENVIRONMENT_VARIABLES, ApiSettings, IngestSettings
from sensor_digest.errors import ConfigurationError
from sensor_digest_cdk import props
from sensor_digest_cdk.rules import RULES
from sensor_digest_cdk.shape import PipelineShape

RESOURCES = {"table": "Digest", "ledger": "DigestLedger", "dlq_url": "https://sqs.example/dlq"}
# the settings' field for each prop the construct passes on
SETTING = {
    "digest_timezone": "timezone",
    "delivery_mode": "delivery_mode",
    "ingest_max_workers": "max_workers",
    "unknown_sensors": "unknown_sensors",
    "profile_cache_seconds": "profile_cache_seconds",
    "max_receive_count": "max_receive_count",
    "queue_type": "queue_type",
    "ledger_mode": "ledger_mode",
}
LITERALS = {
    "queue_type": props.QueueTypeName,
    "delivery_mode": props.DeliveryModeName,
    "ledger_mode": props.LedgerName,
    "unknown_sensors": props.UnknownSensorsName,
}


def test_the_construct_sets_exactly_the_variables_the_settings_read() -> None:
    deployed = PipelineShape().ingest_environment(**RESOURCES)
    assert list(deployed) == [variable.name for variable in environment.INGEST]
    assert set(deployed) <= ENVIRONMENT_VARIABLES
    assert set(environment.BY_PROP) == set(SETTING)


@pytest.mark.parametrize("prop", sorted(environment.BY_PROP))
def test_a_props_default_is_its_variables_default_and_the_settings_default(prop: str) -> None:
    variable = environment.BY_PROP[prop]
    shape_default = next(f.default for f in fields(PipelineShape) if f.name == prop)
    setting = next((f for f in fields(IngestSettings) if f.name == SETTING[prop]), None)
    assert shape_default == variable.default
    if setting is not None and prop != "digest_timezone":
        assert setting.default == variable.default


@pytest.mark.parametrize("prop", sorted(p for p, v in environment.BY_PROP.items() if isinstance(v, environment.Whole)))
def test_every_whole_number_a_prop_allows_the_settings_accept(prop: str) -> None:
    variable = environment.BY_PROP[prop]
    assert isinstance(variable, environment.Whole)
    allowed = [n for n in range(variable.low - 1, variable.high + 2) if RULES[prop].ok(n)]
    assert allowed and variable.low <= allowed[0] and allowed[-1] == variable.high
    for value in (allowed[0], allowed[-1]):
        settings = IngestSettings.from_env(PipelineShape(**{prop: value}).ingest_environment(**RESOURCES))
        assert getattr(settings, SETTING[prop]) == value
    with pytest.raises(ConfigurationError):
        environment.BY_PROP[prop].read({variable.name: str(variable.high + 1)})


@pytest.mark.parametrize("prop", sorted(LITERALS))
def test_a_choice_is_the_same_in_the_props_type_the_rule_and_the_settings(prop: str) -> None:
    variable = environment.BY_PROP[prop]
    assert isinstance(variable, environment.Choice)
    assert get_args(LITERALS[prop]) == variable.choices
    assert all(RULES[prop].ok(choice) for choice in variable.choices)
    for choice in variable.choices:
        settings = IngestSettings.from_env(PipelineShape(**{prop: choice}).ingest_environment(**RESOURCES))
        assert getattr(settings, SETTING[prop]) == choice


def test_the_deployed_defaults_read_back_as_the_settings_defaults() -> None:
    settings = IngestSettings.from_env(PipelineShape().ingest_environment(**RESOURCES))
    assert settings.marker_ttl_seconds == PipelineShape().marker_ttl_seconds
    assert str(settings.timezone) == "UTC"


def test_the_silence_threshold_prop_and_the_read_apis_settings_agree() -> None:
    variable = environment.SILENCE_HOURS
    off = PipelineShape().silence_environment(table="Digest")
    assert variable.name not in off  # 0: no default threshold, no variable
    assert ApiSettings.from_env(off).silence_hours is None
    assert set(PipelineShape(silence_hours=6).silence_environment(table="Digest")) == {
        v.name for v in environment.SILENCE
    }
    assert {v.name for v in environment.SILENCE} <= ENVIRONMENT_VARIABLES
    allowed = [n for n in range(variable.low - 1, variable.high + 2) if RULES["silence_hours"].ok(n)]
    assert allowed == [0, *range(variable.low, variable.high + 1)]  # the prop's 0 is "none"
    for hours in (variable.low, variable.high):
        deployed = PipelineShape(silence_hours=hours).silence_environment(table="Digest")
        assert ApiSettings.from_env(deployed).silence_hours == hours
    for refused in ("0", str(variable.high + 1), "six"):
        with pytest.raises(ConfigurationError):
            variable.read({variable.name: refused})
