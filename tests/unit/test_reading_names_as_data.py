"""Reading names are producer data. The message rules refuse a name that is markup, a terminal escape
or anything but ASCII letters, digits and ``_`` (messages.py), with a one-line reason that quotes it
clipped; and a name that reached a day item anyway (written by hand) is shown by ``sensor-digest
readings`` as text, never as markup (cli/readings.py on the command line's console). Engine: none."""

from __future__ import annotations

import io
import json
from decimal import Decimal

import pytest

from sensor_digest.errors import RejectedMessage
from sensor_digest.messages import read_pending
from sensor_digest.store import schema, tally
from sensor_digest_tools.cli import readings, render

HOSTILE_NAMES = [
    '<img src=x onerror="alert(1)">',
    "[bold red]hot[/bold red]",
    "[link=https://evil.example]t[/link]",
    "t\n",
    "t\u202e",
    "t\x1b[31m",
    "t\u0000",
    "__proto__",
    "temp\u00e9rature",
    "\uff54",  # a fullwidth t
    "t" * 10_000,
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_reading_name_rejects_its_report_with_a_one_line_clipped_reason(name: str) -> None:
    body = json.dumps({"sensor_id": 7, "timestamp": "2024-05-01T09:00:00Z", "readings": {name: 1}})

    with pytest.raises(RejectedMessage) as refused:
        read_pending(message_id="m", body=body, sent_timestamp="0")

    reason = refused.value.reason
    assert reason.startswith("readings name string ") and reason.endswith(", a letter first")
    assert reason.isascii() and reason.isprintable() and len(reason) < 160  # one line, the name JSON-quoted


MARKUP_NAME = "[bold red]hot[/bold red]"
ESCAPE_NAME = "t\x1b[31mred"


def hand_written_item() -> dict[str, object]:
    """A day item whose readings were written by hand under names the ingest would refuse."""
    stats = {"09": {"N": "3"}, schema.READING_SQUARES: {"N": "9"}}
    return {
        **schema.day_item(7, "2024-05-01", 1, {"09": 1}),
        schema.READINGS: {"M": {MARKUP_NAME: {"M": stats}, ESCAPE_NAME: {"M": stats}}},
        schema.READINGS_COVER: {"N": "1"},
    }


def shown(table: object) -> str:
    out = io.StringIO()
    render.console(file=out, width=200).print(table)
    return out.getvalue()


def test_the_readings_tables_show_a_name_written_by_hand_as_text() -> None:
    days, partial = readings.by_day(7, [hand_written_item()])
    hours = readings.statistics.hour_statistics(tally.readings_of_item(hand_written_item()))

    for text in (shown(readings.days_table("t", days, partial)), shown(readings.hours_table("t", hours))):
        assert MARKUP_NAME in text  # markup is shown as written, never applied
        assert "t\\x1b[31mred" in text and "\x1b" not in text  # a terminal escape is shown escaped


def test_the_tables_show_every_digit_of_an_exact_statistic() -> None:
    # 38 digits, as DynamoDB keeps them, and a sum of 24 of them: none rounded to Python's 28
    for text in ("99999999999999999999999999999999999998", "2399999999999999999999999999999999999952", "-0.000001"):
        assert readings.exact_text(Decimal(text)) == text
