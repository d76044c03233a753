"""The timestamp grammar (``sensor_digest/timestamps.py``): verdicts and days, the same on every Python.

No network, no engine. The verdicts are read the way ingest reads them (``read_pending`` then
``in_zone``), so each one is the contract's, not only the helper module's. ``make test-unit-py313``
runs this file on Python 3.13 as well, the functions' Lambda runtime.
"""

from __future__ import annotations

import ast
import json
import re
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sensor_digest import timestamps, zones
from sensor_digest.errors import RejectedMessage
from sensor_digest.messages import read_pending
from tests.support.hostile import ZONE

YEAR_1 = -62_135_596_800  # 0001-01-01T00:00:00Z in epoch seconds
YEAR_10000 = 253_402_300_800  # 10000-01-01T00:00:00Z
FUNCTIONS = Path(__file__).resolve().parents[2] / "functions" / "sensor_digest"


def verdict(timestamp: Any, zone: str = "UTC") -> str:
    """The day a message with this timestamp counts toward in ``zone``, or ``refused: <reason>``."""
    body = json.dumps({"sensor_id": 1, "timestamp": timestamp})
    try:
        return read_pending(message_id="m", body=body, sent_timestamp="0").in_zone(zones.load(zone)).day
    except RejectedMessage as rejection:
        return f"refused: {rejection.reason}"


