"""Stream record selection and the shared filter pattern (no network)."""

from __future__ import annotations

from typing import Any

import pytest

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
