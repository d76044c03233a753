"""The stack's settings (context keys): derived values, and bad context refused with the reason,
at synth when only synthesis can tell."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk.assertions import Match

from sensor_digest_cdk.shape import Settings, SettingsError
from tests.support.templates import DAY


def test_a_digest_timezone_the_functions_cannot_load_is_refused_at_synth(synth_with: Callable[..., Any]) -> None:
    # posix/Asia/Tokyo loads on a machine with /usr/share/zoneinfo, never from the tzdata the asset ships
    with pytest.raises(SettingsError, match=r"digestTimezone 'posix/Asia/Tokyo' is not an IANA time zone of tzdata"):
        Settings.from_context({"digestTimezone": "posix/Asia/Tokyo"}.get)
    _, template = synth_with(digestTimezone="Asia/Tokyo")
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {"Environment": {"Variables": Match.object_like({"DIGEST_TIMEZONE": "Asia/Tokyo"})}},
    )


def test_the_marker_lifetime_is_derived_from_the_queue_and_redrive_windows() -> None:
    settings = Settings(queue_retention_days=4, dead_letter_retention_days=14)
    assert settings.marker_ttl_seconds == (4 + 14 + 1) * DAY


def test_bad_context_is_refused_with_the_reason() -> None:
    with pytest.raises(SettingsError, match="maxReceiveCount must be at least 5"):
        Settings.from_context({"maxReceiveCount": "3"}.get)
    with pytest.raises(SettingsError, match="billing must be on-demand or provisioned"):
        Settings.from_context({"billing": "free"}.get)
