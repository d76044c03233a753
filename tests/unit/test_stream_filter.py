"""Stream record selection and the shared filter pattern (no network)."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sensor_digest.store.schema import is_day
from sensor_digest.stream_filter import DAY_ITEM_FILTER, DayCount, day_count_of, matches_filter


def record(event: str, date: str = "2024-05-01", count: str | None = "3", **image: Any) -> dict[str, Any]:
    new = {"SensorId": {"N": "7"}, "Date": {"S": date}, **image}
    if count is not None:
        new["DataCount"] = {"N": count}
    data: dict[str, Any] = {"Keys": {"SensorId": {"N": "7"}, "Date": {"S": date}}, "SequenceNumber": "1"}
    if event != "REMOVE":
        data["NewImage"] = new
    return {"eventName": event, "dynamodb": data}


# The example record of the Lambda developer guide ("Using AWS Lambda with Amazon DynamoDB"), keys renamed.
DOCUMENTED = {
    "eventID": "c4ca4238a0b923820dcc509a6f75849b",
    "eventName": "INSERT",
    "eventVersion": "1.1",
    "eventSource": "aws:dynamodb",
    "awsRegion": "us-east-1",
    "dynamodb": {
        "Keys": {"SensorId": {"N": "101"}, "Date": {"S": "2024-05-01"}},
        "NewImage": {"SensorId": {"N": "101"}, "Date": {"S": "2024-05-01"}, "DataCount": {"N": "12"}},
        "ApproximateCreationDateTime": 1428537600,
        "SequenceNumber": "4421584500000000017450439091",
        "SizeBytes": 26,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    },
    "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/SensorDigest/stream/2015-06-27T00:48:05.899",
}


def test_a_documented_insert_of_a_day_item_is_selected() -> None:
    assert matches_filter(DOCUMENTED)
    assert day_count_of(DOCUMENTED) == DayCount(sensor_id=101, day="2024-05-01", count=12)


@pytest.mark.parametrize(
    ("rec", "selected"),
    [
        (record("INSERT"), True),
        (record("MODIFY"), True),
        (record("REMOVE"), False),
        (record("MODIFY", date="SUMMARY", count=None, DailyCounts={"M": {}}), False),
        (record("INSERT", date="PROFILE", count=None, Name={"S": "x"}), False),
        (record("MODIFY", count=None), False),
    ],
)
def test_only_inserts_and_updates_of_day_items_pass_the_filter(rec: dict[str, Any], selected: bool) -> None:
    assert matches_filter(rec, DAY_ITEM_FILTER) is selected
    assert (day_count_of(rec) is not None) is selected


def test_an_item_with_data_count_but_no_date_key_is_not_a_day_item() -> None:
    assert day_count_of(record("MODIFY", date="SUMMARY")) is None


@pytest.mark.parametrize(
    ("pattern", "rec", "expected"),
    [
        ({"a": [1, 2]}, {"a": 2}, True),
        ({"a": [1, 2]}, {"a": 3}, False),
        ({"a": [{"exists": False}]}, {}, True),
        ({"a": [{"exists": False}]}, {"a": 1}, False),
        ({"a": {"b": [{"exists": True}]}}, {"a": {"b": None}}, True),
        ({"a": {"b": [{"exists": True}]}}, {"a": 5}, False),
        ({"a": {"b": [{"exists": True}]}}, {}, False),
    ],
)
def test_the_filter_matcher_follows_lambda_event_filtering(pattern: Any, rec: Any, expected: bool) -> None:
    assert matches_filter(rec, pattern) is expected


@pytest.mark.parametrize(
    "day",
    [
        "2024-05-01\n",  # `$` matches before a final newline
        "2024-05-0\u0661",  # ARABIC-INDIC DIGIT ONE: `\d` matches any Unicode digit
        "\uff12\uff10\uff12\uff14-05-01",  # FULLWIDTH digits
        "2024-02-30",
        "2023-02-29",
        "2024-13-01",
        "2024-00-10",
        "0000-01-01",
        " 2024-05-01",
        "2024-05-01T00:00",
    ],
)
def test_a_day_key_that_is_no_ascii_calendar_date_is_not_a_day_item(day: str) -> None:
    assert day_count_of(record("MODIFY", date=day)) is None


def ascii_calendar_date(text: str) -> bool:
    """The oracle, built another way: three dash-separated ASCII digit runs of 4, 2, 2 that ``date`` takes."""
    parts = text.split("-")
    if [len(p) for p in parts] != [4, 2, 2] or not all(p.isascii() and p.isdigit() for p in parts):
        return False
    try:
        date(int(parts[0]), int(parts[1]), int(parts[2]))
    except ValueError:
        return False
    return True


@given(
    st.one_of(
        st.dates().map(date.isoformat),
        st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", fullmatch=True),
        st.from_regex(r"\d{4}-\d{2}-\d{2}\n?", fullmatch=True),
        st.from_regex(r"\d{4}-\d{2}-\d{2}", fullmatch=False),
        st.text(max_size=12),
    )
)
def test_a_day_key_is_exactly_an_ascii_calendar_date(text: str) -> None:
    assert is_day(text) is ascii_calendar_date(text)
    assert (day_count_of(record("INSERT", date=text)) is not None) is ascii_calendar_date(text)
