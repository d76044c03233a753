"""The tables' layout, named once: attribute names, key builders, item mappers, table definitions.

Every other module (counting, summary, registry, the stream filter, the local engine, the
command line, the stack's ``infra/storage.py`` and the benchmark) reads names from here, so the
contract's item layout has one owner:

- digest table (``TABLE_NAME``): ``SensorId`` (N, partition) and ``Date`` (S, sort). A day item
  has ``Date = YYYY-MM-DD`` and ``DataCount``; the summary item of one calendar month has
  ``Date = SUMMARY#YYYY-MM`` and the map ``DailyCounts`` of that month's days (a write costs a
  unit per started KB of the whole item: a month stays under 1 KB, a year would be about 6);
  earlier versions wrote one item ``Date = SUMMARY`` (``LEGACY_SUMMARY_SORT_KEY``), which the
  rebuild command migrates; a sensor's profile has ``Date = PROFILE``;
- ledger (``LEDGER_TABLE_NAME``): ``pk`` (S, partition) and the TTL attribute ``ExpiresAt``.
  ``MSG#<sensor_id>#<event_id>`` marks a counted message; ``SERIAL#<serial>`` keeps a serial
  number unique.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Item = dict[str, Any]
"""An item (or a key) in DynamoDB's attribute-value form."""

# -- the digest table -------------------------------------------------------------------------

SENSOR_ID = "SensorId"
DATE = "Date"
DATA_COUNT = "DataCount"
# a day item counted from a FIFO queue (``QUEUE_TYPE=fifo``) keeps, per queue, the highest SQS
# sequence number of that queue applied to it: ``AppliedSequence#<queue ARN>`` (sequence numbers of
# two queues do not compare, and during a queue replacement both queues deliver)
APPLIED_SEQUENCE_PREFIX = "AppliedSequence#"
# earlier versions kept one pair: the highest number applied and the queue it belongs to; still read
APPLIED_SEQUENCE = "AppliedSequence"
SEQUENCE_SOURCE = "SequenceSource"
DAILY_COUNTS = "DailyCounts"
SUMMARY_PREFIX = "SUMMARY#"
LEGACY_SUMMARY_SORT_KEY = "SUMMARY"
PROFILE_SORT_KEY = "PROFILE"
# a profile's attributes
NAME = "Name"
SERIAL = "Serial"
TIME_ZONE = "TimeZone"
VERSION = "Version"

# -- the ledger -------------------------------------------------------------------------------

LEDGER_KEY = "pk"
EXPIRES_AT = "ExpiresAt"
MARKER_PREFIX = "MSG#"
SERIAL_PREFIX = "SERIAL#"
# what a marker remembers of its message, for people reading the ledger
MARKER_DAY = "Day"
MARKER_COUNT = "Count"

MAX_SEQUENCE_NUMBER = 2**128 - 1
SEQUENCE_DIGITS = len(str(MAX_SEQUENCE_NUMBER))  # 39
"""An SQS sequence number has up to 128 bits: more digits than a DynamoDB number keeps (38), so a
day item stores it as a string of fixed width, where string order is number order."""

# -- table definitions: (attribute, type, key role), as CloudFormation and CreateTable name them --

DIGEST_KEY_SCHEMA = ((SENSOR_ID, "N", "HASH"), (DATE, "S", "RANGE"))
LEDGER_KEY_SCHEMA = ((LEDGER_KEY, "S", "HASH"),)


# -- keys ---------------------------------------------------------------------------------------


def _digest_key(sensor_id: int, sort_key: str) -> Item:
    return {SENSOR_ID: {"N": str(sensor_id)}, DATE: {"S": sort_key}}


def day_key(sensor_id: int, day: str) -> Item:
    return _digest_key(sensor_id, day)


def month_of(day: str) -> str:
    """``YYYY-MM`` of a day ``YYYY-MM-DD``: which summary item holds it."""
    return day[:7]


def summary_key(sensor_id: int, month: str) -> Item:
    """The summary item of ``month`` (``YYYY-MM``): ``SUMMARY#YYYY-MM``."""
    return _digest_key(sensor_id, f"{SUMMARY_PREFIX}{month}")


def legacy_summary_key(sensor_id: int) -> Item:
    return _digest_key(sensor_id, LEGACY_SUMMARY_SORT_KEY)