# (timestamp, zone, the day it counts toward, or a fragment of the reason it is refused with)
TABLE: list[tuple[str, str, str]] = [
    # dates: calendar and week dates, extended and basic
    ("2024-05-01", "UTC", "2024-05-01"),
    ("20240501", "UTC", "2024-05-01"),
    ("2024-W18-3", "UTC", "2024-05-01"),
    ("2024W183", "UTC", "2024-05-01"),
    ("2020-W53-7", "UTC", "2021-01-03"),
    ("2025-W01-1", "UTC", "2024-12-30"),
    ("0001-W01-1", "UTC", "0001-01-01"),
    ("2024-02-29", "UTC", "2024-02-29"),
    ("2024-122", "UTC", "is an ordinal date (YYYY-DDD), which is not accepted: send YYYY-MM-DD"),
    ("2024122", "UTC", "ordinal date"),
    ("2024-122T10:00Z", "UTC", "ordinal date"),
    ("2024-05", "UTC", "is not ISO-8601"),
    ("2024", "UTC", "is not ISO-8601"),
    ("2024-0501", "UTC", "is not ISO-8601"),
    ("0000-01-01", "UTC", "year 0000 is out of range"),
    ("2024-13-01", "UTC", "month 13 is not 01 to 12"),
    ("2023-02-29", "UTC", "day 29 is not 01 to 28 in 2023-02"),
    ("2024-W53-1", "UTC", "week 53 is not 01 to 52 in ISO year 2024"),
    ("2024-W00-1", "UTC", "week 00"),
    ("2024-W18-8", "UTC", "weekday 8 is not 1 (Monday) to 7 (Sunday)"),
    ("9999-W52-5", "UTC", "9999-12-31"),
    ("9999-W52-6", "UTC", "out of range"),
    # times: T, t or one space; extended and basic; fractions of the second only
    ("2024-05-01T12", "UTC", "2024-05-01"),
    ("2024-05-01t1230", "UTC", "2024-05-01"),
    ("2024-05-01 12:30:15", "UTC", "2024-05-01"),
    ("20240501T123015,5", "UTC", "2024-05-01"),
    ("2024-05-01T23:59:59.999999999", "UTC", "2024-05-01"),
    ("2024-05-01T23:59:59.9999999999", "UTC", "a fraction of a second has 1 to 9 digits"),
    ("2024-05-01T12.5", "UTC", "a fraction is accepted on seconds only"),
    ("2024-05-01T12:30.5", "UTC", "a fraction is accepted on seconds only"),
    ("2024-05-01T12:30:15.", "UTC", "is not ISO-8601"),
    ("2024-05-01x12:00", "UTC", "is not ISO-8601"),
    ("2024-05-01T", "UTC", "is not ISO-8601"),
    ("2024-05-01T12:0000", "UTC", "is not ISO-8601"),
    ("2024-05-01T25:00", "UTC", "hour 25 is not 00 to 23"),
    ("2024-05-01T12:60", "UTC", "minute 60 is not 00 to 59"),
    ("2024-05-01T12:30:61", "UTC", "second 61 is not 00 to 59"),
    # 24:00, the midnight that ends the day
    ("2024-05-01T24:00", "UTC", "2024-05-02"),
    ("2024-05-01T24", "UTC", "2024-05-02"),
    ("2024-05-01T24:00:00", "UTC", "2024-05-02"),
    ("2024-05-01T240000,000000000", "UTC", "2024-05-02"),
    ("2024-02-28T24:00", "UTC", "2024-02-29"),
    ("2023-12-31T24:00", "Asia/Tokyo", "2024-01-01"),
    ("2024-05-01T24:00+09:00", "UTC", "2024-05-01"),
    ("2024-05-01T24:01", "UTC", "hour 24 is accepted only as 24:00"),
    ("2024-05-01T24:00:00.000001", "UTC", "hour 24 is accepted only as 24:00"),
    ("9999-12-31T24:00", "UTC", "out of range"),
    # leap seconds: only after minute 59, on the day written
    ("2016-12-31T23:59:60Z", "UTC", "2016-12-31"),
    ("2016-12-31T235960.5Z", "UTC", "2016-12-31"),
    ("2017-01-01T08:59:60+09:00", "UTC", "2016-12-31"),
    ("2017-01-01T08:59:60+09:00", "Asia/Tokyo", "2017-01-01"),
    ("2016-12-31T23:59:60", "Pacific/Kiritimati", "2016-12-31"),
    ("2016-12-31T23:58:60Z", "UTC", "second 60 (a leap second) is accepted only after minute 59"),
    # offsets
    ("2024-05-01T12:00z", "UTC", "2024-05-01"),
    ("2024-05-01T20:00-05", "UTC", "2024-05-02"),
    ("2024-05-01T20:00-0500", "UTC", "2024-05-02"),
    ("2024-05-01T12:00+23:59", "UTC", "2024-04-30"),
    ("2024-05-01T12:00-23:59", "UTC", "2024-05-02"),
    ("2024-05-01T12:00-00:00", "Asia/Kathmandu", "2024-05-01"),
    ("2024-05-01T12:00+24:00", "UTC", "offset +24:00 is out of range"),
    ("2024-05-01T12:00+00:60", "UTC", "offset +00:60 is out of range"),
    ("2024-05-01T12:00+05:30:15", "UTC", "an offset has no seconds"),
    ("2024-05-01T12:00+053015", "UTC", "an offset has no seconds"),
    ("2024-05-01Z", "UTC", "is not ISO-8601"),
    ("2024-05-01T12:00 +01:00", "UTC", "is not ISO-8601"),
    # without offset: the wall-clock date as written, whatever the zone does that day
    ("2024-05-01T23:30", "Asia/Tokyo", "2024-05-01"),
    ("2011-12-30T12:00", "Pacific/Apia", "2011-12-30"),  # a day Samoa skipped
    ("2024-03-10T02:30", "America/New_York", "2024-03-10"),  # in the spring-forward gap
    # the ends of the range, in the zone
    ("0001-01-01T00:00+01:00", "Asia/Tokyo", "0001-01-01"),
    ("0001-01-01T00:00+01:00", "UTC", "out of range"),
    ("9999-12-31T23:00-05:00", "America/New_York", "9999-12-31"),
    ("9999-12-31T23:00-05:00", "UTC", "out of range"),
    ("9999-12-31T23:59:59.999999", "Etc/GMT+12", "9999-12-31"),
    # characters
    ("\uff12\uff10\uff12\uff14-05-01", "UTC", "only ASCII characters are accepted"),
    ("\u0662\u0660\u0662\u0664-05-01", "UTC", "only ASCII characters are accepted"),
    ("2024-05-01T1\u0662:00", "UTC", "only ASCII characters are accepted"),
    (" 2024-05-01", "UTC", "no whitespace is accepted before or after it"),
    ("2024-05-01T12:00Z\n", "UTC", "no whitespace is accepted before or after it"),
    ("2024-05-01T12:00:00." + "0" * 50, "UTC", "is longer than the grammar's 64 characters"),
]


