"""The read API's rules and page tokens (``sensor_digest/api``), the local server's event translation,
and the stream filter's indifference to the profiles' index attribute. No engine: pure functions."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sensor_digest.api import rules, service, tokens
from sensor_digest.errors import BadRequest
from sensor_digest.registry import SensorProfile
from sensor_digest.store import reads, schema
from sensor_digest.stream_filter import matches_filter
from sensor_digest_tools.local.api_server import BadTarget, event_of


@given(st.integers(min_value=0, max_value=rules.MAX_SENSOR_ID))
def test_every_sensor_id_in_range_is_accepted_as_written(sensor: int) -> None:
    assert rules.sensor_id(str(sensor)) == sensor


@given(st.text(max_size=30).filter(lambda t: not (t.isascii() and t.isdigit() and len(t) <= 16)))
def test_anything_but_ascii_digits_is_refused_as_a_sensor_id(text: str) -> None:
    with pytest.raises(BadRequest, match="sensor id must be an integer"):
        rules.sensor_id(text)


def test_a_day_range_of_366_days_is_the_longest_accepted() -> None:
    assert rules.day_range("2024-01-01", "2024-12-31") == rules.Range("2024-01-01", "2024-12-31")
    with pytest.raises(BadRequest, match="at most 366"):
        rules.day_range("2023-12-31", "2024-12-31")


def test_a_month_range_of_24_months_is_the_longest_accepted() -> None:
    assert rules.month_range("2023-01", "2024-12") == rules.Range("2023-01", "2024-12")
    with pytest.raises(BadRequest, match="at most 24"):
        rules.month_range("2022-12", "2024-12")


def test_an_error_repeats_hostile_input_clipped_and_in_ascii() -> None:
    with pytest.raises(BadRequest) as caught:
        rules.sensor_id("<script>" + "é" * 100)
    reason = caught.value.reason
    assert reason.isascii() and reason.endswith("...'")
    assert reason.count("\\xe9") == 40 - len("<script>")  # the first 40 characters, escaped


# a digest is what request_digest gives (16 hex digits); a page stops at a sort key or a sensor id. (Any
# text as a digest could escape, in JSON, past the token's 512 characters, which decode refuses.)
@given(
    st.text("0123456789abcdef", min_size=16, max_size=16),
    st.one_of(st.text(st.characters(max_codepoint=127), max_size=40), st.integers(min_value=0, max_value=2**53)),
)
def test_a_token_decodes_to_where_it_stopped_for_its_own_request_only(digest: str, after: str | int) -> None:
    token = tokens.encode(digest, after)

    assert tokens.decode(token, digest) == after
    with pytest.raises(BadRequest):
        tokens.decode(token, digest + "x")


@given(st.text(max_size=600))
def test_any_text_as_a_token_is_a_bad_request_or_a_position_never_another_error(text: str) -> None:
    digest = tokens.request_digest("days", 7, "2024-05-01", "2024-05-31")
    try:
        after = tokens.after_sort_key(text, digest, "2024-05-01", "2024-05-31")
    except BadRequest:
        return
    assert "2024-05-01" <= after <= "2024-05-31"


def test_a_token_forged_to_start_outside_the_range_is_refused() -> None:
    digest = tokens.request_digest("days", 7, "2024-05-01", "2024-05-31")
    forged = base64.urlsafe_b64encode(json.dumps({"v": 1, "r": digest, "a": "2025-01-01"}).encode()).decode()

    with pytest.raises(BadRequest, match="token is not one this API gave"):
        tokens.after_sort_key(forged, digest, "2024-05-01", "2024-05-31")


@pytest.mark.parametrize(
    ("low", "high", "after"),
    [
        ("2024-05-01", "2024-05-01", "2024-05-01"),  # a one-day range
        ("2024-05-01", "2024-05-31", "2024-05-31"),
        ("SUMMARY#2024-01", "SUMMARY#2024-12", "SUMMARY#2024-12"),
    ],
)
def test_a_token_forged_to_start_at_the_ranges_last_key_is_refused(low: str, high: str, after: str) -> None:
    # DynamoDB refuses a Query that starts at its range's upper bound, and no page gives such a token
    digest = tokens.request_digest("days", 7, low, high)

    with pytest.raises(BadRequest, match="token is not one this API gave"):
        tokens.after_sort_key(tokens.encode(digest, after), digest, low, high)


def test_a_page_that_stops_at_the_ranges_last_key_gives_no_token() -> None:
    # DynamoDB answers a LastEvaluatedKey when a page's Limit ends at the range's last item
    def stopped_at(day: str) -> reads.Page:
        return reads.Page(items=[], last_key=schema.day_key(7, day))

    assert service._sort_key_after(stopped_at("2024-05-31"), "2024-05-31") is None
    assert service._sort_key_after(stopped_at("2024-05-30"), "2024-05-31") == "2024-05-30"
    assert service._sort_key_after(reads.Page(items=[], last_key=None), "2024-05-31") is None


def test_the_event_carries_path_query_and_repeated_parameters_as_api_gateway_does() -> None:
    event = event_of("GET", "/sensors/7/days?from=2024-05-01&to=2024-05-02&to=x", {"host": "h"}, "127.0.0.1")

    assert event["rawPath"] == "/sensors/7/days"
    assert event["queryStringParameters"] == {"from": "2024-05-01", "to": "2024-05-02,x"}
    assert event["requestContext"]["http"] == {
        "method": "GET",
        "path": "/sensors/7/days",
        "protocol": "HTTP/1.1",
        "sourceIp": "127.0.0.1",
        "userAgent": "",
    }


@pytest.mark.parametrize("target", ["sensors", "/sensors/\u00e9", "/sensors?from=%ff", "/s?" + "&".join(["a=1"] * 65)])
def test_a_target_that_is_no_api_request_is_refused(target: str) -> None:
    with pytest.raises(BadTarget):
        event_of("GET", target, {}, "127.0.0.1")


def test_a_profile_item_with_its_index_attribute_does_not_reach_the_summary() -> None:
    record = {"eventName": "INSERT", "dynamodb": {"NewImage": SensorProfile(7, "roof", "S-7").item()}}

    assert not matches_filter(record)


@pytest.mark.parametrize(
    ("text", "taken"),
    [
        ("-5", True),
        ("0", True),
        ("1" + "0" * 40, True),  # one significant digit
        ("9" * 38, True),
        ("9" * 39, False),  # more than DynamoDB's 38 significant digits
        ("9" * 126, False),
        ("1E+999", False),
        ("9.9E+125", True),
        ("1E+126", False),
        ("1E-130", True),
        ("1E-131", False),
        ("1e5", False),  # DynamoDB writes E
    ],
)
def test_a_page_token_holds_only_a_number_dynamodb_would_take(text: str, taken: bool) -> None:
    # a forged token with a number DynamoDB refuses is a bad request (400), never a failed query (503)
    assert tokens.dynamodb_number(text) is taken
