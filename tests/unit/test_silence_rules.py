"""Hours of a report and the silence rules, without an engine: a report's hour is the wall-clock
hour of its day in its zone (the same conversion as its day), and the silence is counted in real
hours from the end of the last hour with a report."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from sensor_digest.messages import read_pending
from sensor_digest.silence.rules import (
    hours_since,
    last_report_hour,
    registration_text,
    registration_time,
    silence_of,
    wording,
)
from sensor_digest.store import day_writes
from sensor_digest.store.day_view import HoursMap
from sensor_digest.store.guards import Anyway
from sensor_digest.store.tally import Tally

ZONES = [ZoneInfo(z) for z in ("UTC", "America/New_York", "Asia/Tokyo", "Australia/Lord_Howe", "Asia/Kathmandu")]


def dated(body: dict[str, object], zone: ZoneInfo, sent: str = "0") -> tuple[str, str]:
    message = read_pending(message_id="m", body=json.dumps(body), sent_timestamp=sent).in_zone(zone)
    return message.day, message.hour


@given(st.integers(-(2**31), 2**33), st.sampled_from(ZONES))
def test_an_instants_hour_and_day_are_its_wall_clock_in_the_zone(seconds: int, zone: ZoneInfo) -> None:
    local = (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds)).astimezone(zone)
    expected = (local.date().isoformat(), f"{local.hour:02d}")
    assert dated({"sensor_id": 1, "timestamp": seconds}, zone) == expected
    assert dated({"sensor_id": 1}, zone, sent=str(seconds * 1000)) == expected  # by its send time
    iso = (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")
    if seconds >= 0:
        assert dated({"sensor_id": 1, "timestamp": iso}, zone) == expected


def test_a_wall_clock_time_counts_in_the_hour_written_and_24_00_is_the_next_days_00() -> None:
    new_york = ZoneInfo("America/New_York")
    assert dated({"sensor_id": 1, "timestamp": "2024-03-10T02:30"}, new_york) == ("2024-03-10", "02")
    assert dated({"sensor_id": 1, "timestamp": "2024-05-01T24:00"}, new_york) == ("2024-05-02", "00")


def test_a_groups_hours_sum_to_its_count_and_a_missing_map_is_created_not_added_to() -> None:
    stamps = ["2024-05-01T09:00:00Z", "2024-05-01T09:59:59Z", "2024-05-01T23:00:00Z"]
    messages = [
        read_pending(
            message_id=f"m{i}", body=json.dumps({"sensor_id": 1, "timestamp": t, "count": i + 1}), sent_timestamp="0"
        ).in_zone(ZoneInfo("UTC"))
        for i, t in enumerate(stamps)
    ]
    tally = Tally.of(messages)
    assert tally.hours == {"09": 3, "23": 3} and tally.count == sum(m.count for m in messages)
    # (the hours' parts of the write only: another statistic may add parts of its own beside them)
    added = day_writes.update("t", (1, "2024-05-01"), tally, HoursMap.ADD, Anyway())
    parts = clauses(added["UpdateExpression"])
    assert {"#count :n", "#hours.#h09 :h09", "#hours.#h23 :h23"} <= set(parts["ADD"])
    assert not any(part.startswith("#hours ") for part in parts.get("SET", []))
    assert "attribute_type(#hours, :mtype)" in added["ConditionExpression"]
    created = day_writes.update("t", (1, "2024-05-01"), tally, HoursMap.CREATE, Anyway())
    parts = clauses(created["UpdateExpression"])
    assert "#count :n" in parts["ADD"] and not any(part.startswith("#hours.") for part in parts["ADD"])
    assert "#hours = :hmap" in parts["SET"]
    assert created["ExpressionAttributeValues"][":hmap"] == {"M": {"09": {"N": "3"}, "23": {"N": "3"}}}
    assert created["ConditionExpression"].startswith("(attribute_not_exists(#hours)")


def clauses(expression: str) -> dict[str, list[str]]:
    """An update expression's clauses (``ADD``, ``SET``, ``REMOVE``), each as its list of parts."""
    found: dict[str, list[str]] = {}
    for keyword, body in re.findall(r"\b(ADD|SET|REMOVE|DELETE) (.*?)(?= (?:ADD|SET|REMOVE|DELETE) |$)", expression):
        found[keyword] = [part.strip() for part in body.split(",")]
    return found