def test_the_grammar_table_gives_every_verdict_and_day() -> None:
    wrong = []
    for timestamp, zone, expected in TABLE:
        got = verdict(timestamp, zone)
        ok = got == expected if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", expected) else expected in got
        if not ok or (got.startswith("refused") and "\n" in got):
            wrong.append(f"{timestamp!r} in {zone}: expected {expected!r}, got {got!r}")
    assert wrong == []


def test_24_00_is_the_midnight_that_ends_the_date_whatever_the_python() -> None:
    # fromisoformat refuses these before Python 3.14 and accepts them from 3.14 on
    assert {verdict(f"2024-12-31{t}") for t in ("T24", "T24:00", "T2400", "T24:00:00", "T24:00:00.000")} == {
        "2025-01-01"
    }


def test_a_leap_second_counts_on_the_day_it_is_written_in() -> None:
    assert verdict("2016-12-31T23:59:60Z") == "2016-12-31"
    assert verdict("2016-12-31T23:59:60.999Z", "Asia/Tokyo") == "2017-01-01"  # 08:59:59.999999 there
    assert verdict("2016-12-31T23:59:60-00:30") == "2017-01-01"  # 00:29:59.999999Z


def test_a_text_that_is_not_iso_is_refused_with_the_grammar_and_the_offset_said_to_be_optional() -> None:
    reason = verdict("2024-05-01x12:00").removeprefix("refused: ")
    assert reason.startswith("timestamp '2024-05-01x12:00' is not ISO-8601 as accepted here: YYYY-MM-DD or YYYY-Www-D")
    assert "an optional offset (Z, +hh:mm or -hh:mm; without one, the sensor's local time)" in reason
    assert verdict("2024-05-01T12:00") == "2024-05-01"  # accepted without offset, as the reason says


def test_an_ordinal_date_is_refused_with_a_reason_that_names_it_and_says_what_to_send() -> None:
    for text in ("2024-122", "2024122", "2024-122T12:00:00Z"):
        assert f"timestamp {text!r} is an ordinal date (YYYY-DDD), which is not accepted: send YYYY-MM-DD" == (
            verdict(text).removeprefix("refused: ")
        )


def test_an_instant_just_outside_years_1_to_9999_in_utc_counts_when_its_day_in_the_zone_is_inside() -> None:
    assert verdict("0001-01-01T00:00+01:00", "Etc/GMT-14") == "0001-01-01"  # 0000-12-31T23:00Z
    assert verdict(YEAR_1 - 3600, "Etc/GMT-14") == "0001-01-01"
    assert verdict(YEAR_10000 + 3600, "Etc/GMT+12") == "9999-12-31"
    assert verdict(YEAR_1 - 3600, "UTC").startswith("refused: timestamp -62135600400 is out of range")
    assert verdict(float(YEAR_10000), "UTC").startswith("refused: timestamp 253402300800.0 is out of range")


def test_epoch_milliseconds_are_refused_with_a_reason_that_says_so_and_how_to_send_seconds() -> None:
    # IoT Core's timestamp() and JavaScript's Date.now() give milliseconds: out of range as seconds
    assert verdict(1714557600000) == (
        "refused: timestamp 1714557600000 is out of range: its day in UTC is not 0001-01-01 to 9999-12-31; "
        "it looks like epoch milliseconds (2024-05-01 in UTC): send epoch seconds (divide by 1000)"
    )
    assert verdict(1714557600000.5).endswith(
        "it looks like epoch milliseconds (2024-05-01 in UTC): send epoch seconds (divide by 1000)"
    )
    # the day it names is the one it would be in the sensor's zone
    assert verdict(1714521600000, "America/New_York").endswith(
        "epoch milliseconds (2024-04-30 in America/New_York): send epoch seconds (divide by 1000)"
    )


