"""An imported row, read by the message rules of the contract (``messages.py``): a JSON line is a sensor
message as it is; a CSV record is made one (docs/import.md, "Formats").

CSV (RFC 4180, UTF-8): a header names the columns ``sensor_id`` and ``timestamp`` (both required),
and optionally ``count``, ``event_id`` and ``readings.<name>``; other columns are ignored, as unknown
fields of a message are. An empty cell is an absent field. A cell of ``sensor_id``, ``count``,
``timestamp`` or a reading that is written as a JSON number is that number (``timestamp``: epoch
seconds), any other cell is text, so a row gets the verdict and the reason its message would get.

Every row needs a ``timestamp``: an imported row has no send time to be dated by. One written as a
number closer to 0 than ``timestamps.EPOCH_FLOOR`` (``20240501``, a date as digits) is refused, as
``sensor-digest send`` refuses it, rather than dated in 1970.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sensor_digest import timestamps
from sensor_digest.errors import RejectedMessage, UnreadableInput
from sensor_digest.messages import JsonNumber, PendingMessage, read_pending

JSONL = "jsonl"
CSV = "csv"
FORMATS = (JSONL, CSV)

REQUIRED_COLUMNS = ("sensor_id", "timestamp")
NUMBER_COLUMNS = ("sensor_id", "count", "timestamp")
TEXT_COLUMNS = ("event_id",)
READINGS_PREFIX = "readings."
JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
"""A number as JSON writes it (ASCII digits only)."""
SHOWN_ROW_CHARS = 1000
"""How much of a rejected row the error report repeats."""
NO_TIMESTAMP = "timestamp is required: an imported row has no send time to be dated by"


@dataclass(frozen=True)
class Row:
    """One row of an imported object: its ``position`` among the object's rows (0 for the first: what
    a row without ``event_id`` is known by), its ``line`` for people, and its value as read (a JSON line's
    text, a JSON value Step Functions parsed, or a CSV record's cells by column)."""

    position: int
    line: int
    value: Any


@dataclass(frozen=True)
class Unreadable:
    """A row that could not be read as text or as a record: why, and what of it can be shown."""

    reason: str
    text: str = ""


@dataclass(frozen=True)
class Rejected:
    """A row the import refused: its line, the reason, and the row as read (clipped)."""

    line: int
    reason: str
    text: str

    def entry(self) -> dict[str, Any]:
        """The row's line in the error report (JSON lines)."""
        return {"line": self.line, "reason": self.reason, "row": self.text}


def column_name(written: str) -> str:
    """A header's column as the import reads it: the names it knows (``sensor_id``, ``timestamp``,
    ``count``, ``event_id``, the ``readings.`` prefix) in any case and without surrounding spaces; a
    reading's own name as written (``readings.Temp_C`` is the reading ``Temp_C``: names are case
    sensitive, as in a message)."""
    name = written.strip()
    lowered = name.lower()
    if lowered in NUMBER_COLUMNS or lowered in TEXT_COLUMNS:
        return lowered
    if lowered.startswith(READINGS_PREFIX):
        return READINGS_PREFIX + name[len(READINGS_PREFIX) :]
    return name


def check_header(columns: Sequence[str]) -> list[str]:
    """The header of a CSV object, checked (its names by ``column_name``): ``UnreadableInput`` when it
    lacks a required column or names one twice (the whole object is refused: no row of it can be read)."""
    names = [column_name(c) for c in columns]
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise UnreadableInput(
            f"the CSV header must name {' and '.join(REQUIRED_COLUMNS)} (it lacks {', '.join(missing)}); "
            f"it names {', '.join(repr(n) for n in names[:12]) or 'nothing'}"
        )
    twice = sorted({n for n in names if names.count(n) > 1 and _meant(n)})
    if twice:
        raise UnreadableInput(f"the CSV header names {', '.join(repr(n) for n in twice)} twice")
    return names


def _meant(column: str) -> bool:
    """Whether a column is read (the others are ignored, as a message's unknown fields)."""
    return column in NUMBER_COLUMNS or column in TEXT_COLUMNS or column.startswith(READINGS_PREFIX)


def _cell(column: str, text: str) -> str:
    """A cell as JSON text: a number where the column takes one and the cell is written as one."""
    if column in TEXT_COLUMNS:
        return json.dumps(text)
    if JSON_NUMBER.fullmatch(text):
        return text
    return json.dumps(text)


def csv_body(cells: Mapping[str, Any]) -> str:
    """A CSV record (column -> cell text) as the JSON body of the message it stands for."""
    fields: list[str] = []
    readings: list[str] = []
    for column, value in cells.items():
        name = column_name(str(column))
        if value is None or value == "" or not _meant(name):
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        if name.startswith(READINGS_PREFIX):
            readings.append(f"{json.dumps(name[len(READINGS_PREFIX) :])}:{_cell(name, text)}")
        else:
            fields.append(f"{json.dumps(name)}:{_cell(name, text)}")
    if readings:
        fields.append('"readings":{' + ",".join(readings) + "}")
    return "{" + ",".join(fields) + "}"


def body_of(row: Row, fmt: str) -> str:
    """The JSON body of a row: a JSON line's text, a parsed JSON value written again, a CSV record's
    cells made a message. ``RejectedMessage`` for a value no body can be made of."""
    value = row.value
    if isinstance(value, Unreadable):
        raise RejectedMessage(value.reason)
    if fmt == CSV:
        if not isinstance(value, Mapping):
            raise RejectedMessage("the CSV row is not a record of the header's columns")
        return csv_body(value)
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise RejectedMessage(f"the row is no JSON value: {exc}") from None


def pending_of(row: Row, fmt: str) -> PendingMessage:
    """The row read by the message rules, up to its day (which needs the sensor's zone);
    ``RejectedMessage`` with the reason a person can act on."""
    body = body_of(row, fmt)
    pending = read_pending(message_id=f"row-{row.position}", body=body, sent_timestamp=None)
    if "timestamp" not in pending.fields:
        raise RejectedMessage(NO_TIMESTAMP)
    stamp = pending.fields["timestamp"]
    if isinstance(stamp, int | float) and not isinstance(stamp, bool):
        written = stamp.text if isinstance(stamp, JsonNumber) else str(stamp)
        refused = timestamps.small_epoch(written, stamp) if math.isfinite(stamp) else None
        if refused is not None:
            raise RejectedMessage(refused)
    return pending


def shown(row: Row) -> str:
    """The row as the error report repeats it: its text, clipped to ``SHOWN_ROW_CHARS``."""
    value = row.value
    if isinstance(value, Unreadable):
        text = value.text
    elif isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(value)
    text = text.rstrip("\r\n")
    return text if len(text) <= SHOWN_ROW_CHARS else text[: SHOWN_ROW_CHARS - 3] + "..."
