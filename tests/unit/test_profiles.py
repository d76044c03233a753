"""Sensor profiles without an engine: what a profile may hold, and a stored zone the functions cannot load."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sensor_digest import zones
from sensor_digest.counting import DayCounter, Group, GroupOutcome
from sensor_digest.errors import InvalidProfile
from sensor_digest.ingest import InboundMessage, IngestService, Rejection
from sensor_digest.profiles import ProfileCache, SensorProfile


def profile(**change: Any) -> SensorProfile:
    return SensorProfile(**{"sensor_id": 7, "name": "roof", "serial": "SN-7", "timezone": "UTC", **change})


@settings(max_examples=300, deadline=None)
@given(
    field=st.sampled_from(["name", "serial"]),
    text=st.text(st.characters(codec=None, exclude_categories=()), min_size=1, max_size=60),
)
def test_a_name_or_serial_is_refused_exactly_when_it_holds_a_control_character_or_a_lone_surrogate(
    field: str, text: str
) -> None:
    # the event id's rule (Cc, fixed forever by Unicode's stability policy, and surrogates), not isprintable
    forbidden = [i for i, c in enumerate(text) if unicodedata.category(c) in ("Cc", "Cs")]
    if forbidden:
        with pytest.raises(InvalidProfile, match=f"^{field} must not contain control characters"):
            profile(**{field: text}).validate()
    else:
        assert getattr(profile(**{field: text}).validate(), field) == text


def test_a_name_with_a_no_break_space_or_a_unicode_15_character_is_accepted() -> None:
    assert profile(name="K\u00fcche\u00a0Nord", serial="SN-\U0001e030").validate().name == "K\u00fcche\u00a0Nord"


@pytest.mark.parametrize(
    ("zone", "hint"), [("posix/Asia/Tokyo", "; use 'Asia/Tokyo'"), ("right/UTC", "; use 'UTC'"), ("localtime", "")]
)
def test_a_zone_of_the_machine_that_the_functions_cannot_load_is_not_registered(zone: str, hint: str) -> None:
    with pytest.raises(InvalidProfile) as info:
        profile(timezone=zone).validate()
    assert str(info.value) == (
        f"time zone {zone!r} is not an IANA time zone of tzdata {zones.TZDATA_VERSION}, "
        f"the zone data the functions ship{hint}"
    )


class StoredProfiles:
    """A registry read whose profiles were stored before zones were checked against tzdata."""

    def __init__(self, *profiles: SensorProfile) -> None:
        self.profiles = {p.sensor_id: p for p in profiles}

    def get_many(self, sensor_ids: Any) -> dict[int, SensorProfile]:
        return {i: self.profiles[i] for i in sensor_ids if i in self.profiles}


class CountingCounter(DayCounter):
    def identity(self, message: Any) -> Any:
        return message.ledger_key

    def count_group(self, group: Group) -> GroupOutcome:
        self.days = [*getattr(self, "days", []), group.key]
        return GroupOutcome(counted=list(group.messages), requests=1)


class KeepingSink:
    def __init__(self) -> None:
        self.reasons: dict[str, str] = {}

    def send(self, rejections: list[Rejection], deadline: float | None = None) -> set[str]:
        self.reasons.update((r.message.message_id, r.reason) for r in rejections)
        return set(self.reasons)


def test_a_stored_profile_whose_zone_the_functions_cannot_load_rejects_its_reports_with_the_fix() -> None:
    # Given sensor 7 stored with posix/Asia/Tokyo (it loads on an operator's machine, not in Lambda)
    # and sensor 8 with Asia/Tokyo
    stored = StoredProfiles(
        profile(timezone="posix/Asia/Tokyo"), profile(sensor_id=8, serial="SN-8", timezone="Asia/Tokyo")
    )
    counter, sink = CountingCounter(), KeepingSink()
    service = IngestService(
        counter=counter,  # type: ignore[arg-type]
        dead_letters=sink,  # type: ignore[arg-type]
        default_zone=zones.load("UTC"),
        profiles=ProfileCache(stored),  # type: ignore[arg-type]
    )
    messages = [
        InboundMessage(
            message_id=f"m{sensor}", body=json.dumps({"sensor_id": sensor, "timestamp": "2024-05-01T20:00:00Z"})
        )
        for sensor in (7, 8)
    ]

    # When a batch with a report of each is processed
    report = service.process(messages)

    # Then sensor 7's report is kept with a reason that says how to fix it; sensor 8's counts in Tokyo
    assert report.response() == {"batchItemFailures": []}
    assert (report.counted, report.rejected) == (1, 1)
    assert counter.days == [(8, "2024-05-02")]
    assert sink.reasons["m7"] == (
        "sensor 7 is registered with a time zone the functions cannot load (time zone 'posix/Asia/Tokyo' is not an "
        f"IANA time zone of tzdata {zones.TZDATA_VERSION}, the zone data the functions ship; use 'Asia/Tokyo'); "
        "fix the profile with `sensor-digest sensors update --sensor 7 --timezone <zone>`, "
        "then `sensor-digest dlq redrive`"
    )