def test_epoch_micro_and_nanoseconds_are_named_too_and_a_number_no_unit_explains_is_only_out_of_range() -> None:
    assert verdict(1714557600000000).endswith(
        "it looks like epoch microseconds (2024-05-01 in UTC): send epoch seconds (divide by 1000000)"
    )
    assert verdict(1714557600000000000).endswith(
        "it looks like epoch nanoseconds (2024-05-01 in UTC): send epoch seconds (divide by 1000000000)"
    )
    for unexplained in (10**21, 1e300, -1714557600000, YEAR_1 - 1):  # too large for any unit; before 1970
        refused = verdict(unexplained)
        assert refused.startswith("refused: timestamp ") and refused.endswith("is not 0001-01-01 to 9999-12-31")
    # seconds in range are still accepted as seconds, up to the last one of 9999
    assert verdict(YEAR_10000 - 1) == "9999-12-31"


def test_epoch_seconds_are_floored_to_the_microsecond_from_the_exact_number() -> None:
    # 1714607999.9999998 is 0.2 microseconds before 2024-05-02T00:00Z; rounding would cross midnight
    assert verdict(1714607999.9999998) == "2024-05-01"
    assert verdict(-0.0000001) == "1969-12-31"
    assert verdict(1714608000) == "2024-05-02"


def test_the_sqs_sent_timestamp_is_read_as_ascii_digits_only() -> None:
    body = json.dumps({"sensor_id": 1})
    zone = zones.load("UTC")
    assert read_pending(message_id="m", body=body, sent_timestamp="1714607999999").in_zone(zone).day == "2024-05-01"
    for sent in ("\u0661\u0667\u0661\u0664\u0666\u0660\u0667\u0669\u0669\u0669", "1_714_607_999_999", " 1714607999999"):
        try:
            read_pending(message_id="m", body=body, sent_timestamp=sent).in_zone(zone)
        except RejectedMessage as rejection:
            assert rejection.reason == "the SQS SentTimestamp attribute is not an integer"
        else:
            raise AssertionError(f"SentTimestamp {sent!r} was accepted")


# -- properties ---------------------------------------------------------------------------------

_FORMS = st.fixed_dictionaries(
    {
        "date": st.sampled_from(["extended", "basic", "week-extended", "week-basic"]),
        "separator": st.sampled_from(["T", "t", " "]),
        "time": st.sampled_from(["extended", "basic"]),
        "precision": st.sampled_from(["hour", "minute", "second", "fraction", "24:00", "leap second"]),
        "fraction_digits": st.integers(1, 9),
        "decimal": st.sampled_from([".", ","]),
        "offset": st.sampled_from(["Z", "z", "+hh:mm", "+hhmm", "+hh"]),
    }
)


def _write_date(day: date, form: str) -> str:
    if form.startswith("week"):
        year, week, wday = day.isocalendar()
        return f"{year:04d}-W{week:02d}-{wday}" if form == "week-extended" else f"{year:04d}W{week:02d}{wday}"
    dash = "-" if form == "extended" else ""
    return f"{day.year:04d}{dash}{day.month:02d}{dash}{day.day:02d}"


