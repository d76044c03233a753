"""Message parsing and validation (no network, no engine)."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sensor_digest import zones
from sensor_digest.characters import control_character
from sensor_digest.errors import RejectedMessage
from sensor_digest.messages import (
    MAX_NESTING,
    MAX_SENSOR_ID,
    SensorMessage,
    check_event_id,
    nesting_depth,
    read_pending,
)
from tests.support.hostile import HOSTILE_BODY, ZONE

UTC = zones.load("UTC")
SENT_MS = "1714564800000"  # 2024-05-01T12:00:00Z


def parse(body: Any, zone: ZoneInfo = UTC, sent: str | None = SENT_MS, zone_for: Any = None) -> SensorMessage:
    """As ingest reads a body: validate it, then assign the day in the sensor's zone, else ``zone``."""
    text = body if isinstance(body, str) else json.dumps(body)
    pending = read_pending(message_id="mid-1", body=text, sent_timestamp=sent)
    return pending.in_zone((zone_for(pending.sensor_id) if zone_for else None) or zone)


def reason(body: Any, **kw: Any) -> str:
    with pytest.raises(RejectedMessage) as info:
        parse(body, **kw)
    return info.value.reason


def test_a_minimal_message_counts_one_on_the_sent_day_with_the_message_id_as_event_id() -> None:
    parsed = parse({"sensor_id": 42})
    assert (parsed.sensor_id, parsed.day, parsed.count, parsed.event_id) == (42, "2024-05-01", 1, "mid-1")
    assert parsed.ledger_key == "MSG#42#mid-1"


@pytest.mark.parametrize(
    ("timestamp", "zone", "day"),
    [
        ("2024-05-01T23:30:00Z", "UTC", "2024-05-01"),
        ("2024-05-01T23:30:00+00:00", "Asia/Tokyo", "2024-05-02"),
        ("2024-05-01T23:30:00", "Asia/Tokyo", "2024-05-01"),  # no offset: read in the digest zone
        ("2024-05-01T02:00:00-07:00", "UTC", "2024-05-01"),
        ("2024-05-01T20:00:00-07:00", "UTC", "2024-05-02"),
        (1714607999, "UTC", "2024-05-01"),
        (1714608000, "UTC", "2024-05-02"),
        (1714608000.5, "America/Los_Angeles", "2024-05-01"),
        ("2024-05-01", "UTC", "2024-05-01"),
    ],
)
def test_the_day_is_the_calendar_day_of_the_timestamp_in_the_zone(timestamp: Any, zone: str, day: str) -> None:
    assert parse({"sensor_id": 1, "timestamp": timestamp}, zone=zones.load(zone)).day == day


def test_a_sensor_zone_overrides_the_digest_zone() -> None:
    body = {"sensor_id": 9, "timestamp": "2024-05-01T20:00:00Z"}
    assert parse(body, zone_for=lambda s: zones.load("Asia/Tokyo") if s == 9 else None).day == "2024-05-02"
    assert parse({**body, "sensor_id": 8}, zone_for=lambda s: None).day == "2024-05-01"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("not json", "body is not valid JSON"),
        ("[1, 2]", "body must be a JSON object, got array"),
        ("", "body is not valid JSON"),
        ('{"sensor_id": NaN}', "NaN is not a JSON number"),
        ('{"sensor_id": Infinity}', "Infinity is not a JSON number"),
        ({}, "sensor_id is required"),
        ({"sensor_id": True}, "sensor_id must be an integer, got boolean"),
        ({"sensor_id": 1.0}, "sensor_id must be an integer, got number"),
        ({"sensor_id": "1"}, "sensor_id must be an integer, got string"),
        ({"sensor_id": None}, "sensor_id must be an integer, got null"),
        ({"sensor_id": -1}, "sensor_id must be between 0 and 9007199254740991"),
        ({"sensor_id": MAX_SENSOR_ID + 1}, "sensor_id must be between 0 and 9007199254740991"),
        ({"sensor_id": 1, "count": 0}, "count must be between 1 and 1000000"),
        ({"sensor_id": 1, "count": 1_000_001}, "count must be between 1 and 1000000"),
        ({"sensor_id": 1, "count": False}, "count must be an integer, got boolean"),
        ({"sensor_id": 1, "count": 2.5}, "count must be an integer, got number"),
        ({"sensor_id": 1, "event_id": ""}, "event_id must have 1 to 128 characters, got 0"),
        ({"sensor_id": 1, "event_id": "x" * 129}, "event_id must have 1 to 128 characters, got 129"),
        ({"sensor_id": 1, "event_id": "a\nb"}, "event_id must not contain control characters"),
        ({"sensor_id": 1, "event_id": 7}, "event_id must be a string, got number"),
        ({"sensor_id": 1, "timestamp": "yesterday"}, "timestamp 'yesterday' is not ISO-8601"),
        ({"sensor_id": 1, "timestamp": True}, "timestamp must be an ISO-8601 string or epoch seconds, got boolean"),
        ({"sensor_id": 1, "timestamp": None}, "timestamp must be an ISO-8601 string or epoch seconds, got null"),
        ({"sensor_id": 1, "timestamp": [1]}, "timestamp must be an ISO-8601 string or epoch seconds, got array"),
        ({"sensor_id": 1, "timestamp": 1e300}, "timestamp 1e+300 is out of range"),
        ('{"sensor_id": 1, "timestamp": 1e999}', "timestamp must be a finite number"),
        ("[" * 100_000 + "]" * 100_000, "body is not valid JSON: nested too deeply"),
        ('{"sensor_id": ' + "9" * 5000 + "}", "body holds an integer of 5,000 digits: no field takes one that long"),
        ('{"sensor_id": 1, "readings": {"t": -' + "9" * 4301 + "}}", "body holds an integer of 4,301 digits"),
    ],
)
def test_a_message_that_breaks_a_rule_is_rejected_with_the_reason(body: Any, expected: str) -> None:
    assert expected in reason(body)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"sensor_id": 7, "count": 1.5}, "count must be an integer, got number 1.5"),
        ({"sensor_id": 7, "count": "3"}, 'count must be an integer, got string "3"'),
        ({"sensor_id": "7"}, 'sensor_id must be an integer, got string "7"'),
        ({"sensor_id": 7.0}, "sensor_id must be an integer, got number 7.0"),
        ({"sensor_id": False}, "sensor_id must be an integer, got boolean false"),
        ({"sensor_id": 7, "event_id": ["a"]}, 'event_id must be a string, got array ["a"]'),
        (
            {"sensor_id": 7, "timestamp": {"at": 1}},
            'timestamp must be an ISO-8601 string or epoch seconds, got object {"at": 1}',
        ),
        ("[7]", "body must be a JSON object, got array [7]"),
        # a long value is clipped; one that could act on a terminal or a log is JSON-escaped ASCII
        ({"sensor_id": "x" * 100}, 'sensor_id must be an integer, got string "' + "x" * 36 + "..."),
        ({"sensor_id": "\u202e\x1b[2J"}, 'sensor_id must be an integer, got string "\\u202e\\u001b[2J"'),
    ],
)
def test_a_value_of_the_wrong_type_is_shown_in_the_reason(body: Any, expected: str) -> None:
    assert reason(body) == expected


