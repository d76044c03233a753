"""An imported object's bytes as rows (``history/reading.py``): one physical line a row, whatever the
line holds; a CSV line a record of its own, so a quote left open is an error of that line and never
swallows the lines after it. No engine."""

from __future__ import annotations

import json
from collections.abc import Iterator
from zoneinfo import ZoneInfo

import pytest

from sensor_digest.errors import RejectedMessage, UnreadableInput
from sensor_digest.history.reading import MAX_LINE_BYTES, lines_of, rows_of
from sensor_digest.history.rows import CSV, JSONL, Row, Unreadable, csv_body, pending_of

HEADER = b"sensor_id,timestamp,count\n"


def rows(data: bytes, fmt: str, block: int = 7) -> list[Row]:
    def blocks() -> Iterator[bytes]:  # small blocks: lines cut anywhere
        for start in range(0, len(data), block):
            yield data[start : start + block]

    return list(rows_of(lines_of(blocks()), fmt))


def read(row: Row) -> str:
    return f"bad: {row.value.reason}" if isinstance(row.value, Unreadable) else "ok"


def test_a_csv_quote_left_open_is_an_error_of_its_line_and_the_lines_after_it_are_rows() -> None:
    data = HEADER + b'1,"2024-01-01T00:00:00Z,1\n' + b"".join(b"2,2024-01-01T0%d:00:00Z,1\n" % h for h in range(5))

    found = rows(data, CSV)

    assert [r.line for r in found] == [2, 3, 4, 5, 6, 7]
    assert "quote" in read(found[0]) and "line" in read(found[0])
    assert [read(r) for r in found[1:]] == ["ok"] * 5
    assert found[1].value == {"sensor_id": "2", "timestamp": "2024-01-01T00:00:00Z", "count": "1"}


@pytest.mark.parametrize(
    ("line", "verdict"),
    [
        (b'1,2024-01-01T00:00:00Z,"1\n', "bad"),  # a quote left open at the end
        (b'1,2024-01-01T00:00:00Z,1"\n', "bad"),  # a stray quote in a cell
        (b'1,"2024"-01-01,1\n', "bad"),  # text after a closing quote
        (b"1,2024-01-01T00:00:00Z,1\r\n", "ok"),  # CRLF
        (b'1,"2024-01-01T00:00:00Z","1"\n', "ok"),  # quoted cells
        (b"1,2024-01-01T00:00:00Z,1\rx,y,z\n", "bad"),  # a lone CR inside the line
        (b"1,2024-01-01T00:00:00Z,\x001\n", "ok"),  # a NUL is a character of a cell: the message rules judge it
        (b"1,2024-01-01T00:00:00Z\n", "bad"),  # fewer cells than the header
        (b"1,2024-\xff01-01,1\n", "bad"),  # not UTF-8
    ],
)
def test_each_csv_line_is_read_alone(line: bytes, verdict: str) -> None:
    found = rows(HEADER + line + b"2,2024-01-01T00:00:00Z,1\n", CSV)

    assert [r.line for r in found] == [2, 3]
    assert read(found[0]).startswith(verdict) and read(found[1]) == "ok"


def test_a_byte_order_mark_and_empty_lines_are_no_rows() -> None:
    data = b"\xef\xbb\xbf" + HEADER + b"\n1,2024-01-01T00:00:00Z,1\r\n\r\n\n2,2024-01-01T00:00:00Z,1"

    found = rows(data, CSV)

    assert [(r.line, r.position, read(r)) for r in found] == [(3, 0, "ok"), (6, 1, "ok")]


def test_a_line_longer_than_the_limit_is_one_rejected_row_and_the_next_is_read() -> None:
    huge = b'1,"' + b"x" * (MAX_LINE_BYTES + 5) + b"\n"

    for fmt, head in ((CSV, HEADER), (JSONL, b"")):
        found = rows(head + huge + b'{"a": 1}\n' if fmt == JSONL else head + huge + b"2,2024-01-01,1\n", fmt, 4096)
        assert [read(r).startswith("bad: the line is longer") for r in found] == [True, False]


def test_json_lines_are_one_row_a_line_whatever_they_hold() -> None:
    data = b'{"a": "\n{"b": 1}\r\n\n   \n\x00\n\xff\n{"c": 2}'

    found = rows(data, JSONL)

    assert [r.line for r in found] == [1, 2, 5, 6, 7]
    assert [read(r) for r in found] == ["ok", "ok", "ok", "bad: the line is not UTF-8 text", "ok"]
    assert found[1].value == '{"b": 1}'


def test_the_csv_header_names_its_columns_in_any_case_and_a_readings_name_as_written() -> None:
    data = b"Sensor_ID, TIMESTAMP ,Count,Event_ID,Readings.Temp_C,Other\n7,2024-01-01T00:00:00Z,2,a,21.5,x\n"

    (row,) = rows(data, CSV)

    body = json.loads(csv_body(row.value))
    assert body == {
        "sensor_id": 7,
        "timestamp": "2024-01-01T00:00:00Z",
        "count": 2,
        "event_id": "a",
        "readings": {"Temp_C": 21.5},
    }


@pytest.mark.parametrize("header", [b"sensor_id,SENSOR_ID,timestamp\n", b"Sensor_Id,time\n"])
def test_a_csv_header_naming_a_column_twice_or_lacking_one_refuses_the_object_naming_it(header: bytes) -> None:
    with pytest.raises(UnreadableInput, match=r"sensor_id|timestamp"):
        rows(header + b"1,2\n", CSV)


@pytest.mark.parametrize(
    ("fmt", "data", "verdict"),
    [
        (CSV, b"sensor_id,timestamp\n1,20240301\n", "not the date 2024-03-01"),
        (CSV, b"sensor_id,timestamp\n1,2024\n", "not the year 2024"),
        (JSONL, b'{"sensor_id": 1, "timestamp": 20240301}\n', "not the date 2024-03-01"),
        (JSONL, b'{"sensor_id": 1, "timestamp": 2024.5}\n', "more likely a year or a date"),
        (JSONL, b'{"sensor_id": 1, "timestamp": "20240301"}\n', "2024-03-01"),  # text: an ISO basic date
        (CSV, b"sensor_id,timestamp\n1,1709337600\n", "2024-03-02"),  # epoch seconds
    ],
)
def test_a_timestamp_written_as_a_small_number_is_refused_as_send_refuses_it(
    fmt: str, data: bytes, verdict: str
) -> None:
    (row,) = rows(data, fmt)

    try:
        said = pending_of(row, fmt).in_zone(ZoneInfo("UTC")).day
    except RejectedMessage as refused:
        said = refused.reason
        assert said.startswith("timestamp ") and "as epoch seconds it is 1970-" in said
    assert verdict in said
