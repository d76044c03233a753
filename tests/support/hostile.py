"""Hostile bodies beyond what a producer would send: the class of input that once cost a batch.

Shared by the parser's property test (no engine) and the hostile-input scenario (DynamoDB Local).
Bodies are JSON *text*, assembled from raw number tokens where ``json.dumps`` could not write them:
integers far past 2**64 and past float range, numbers longer than Python's 4,300-digit int
conversion limit, huge exponents, deep nesting, and timestamps at year 1 and year 9999 with the
most extreme offsets ISO-8601 allows, the grammar's 24:00 and leap seconds there among them.
"""

from __future__ import annotations

import json
from datetime import timedelta

from hypothesis import strategies as st

# One IANA zone of every kind the registry can hold: UTC, fixed offsets at both ends of the range,
# half- and quarter-hour offsets, the date line, DST in either hemisphere, negative DST, a 2-hour DST.
ZONE_KINDS = [
    "UTC",
    "Etc/GMT-14",
    "Etc/GMT+12",
    "Pacific/Kiritimati",
    "Pacific/Apia",
    "America/St_Johns",
    "Asia/Kathmandu",
    "Australia/Lord_Howe",
    "America/New_York",
    "Australia/Sydney",
    "Europe/Dublin",
    "Antarctica/Troll",
]

YEAR_1 = -62_135_596_800  # 0001-01-01T00:00:00Z in epoch seconds
YEAR_9999_END = 253_402_300_799  # 9999-12-31T23:59:59Z
DAY = 86_400

_huge_int = st.one_of(
    st.integers(2**64, 2**1023),
    st.integers(2**1024, 10**4299),  # past float range, still within the digit limit
    st.integers(-(10**4299), -(2**64)),
)
_number_token = st.one_of(
    _huge_int.map(str),
    st.integers(4301, 6000).map(lambda n: "9" * n),  # past Python's int conversion limit
    st.tuples(st.integers(1, 9), st.integers(308, 10**6), st.sampled_from(["", "-"])).map(
        lambda t: f"{t[2]}{t[0]}e{t[1]}"  # overflows to infinity
    ),
    st.integers(308, 10**6).map(lambda e: f"1e-{e}"),  # underflows to 0.0
    st.integers(YEAR_1 - 2 * DAY, YEAR_1 + 2 * DAY).map(str),  # around year 1
    st.integers(YEAR_9999_END - 2 * DAY, YEAR_9999_END + 2 * DAY).map(str),  # around the end of 9999
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)


def _iso(year: int, month: int, day: int, clock: str, offset_minutes: int | None) -> str:
    if offset_minutes is None:
        return f"{year:04d}-{month:02d}-{day:02d}T{clock}"
    sign = "+" if offset_minutes >= 0 else "-"
    hours, minutes = divmod(abs(offset_minutes), 60)
    return f"{year:04d}-{month:02d}-{day:02d}T{clock}{sign}{hours:02d}:{minutes:02d}"


_extreme_offset = st.one_of(st.none(), st.just(23 * 60 + 59), st.just(-(23 * 60 + 59)), st.integers(-1439, 1439))
_edge_timestamp = st.one_of(
    st.builds(
        _iso, st.just(1), st.just(1), st.integers(1, 2), st.sampled_from(["00:00:00", "23:59:59"]), _extreme_offset
    ),
    st.builds(
        _iso,
        st.just(9999),
        st.just(12),
        st.integers(30, 31),
        st.sampled_from(["00:00:00", "23:59:59.999999"]),
        _extreme_offset,
    ),
    st.builds(lambda d: (d - timedelta(microseconds=1)).isoformat(), st.datetimes(timezones=st.timezones())),
    # the grammar's own edges (sensor_digest/timestamps.py): the midnight that ends 9999-12-31, leap
    # seconds and week dates at both ends, ordinal dates, offsets with seconds, other scripts' digits
    st.builds(
        lambda date, clock, offset: f"{date}T{clock}{offset}",
        st.sampled_from(["0001-01-01", "00010101", "0001-W01-1", "9999-12-31", "99991231", "9999-W52-5", "9999-W52-7"]),
        st.sampled_from(["24:00", "24", "240000,000000000", "23:59:60", "235960.999999999", "00:00", "24:00:01"]),
        st.sampled_from(["", "Z", "z", "+23:59", "-23:59", "+2359", "-23", "+00:00:01", "+24:00"]),
    ),
    st.sampled_from(
        ["2024-122", "0001001", "9999-365T24:00Z", "\uff12\uff10\uff12\uff14-05-01", "2024-05-01T12:00" + "0" * 60]
    ),
).map(json.dumps)

_value_token = st.one_of(
    _number_token,
    _edge_timestamp,
    st.integers(1, 3000).map(lambda depth: "[" * depth + "]" * depth),  # deep nesting
    st.integers(1, 3000).map(lambda depth: '{"a":' * depth + "0" + "}" * depth),
    st.sampled_from(["true", "false", "null", '""', "[]", "{}", '"\\ud800"', '"\\u0000"']),
)
_valid_sensor = st.integers(0, 2**53 - 1).map(str)
_valid_count = st.integers(1, 1_000_000).map(str)
_field_token = st.one_of(_value_token, _valid_sensor, _valid_count)


def _object(tokens: dict[str, str]) -> str:
    return "{" + ", ".join(f"{json.dumps(name)}: {token}" for name, token in tokens.items()) + "}"


HOSTILE_BODY = st.one_of(
    # A valid sensor, so that the hostile timestamp (or count, or event id) is what the parser meets.
    st.fixed_dictionaries(
        {"sensor_id": _valid_sensor, "timestamp": st.one_of(_huge_int.map(str), _number_token, _edge_timestamp)},
        optional={"count": st.one_of(_valid_count, _number_token), "event_id": _value_token, "pad": _value_token},
    ).map(_object),
    st.fixed_dictionaries(
        {"sensor_id": st.one_of(_valid_sensor, _number_token), "count": _field_token},
        optional={"event_id": _field_token, "pad": _value_token},
    ).map(_object),
    # Anything in every field.
    st.fixed_dictionaries(
        {},
        optional={
            "sensor_id": _field_token,
            "timestamp": _field_token,
            "count": _field_token,
            "event_id": _field_token,
            "pad": _value_token,
        },
    ).map(_object),
    _value_token,  # a body that is a bare hostile value
)
"""Hostile bodies as JSON text, each a candidate for every rule of the message contract."""

ZONE = st.sampled_from(ZONE_KINDS)
