"""Settings read once from the environment (no network)."""

from __future__ import annotations

import pytest

from sensor_digest import config
from sensor_digest.config import DEFAULT_MARKER_TTL_SECONDS, DeliveryMode, IngestSettings, QueueType, SummarySettings
from sensor_digest.errors import ConfigurationError
from sensor_digest.ingest import service

BASE = {"TABLE_NAME": "SensorDigest", "LEDGER_TABLE_NAME": "SensorDigestLedger", "DLQ_URL": "https://q"}


def test_defaults_follow_the_contract() -> None:
    settings = IngestSettings.from_env(BASE)
    assert settings.delivery_mode is DeliveryMode.EXACTLY_ONCE
    assert settings.timezone.key == "UTC"
    assert settings.marker_ttl_seconds == DEFAULT_MARKER_TTL_SECONDS


@pytest.mark.parametrize("missing", ["TABLE_NAME", "LEDGER_TABLE_NAME", "DLQ_URL"])
def test_a_required_variable_missing_is_named(missing: str) -> None:
    env = {k: v for k, v in BASE.items() if k != missing}
    with pytest.raises(ConfigurationError, match=missing):
        IngestSettings.from_env(env)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("DELIVERY_MODE", "twice", "DELIVERY_MODE must be one of exactly-once, at-least-once"),
        ("DIGEST_TIMEZONE", "Mars/Olympus", "not an IANA time zone"),
        ("INGEST_MAX_WORKERS", "0", "between 1 and 64"),
        ("MARKER_TTL_SECONDS", "soon", "must be an integer"),
    ],
)
def test_invalid_values_are_refused_with_a_clear_error(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        IngestSettings.from_env({**BASE, name: value})


def test_at_least_once_and_a_time_zone_are_read() -> None:
    settings = IngestSettings.from_env({**BASE, "DELIVERY_MODE": "at-least-once", "DIGEST_TIMEZONE": "Europe/Paris"})
    assert (settings.delivery_mode, settings.timezone.key) == (DeliveryMode.AT_LEAST_ONCE, "Europe/Paris")


def test_summary_needs_only_the_table() -> None:
    assert SummarySettings.from_env({"TABLE_NAME": "t"}).table_name == "t"
    with pytest.raises(ConfigurationError):
        SummarySettings.from_env({})


def test_the_queue_type_is_read_and_checked() -> None:
    assert IngestSettings.from_env(BASE).queue_type is QueueType.STANDARD
    assert IngestSettings.from_env({**BASE, "QUEUE_TYPE": "fifo"}).queue_type is QueueType.FIFO
    with pytest.raises(ConfigurationError, match="QUEUE_TYPE must be one of standard, fifo"):
        IngestSettings.from_env({**BASE, "QUEUE_TYPE": "FIFO!"})


def test_fifo_refuses_at_least_once() -> None:
    with pytest.raises(ConfigurationError, match="QUEUE_TYPE=fifo"):
        IngestSettings.from_env({**BASE, "QUEUE_TYPE": "fifo", "DELIVERY_MODE": "at-least-once"})


def test_the_margin_ingest_keeps_is_the_one_the_construct_leaves_room_for() -> None:
    # the construct's shortest ingest timeout is computed from config's margin (infra imports no ingest
    # module); ingest keeps its own: the two are one figure
    assert service.DEADLINE_MARGIN_SECONDS == config.DEADLINE_MARGIN_SECONDS
