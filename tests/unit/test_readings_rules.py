"""A report's ``readings`` (messages.py): what is accepted, exactly as written, and what is refused
with its reason. Engine: none."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sensor_digest.errors import RejectedMessage
from sensor_digest.messages import MAX_READINGS, READING_LIMIT, read_pending


def readings_of(body: str) -> tuple[tuple[str, Decimal], ...]:
    return read_pending(message_id="m", body=body, sent_timestamp="0").readings


def body(readings: str) -> str:
    return f'{{"sensor_id": 7, "timestamp": "2024-05-01T09:00:00Z", "readings": {readings}}}'


@pytest.mark.parametrize(
    ("written", "kept"),
    [
        ("21.5", "21.5"),
        ("21.50", "21.5"),
        ("-0", "0"),
        ("-0.0", "0"),
        ("1E+3", "1000"),
        ("1e3", "1000"),
        ("0.000001", "0.000001"),
        ("0.0000010", "0.000001"),
        ("999999999.999999", "999999999.999999"),
        ("-999999999.999999", "-999999999.999999"),
        ("123456789012345e-6", "123456789.012345"),
        ("7", "7"),
    ],
)
def test_a_reading_is_kept_exactly_as_written_never_through_a_float(written: str, kept: str) -> None:
    assert readings_of(body(f'{{"t": {written}}}')) == (("t", Decimal(kept)),)
    assert str(readings_of(body(f'{{"t": {written}}}'))[0][1]) == kept


@pytest.mark.parametrize(
    ("readings", "reason"),
    [
        ('{"t": 1e308}', "readings.t must be a JSON number below 1,000,000,000 in magnitude"),
        ('{"t": 1e1000000}', "readings.t must be a JSON number below 1,000,000,000 in magnitude"),
        ('{"t": -1E+999999999}', "readings.t must be a JSON number below 1,000,000,000 in magnitude"),
        ('{"t": 1000000000}', "readings.t must be a JSON number below 1,000,000,000"),
        ('{"t": 1e-400}', "at most 6 digits after the decimal point"),
        ('{"t": 0.0000001}', "at most 6 digits after the decimal point"),
        ('{"t": 123456789.1234567890123456789012345678901}', "at most 6 digits after the decimal point"),
        ('{"t": "21.5"}', 'got string "21.5"'),
        ('{"t": true}', "got boolean true"),
        ('{"t": null}', "got null"),
        ('{"t": [1]}', "got array [1]"),
        ('{"t": NaN}', "NaN is not a JSON number"),
        ('{"t": Infinity}', "Infinity is not a JSON number"),
        ('{"t": -Infinity}', "-Infinity is not a JSON number"),
        ('{"t": "NaN"}', 'got string "NaN"'),
        ("[21.5]", "readings must be an object of named numbers, got array"),
        ('"t=21.5"', "readings must be an object of named numbers, got string"),
        ('{"1t": 1}', 'readings name string "1t" must be 1 to 32 ASCII letters, digits or _, a letter first'),
        ('{"": 1}', "readings name string"),
        ('{"_t": 1}', "readings name string"),
        ('{"t-1": 1}', "readings name string"),
        ('{"t 1": 1}', "readings name string"),
        ('{"temp\\u00e9": 1}', "readings name string"),
        ('{"t\\u0000": 1}', "readings name string"),
        ('{"' + "a" * 33 + '": 1}', "readings name string"),
        ("{" + ", ".join(f'"r{i}": {i}' for i in range(MAX_READINGS + 1)) + "}", "at most 8 names, got 9"),
    ],
)
def test_a_reading_outside_the_rules_rejects_its_report_with_the_reason(readings: str, reason: str) -> None:
    with pytest.raises(RejectedMessage) as refused:
        readings_of(body(readings))
    assert reason in refused.value.reason


def test_a_report_without_readings_has_none_and_eight_names_are_accepted() -> None:
    assert readings_of('{"sensor_id": 7, "timestamp": "2024-05-01T09:00:00Z"}') == ()
    eight = {f"r{i}": i for i in range(MAX_READINGS)} | {"Z" + "a" * 31: 1}
    eight.pop("r0")
    assert len(readings_of(body(json.dumps(eight)))) == MAX_READINGS


@settings(max_examples=300, deadline=None)
@given(value=st.decimals(allow_nan=False, allow_infinity=False, places=None))
def test_a_reading_is_accepted_exactly_when_it_lies_on_the_grid_within_the_bound(value: Decimal) -> None:
    text = format(value, "f") if abs(value.adjusted()) < 400 else str(value)
    on_grid = value == value.quantize(Decimal("0.000001")) if abs(value) < READING_LIMIT else False
    try:
        kept: Any = readings_of(body(f'{{"t": {text}}}'))[0][1]
    except RejectedMessage:
        assert not on_grid
    else:
        assert on_grid and kept == value