def test_the_silence_after_the_autumn_change_counts_real_hours_from_the_later_end_of_the_repeated_hour() -> None:
    new_york = ZoneInfo("America/New_York")
    now = datetime(2024, 11, 3, 12, 30, tzinfo=UTC)  # 07:30 EST
    assert hours_since("2024-11-03T00", now, new_york) == 7  # since 01:00 EDT (05:00Z)
    assert hours_since("2024-11-03T01", now, new_york) == 5  # since 02:00 EST (07:00Z), the later 01's end
    assert hours_since("2024-11-03T12", now, new_york) == 0  # a wall-clock hour ahead of now: no silence


def test_a_sensor_is_silent_at_its_threshold_and_not_an_hour_before() -> None:
    utc = ZoneInfo("UTC")
    days = [("2024-05-02", {}), ("2024-05-01", {"09": 1, "22": 0})]
    assert last_report_hour(days) == "2024-05-01T09"
    at = datetime(2024, 5, 1, 16, 0, tzinfo=UTC)  # 6 hours after 10:00
    assert silence_of(1, days, now=at, zone=utc, threshold=6) is not None
    assert silence_of(1, days, now=at - timedelta(minutes=1), zone=utc, threshold=6) is None
    assert silence_of(1, days, now=at, zone=utc, threshold=None) is None
    assert last_report_hour([("2024-05-02", {}), ("2024-05-01", None)]) == "2024-05-01T23"  # from before hours


def test_a_sensor_that_never_reported_is_silent_from_its_registration_and_at_once_without_one() -> None:
    utc = ZoneInfo("UTC")
    registered = datetime(2024, 5, 1, 9, 12, 30, tzinfo=UTC)
    at = registered + timedelta(hours=6)
    found = silence_of(1, [("2024-05-01", {})], now=at, zone=utc, threshold=6, registered=registered)
    assert found is not None and (found.silent_hours, found.registered_at) == (6, "2024-05-01T09:12:30Z")
    assert silence_of(1, [], now=at - timedelta(seconds=1), zone=utc, threshold=6, registered=registered) is None
    assert silence_of(1, [], now=registered - timedelta(hours=9), zone=utc, threshold=1, registered=registered) is None
    legacy = silence_of(1, [], now=at, zone=utc, threshold=6)  # a profile from before registration times
    assert legacy is not None and legacy.silent_hours is None and legacy.registered_at is None


def test_a_registration_time_is_read_only_in_the_form_the_registry_writes() -> None:
    assert registration_time("2024-05-01T09:12:30Z") == datetime(2024, 5, 1, 9, 12, 30, tzinfo=UTC)
    for junk in (
        "2024-05-01T09:12:30",
        "2024-02-30T00:00:00Z",
        "yesterday",
        None,
        17,
        "\uff12\uff10\uff12\uff14-05-01T09:12:30Z",
    ):
        assert registration_time(junk) is None
    assert (
        registration_text(datetime(2024, 5, 1, 11, 12, 30, tzinfo=ZoneInfo("Europe/Paris"))) == "2024-05-01T09:12:30Z"
    )


def test_one_phrasing_says_every_kind_of_silence() -> None:
    def said(last: str | None, hours: int | None, registered: str | None = None) -> str:
        entry = {"last_report_hour": last, "silent_hours": hours, "threshold_hours": 2, "timezone": "Europe/Paris"}
        return wording({**entry, "registered_at": registered})

    assert (
        said("2024-05-01T19", 3)
        == "last report in hour 2024-05-01 19:00\u201320:00 Europe/Paris, silent 3 h, threshold 2 h"
    )
    assert said("2024-05-01T23", 9).startswith("last report in hour 2024-05-01 23:00\u201324:00 Europe/Paris")
    assert (
        said(None, 30, "2024-05-01T09:12:30Z")
        == "never reported, registered 2024-05-01 09:12 UTC, silent 30 h, threshold 2 h"
    )
    assert said(None, None) == "never reported, registered before registration times were kept, threshold 2 h"


def test_the_docs_say_a_silence_in_the_words_of_the_code() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")
    paris = {"timezone": "Europe/Paris", "threshold_hours": 2, "registered_at": None}
    utc = {"timezone": "UTC", "threshold_hours": 6}
    for entry in (
        {**paris, "last_report_hour": "2024-05-01T19", "silent_hours": 3},
        {**utc, "last_report_hour": None, "silent_hours": 30, "registered_at": "2024-05-01T09:12:00Z"},
        {**utc, "last_report_hour": None, "silent_hours": None, "registered_at": None},
    ):
        assert f"`{wording(entry)}`" in docs