def profile_key(sensor_id: int) -> Item:
    return _digest_key(sensor_id, PROFILE_SORT_KEY)


def marker_id(sensor_id: int, event_id: str) -> str:
    """The contract's marker key of one counted message: ``MSG#<sensor_id>#<event_id>``."""
    return f"{MARKER_PREFIX}{sensor_id}#{event_id}"


def ledger_key(key: str) -> Item:
    return {LEDGER_KEY: {"S": key}}


def sentinel_key(serial: str) -> Item:
    return ledger_key(f"{SERIAL_PREFIX}{serial}")


# -- items --------------------------------------------------------------------------------------


def day_item(sensor_id: int, day: str, count: int) -> Item:
    return {**day_key(sensor_id, day), DATA_COUNT: {"N": str(count)}}


def sequence_text(sequence: int) -> str:
    """A sequence number as stored: ``SEQUENCE_DIGITS`` digits, zero-padded (orders as it compares)."""
    if not 0 <= sequence <= MAX_SEQUENCE_NUMBER:
        raise ValueError(f"sequence number {sequence} is outside 0..2^128-1")
    return str(sequence).zfill(SEQUENCE_DIGITS)


def applied_sequence_name(source: str) -> str:
    """The day item's attribute that keeps the highest sequence number of queue ``source`` applied."""
    return APPLIED_SEQUENCE_PREFIX + source


def applied_sequence_of_item(item: Mapping[str, Any], source: str) -> int | None:
    """The highest sequence number of queue ``source`` applied to a day item; ``None`` when none
    was (no item, an item counted by the ledger, or one counted only from other queues). Reads the
    queue's own attribute and the single pair earlier versions wrote, and takes the higher."""
    found = [int(text) for text in (item.get(applied_sequence_name(source), {}).get("S"),) if text is not None]
    legacy = item.get(APPLIED_SEQUENCE, {}).get("S")
    if legacy is not None and item.get(SEQUENCE_SOURCE, {}).get("S", "") == source:
        found.append(int(legacy))
    return max(found, default=None)


def summary_item(sensor_id: int, month: str, counts: Mapping[str, int]) -> Item:
    """A month's whole summary item, ``DailyCounts`` holding ``counts`` (day -> count)."""
    daily = {day: {"N": str(n)} for day, n in counts.items()}
    return {**summary_key(sensor_id, month), DAILY_COUNTS: {"M": daily}}


def is_summary(item: Mapping[str, Any]) -> bool:
    """A month's summary item (``SUMMARY#YYYY-MM``); the legacy single item is not one."""
    return str(item.get(DATE, {}).get("S", "")).startswith(SUMMARY_PREFIX)


def is_legacy_summary(item: Mapping[str, Any]) -> bool:
    return bool(item.get(DATE, {}).get("S") == LEGACY_SUMMARY_SORT_KEY)


def summary_month_of_item(item: Mapping[str, Any]) -> str:
    return str(item[DATE]["S"]).removeprefix(SUMMARY_PREFIX)


def day_count_of_item(item: Mapping[str, Any]) -> tuple[int, str, int] | None:
    """``(sensor, day, count)`` of a day item; ``None`` for any other item."""
    if DATA_COUNT not in item:
        return None
    return int(item[SENSOR_ID]["N"]), str(item[DATE]["S"]), int(item[DATA_COUNT]["N"])


def daily_counts_of_item(item: Mapping[str, Any]) -> dict[str, int] | None:
    """A summary item's ``DailyCounts`` by day; ``None`` when the item has no map."""
    if DAILY_COUNTS not in item:
        return None
    return {day: int(value["N"]) for day, value in sorted((item[DAILY_COUNTS].get("M") or {}).items())}


def sensor_of_item(item: Mapping[str, Any]) -> int:
    return int(item[SENSOR_ID]["N"])


def create_table_params(table_name: str, schema: tuple[tuple[str, str, str], ...]) -> dict[str, Any]:
    """``CreateTable`` parameters of a table with this key schema (on demand, as the stack makes it)."""
    return {
        "TableName": table_name,
        "AttributeDefinitions": [{"AttributeName": name, "AttributeType": kind} for name, kind, _ in schema],
        "KeySchema": [{"AttributeName": name, "KeyType": role} for name, _, role in schema],
        "BillingMode": "PAY_PER_REQUEST",
    }