def test_without_timestamp_and_without_sent_timestamp_the_message_is_rejected() -> None:
    assert "SentTimestamp attribute is missing" in reason({"sensor_id": 1}, sent=None)


def test_unknown_fields_are_ignored() -> None:
    assert parse({"sensor_id": 1, "extra": {"deep": [1, 2]}, "count": 4}).count == 4


def parsed_within_the_rules(body: str, **options: Any) -> SensorMessage | None:
    """``body`` parsed (``parse``'s ``options``) within the rules: a sensor id, count and day in their
    ranges; ``None`` when it is rejected instead, with a reason (no other exception may leave the parser)."""
    try:
        parsed = parse(body, **options)
    except RejectedMessage as rejection:
        assert rejection.reason
        return None
    assert 0 <= parsed.sensor_id <= MAX_SENSOR_ID
    assert 1 <= parsed.count <= 1_000_000
    assert len(parsed.day) == 10
    return parsed


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
FIELDS = st.fixed_dictionaries(
    {},
    optional={"sensor_id": JSON | st.integers(-5, 2**54), "timestamp": JSON, "count": JSON, "event_id": JSON},
)


@settings(max_examples=400, deadline=None)
@given(body=st.one_of(st.text(), st.binary().map(lambda b: b.decode("latin-1")), FIELDS.map(json.dumps)))
def test_any_body_is_either_parsed_within_the_rules_or_rejected(body: str) -> None:
    parsed = parsed_within_the_rules(body)
    if parsed is not None:
        assert 1 <= len(parsed.event_id) <= 128


def test_a_timestamp_past_float_range_is_rejected_not_raised() -> None:
    # Once raised OverflowError outside the parser's try and cost the whole batch.
    assert "timestamp" in reason({"sensor_id": 1, "timestamp": 2**1100})
    assert "timestamp" in reason({"sensor_id": 1, "timestamp": -(2**1100)})


@settings(max_examples=600, deadline=None)
@given(body=HOSTILE_BODY, zone=ZONE, sensor_zone=ZONE)
def test_a_hostile_body_in_any_zone_kind_is_parsed_within_the_rules_or_rejected(
    body: str, zone: str, sensor_zone: str
) -> None:
    # Only RejectedMessage may leave the parser: any other exception would be a bug on hostile input.
    for zone_for in (None, lambda _: zones.load(sensor_zone)):
        parsed_within_the_rules(body, zone=zones.load(zone), zone_for=zone_for)


# -- event_id: control characters without the interpreter's Unicode tables ----------------------


def _cc_or_surrogate(character: str) -> bool:
    """The contract's rule, written from the Unicode standard: category Cc (fixed forever by the
    stability policy, so the interpreter's table agrees on every version) or a surrogate code point."""
    return unicodedata.category(character) in ("Cc", "Cs")