def _write(moment: datetime, offset: int | None, forms: dict[str, Any], extra: str) -> tuple[str, datetime | None]:
    """``moment`` (local, naive) written in ``forms``, and the local time the text stands for
    (``None`` when that is past 9999-12-31, which a datetime cannot hold)."""
    precision, variant = forms["precision"], moment.second % 4
    digits = (f"{moment.microsecond:06d}" + extra)[: forms["fraction_digits"]]
    fraction = ""
    meant: datetime | None
    if precision == "24:00":  # T24, T24:00, T24:00:00 or T24:00:00.000
        fields = [24, 0, 0][: min(variant, 2) + 1]
        fraction = "0" * len(digits) if variant == 3 else ""
        midnight = datetime.combine(moment.date(), datetime.min.time())
        meant = midnight + timedelta(days=1) if moment.date() < date(9999, 12, 31) else None
    elif precision == "leap second":
        fields, fraction = [moment.hour, 59, 60], digits if variant % 2 else ""
        meant = moment.replace(minute=59, second=59, microsecond=999_999)
    else:
        keep = {"hour": 1, "minute": 2, "second": 3, "fraction": 3}[precision]
        fields = [moment.hour, moment.minute, moment.second][:keep]
        fraction = digits if precision == "fraction" else ""
        meant = moment.replace(
            minute=moment.minute if keep > 1 else 0,
            second=moment.second if keep > 2 else 0,
            microsecond=int((fraction + "000000")[:6]),
        )
    text = _write_date(moment.date(), forms["date"]) + forms["separator"]
    text += (":" if forms["time"] == "extended" else "").join(f"{f:02d}" for f in fields)
    text += forms["decimal"] + fraction if fraction else ""
    if offset is not None:
        sign, (hours, minutes) = ("-" if offset < 0 else "+"), divmod(abs(offset), 60)
        style = forms["offset"]
        if offset == 0 and style in ("Z", "z"):
            text += style
        elif style == "+hh" and minutes == 0:
            text += f"{sign}{hours:02d}"
        elif style == "+hhmm":
            text += f"{sign}{hours:02d}{minutes:02d}"
        else:
            text += f"{sign}{hours:02d}:{minutes:02d}"
    return text, meant


_MOMENTS = st.one_of(
    st.datetimes(),
    st.datetimes(max_value=datetime(1, 1, 3)),
    st.datetimes(min_value=datetime(9999, 12, 29)),
)
_OFFSETS = st.one_of(st.integers(-1439, 1439), st.sampled_from([0, 1439, -1439, 60, -60, 330, 345, -570]))


@settings(max_examples=300, deadline=None)
@given(moment=_MOMENTS, offset=_OFFSETS, forms=_FORMS, extra=st.text("0123456789", max_size=3))
def test_every_text_the_grammar_writes_with_an_offset_is_the_instant_arithmetic_gives(
    moment: datetime, offset: int, forms: dict[str, Any], extra: str
) -> None:
    text, meant = _write(moment, offset, forms, extra)
    assume(meant is not None)  # 9999-12-31T24:00: no datetime to compare with (the table refuses it)
    assert meant is not None

    written = timestamps.parse(text)

    instant = meant.replace(tzinfo=timezone(timedelta(minutes=offset)))
    assert written.epoch_micros == (instant - timestamps.EPOCH) // timedelta(microseconds=1), text


@settings(max_examples=300, deadline=None)
@given(
    moment=_MOMENTS,
    offset=st.one_of(st.none(), _OFFSETS),
    forms=_FORMS,
    extra=st.text("0123456789", max_size=3),
    zone=ZONE,
)
def test_every_text_of_the_grammar_is_accepted_with_the_day_python_gives_where_python_reads_it(
    moment: datetime, offset: int | None, forms: dict[str, Any], extra: str, zone: str
) -> None:
    text, _ = _write(moment, offset, forms, extra)

    got = verdict(text, zone)

    if got.startswith("refused"):  # only the ends of the range may be refused, and only as out of range
        assert "out of range" in got and (moment.year in (1, 9999)), (text, got)
        return
    try:
        python = datetime.fromisoformat(text)
        day = python.date() if python.tzinfo is None else python.astimezone(zones.load(zone)).date()
    except (ValueError, OverflowError):  # not Python's (24:00, 60, z, ...), or past its datetime range
        return
    assert got == day.isoformat(), text


