"""Hours of a report and the silence rules, without an engine: a report's hour is the wall-clock
hour of its day in its zone (the same conversion as its day), and the silence is counted in real
hours from the end of the last hour with a report."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from sensor_digest.messages import read_pending
from sensor_digest.silence.rules import hours_since, last_report_hour, silence_of
from sensor_digest.store import day_writes
from sensor_digest.store.day_writes import Anyway, HoursMap, Tally

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
    added = day_writes.update("t", (1, "2024-05-01"), tally, HoursMap.ADD, Anyway())
    assert added["UpdateExpression"] == "ADD #count :n, #hours.#h09 :h09, #hours.#h23 :h23"
    assert added["ConditionExpression"] == "attribute_type(#hours, :mtype)"
    created = day_writes.update("t", (1, "2024-05-01"), tally, HoursMap.CREATE, Anyway())
    assert created["UpdateExpression"] == "ADD #count :n SET #hours = :hmap"
    assert created["ExpressionAttributeValues"][":hmap"] == {"M": {"09": {"N": "3"}, "23": {"N": "3"}}}
    assert created["ConditionExpression"].startswith("(attribute_not_exists(#hours)")


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