@settings(max_examples=500, deadline=None)
@given(event_id=st.text(st.characters(codec=None, exclude_categories=()), min_size=1, max_size=128))
def test_an_event_id_is_refused_exactly_when_it_holds_a_control_character_or_a_lone_surrogate(event_id: str) -> None:
    forbidden = [i for i, c in enumerate(event_id) if _cc_or_surrogate(c)]
    if forbidden:
        with pytest.raises(RejectedMessage) as info:
            check_event_id(event_id)
        assert info.value.reason.endswith(f"at position {forbidden[0] + 1}")
        assert "\n" not in info.value.reason
    else:
        assert check_event_id(event_id) == event_id
        assert parse({"sensor_id": 1, "event_id": event_id}).event_id == event_id


@pytest.mark.parametrize(
    "event_id",
    [
        "sensor-\U0001e030",  # CYRILLIC SMALL LETTER A-MODIFIER, new in Unicode 15.0: Python 3.11 calls it unprintable
        "k\u00fcche\u00a0nord",  # a no-break space: never "printable" to str.isprintable
        "a\u200bb",  # a zero-width space (Cf)
        "\U0010fffd",  # a private-use character
    ],
)
def test_an_event_id_with_characters_newer_or_stranger_than_the_interpreter_knows_is_accepted(event_id: str) -> None:
    assert parse({"sensor_id": 1, "event_id": event_id}).ledger_key == f"MSG#1#{event_id}"


@pytest.mark.parametrize(
    ("event_id", "position"),
    [("a\x00", "U+0000 at position 2"), ("\x7fz", "U+007F at position 1"), ("ab\x85", "U+0085 at position 3")],
)
def test_check_event_id_names_the_first_control_character(event_id: str, position: str) -> None:
    with pytest.raises(
        RejectedMessage, match=f"^event_id must not contain control characters .*: {re.escape(position)}$"
    ):
        check_event_id(event_id)


def test_a_lone_surrogate_in_an_event_id_is_refused_and_a_pair_is_one_character() -> None:
    assert "U+D800 at position 1" in reason('{"sensor_id": 1, "event_id": "\\ud800x"}')
    assert parse('{"sensor_id": 1, "event_id": "\\ud83d\\ude00"}').event_id == "\U0001f600"


def test_the_forbidden_characters_are_exactly_the_unicode_categories_cc_and_cs_over_every_code_point() -> None:
    forbidden = {c for c in range(0x110000) if control_character(chr(c)) is not None}
    assert forbidden == {c for c in range(0x110000) if _cc_or_surrogate(chr(c))}


def test_an_event_id_taken_from_the_source_message_id_attribute_follows_the_same_rule() -> None:
    # a redriven dead letter's report without event_id is counted by its sensor-digest.source_message_id attribute
    def pending(origin_id: str) -> Any:
        return read_pending(message_id="m", body='{"sensor_id": 1}', sent_timestamp=SENT_MS, origin_id=origin_id)

    assert pending("k\u00fcche\u00a0\U0001e030").event_id == "k\u00fcche\u00a0\U0001e030"
    with pytest.raises(RejectedMessage) as info:
        pending("a\nb")
    assert info.value.reason == (
        "the sensor-digest.source_message_id attribute (the report's event id) must not contain control characters "
        "(U+0000-U+001F, U+007F-U+009F) or lone surrogates (U+D800-U+DFFF): U+000A at position 2"
    )


def test_nesting_deeper_than_64_levels_is_refused_on_every_python_and_64_is_read() -> None:
    # Python's own limit differs: about 990 levels on 3.11, 1,500 on 3.12, 10,000 on 3.13
    def nested(depth: int) -> str:
        return '{"sensor_id": 1, "x": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"

    assert read_pending(message_id="m", body=nested(MAX_NESTING), sent_timestamp="1").sensor_id == 1
    for depth in (MAX_NESTING + 1, 1_000, 5_000):
        with pytest.raises(RejectedMessage, match=f"nested too deeply \\(more than {MAX_NESTING} levels\\)"):
            read_pending(message_id="m", body=nested(depth), sent_timestamp="1")


def test_brackets_inside_strings_do_not_nest() -> None:
    body = json.dumps({"sensor_id": 1, "note": "[" * 500 + '\\"{' * 100})
    assert nesting_depth(body) == 1
    assert read_pending(message_id="m", body=body, sent_timestamp="1").sensor_id == 1


@pytest.mark.timeout(60)  # a hang guard, not a speed claim: quadratic scanning took about an hour here
def test_a_megabyte_of_escaped_quotes_behind_deep_brackets_is_judged_in_one_pass() -> None:
    body = "[" * (MAX_NESTING + 1) + '"' + '\\"' * 500_000

    with pytest.raises(RejectedMessage, match="nested too deeply"):
        read_pending(message_id="m", body=body, sent_timestamp="1")
    assert nesting_depth('["\\\\", [1]]') == 2  # an escaped backslash ends before the quote