_GRAMMAR = re.compile(
    r"[0-9]{4}(?:-[0-9]{2}-[0-9]{2}|[0-9]{4}|-W[0-9]{2}-[0-9]|W[0-9]{3})"
    r"(?:[Tt ]"
    r"(?:[0-9]{2}(?::[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]{1,9})?)?)?|[0-9]{2}(?:[0-9]{2}(?:[0-9]{2}(?:[.,][0-9]{1,9})?)?)?)"
    r"(?:[Zz]|[+-][0-9]{2}(?::?[0-9]{2})?)?)?"
)
"""The ABNF of ``timestamps.py`` transcribed independently into one expression (syntax only)."""


def _edit(text: str, edits: list[tuple[int, str]]) -> str:
    """``text`` with characters deleted (``""``), replaced (at odd positions) or inserted (at even ones)."""
    for position, character in edits:
        at = position % (len(text) + 1)
        keep_from = at + 1 if character == "" or at % 2 else at
        text = text[:at] + character + text[keep_from:]
    return text


_NEAR_TEXT = st.builds(
    _edit,
    st.sampled_from(
        ["2024-05-01T12:30:15.5+01:00", "20240501T123015Z", "2024-W18-3 12:30", "2024-05-01", "2016-12-31T23:59:60z"]
    ),
    st.lists(
        st.tuples(st.integers(0, 30), st.sampled_from(["", *"0123456789-:.,TtWZz+ x\n\u0663\uff15/"])), max_size=3
    ),
)


@settings(max_examples=500, deadline=None)
@given(text=st.one_of(_NEAR_TEXT, st.text(max_size=40)))
def test_a_text_is_accepted_only_if_the_grammar_writes_it_and_refused_with_one_line_otherwise(text: str) -> None:
    got = verdict(text)
    if got.startswith("refused"):
        assert got.startswith("refused: timestamp ") and "\n" not in got
        return
    assert _GRAMMAR.fullmatch(text), f"{text!r} accepted as {got}"


def test_at_both_ends_of_the_range_every_shipped_zone_counts_on_the_day_its_offset_there_gives() -> None:
    # Near 0001-01-01 a zone keeps its first offset (local mean time), near 9999-12-31 its yearly rule's:
    # an epoch second an hour to a day either side of either end is that offset away from UTC, and it
    # counts if that local day is within 0001-01-01..9999-12-31, else it is refused as out of range.
    wrong = []
    for name in sorted(zones.names()):
        zone = zones.load(name)
        for edge, local_noon in ((YEAR_1, datetime(1, 1, 1, 12)), (YEAR_10000, datetime(9999, 12, 31, 12))):
            offset = zone.utcoffset(local_noon) // timedelta(seconds=1)
            for hours in (-23, -13, -1, 1, 13, 23):
                seconds = edge + hours * 3600
                local = seconds + offset
                expected = (
                    (date(1970, 1, 1) + timedelta(seconds=local)).isoformat() if YEAR_1 <= local < YEAR_10000 else None
                )
                got = verdict(seconds, name)
                if got != expected and not (expected is None and "is out of range" in got):
                    wrong.append(f"{seconds} in {name}: expected {expected}, got {got}")
    assert wrong == []


def test_the_parsers_call_nothing_whose_verdict_depends_on_the_python_version() -> None:
    # fromisoformat/strptime (grammar), fromtimestamp (range, rounding), isprintable and the like, and
    # the regular expressions' \d, \w, \s (Unicode tables) changed between versions: none is used.
    banned = {"fromisoformat", "strptime", "fromtimestamp", "utcfromtimestamp", "isprintable", "isdecimal", "isnumeric"}
    for module in ("timestamps.py", "messages.py"):
        tree = ast.parse((FUNCTIONS / module).read_text())
        used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        patterns = [
            arg.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            for arg in node.args
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
        ]
        assert patterns, module
        assert used & banned == set(), module
        assert [p for p in patterns if re.search(r"\\[dDwWsSb]", p)] == [], module
