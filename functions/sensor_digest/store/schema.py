"""The tables' layout, named once: attribute names, key builders, item mappers, table definitions.

Every other module (counting, summary, registry, the stream filter, the local engine, the
command line, the constructs' ``digest_tables.py`` and the benchmark) reads names from here, so the
contract's item layout has one owner:

- digest table (``TABLE_NAME``): ``SensorId`` (N, partition) and ``Date`` (S, sort). A day item
  has ``Date = YYYY-MM-DD`` and ``DataCount``; the summary item of one calendar month has
  ``Date = SUMMARY#YYYY-MM`` and the map ``DailyCounts`` of that month's days (a write costs a
  unit per started KB of the whole item: a month stays under 1 KB, a year would be about 6);
  earlier versions wrote one item ``Date = SUMMARY`` (``LEGACY_SUMMARY_SORT_KEY``), which the
  rebuild command migrates; a sensor's profile has ``Date = PROFILE`` and ``ProfileList``, the
  partition key of the sparse index ``Profiles`` (only profiles carry it, so the index lists the
  registered sensors by id with one ``Query`` and no ``Scan``);
- ledger (``LEDGER_TABLE_NAME``): ``pk`` (S, partition) and the TTL attribute ``ExpiresAt``.
  ``MSG#<sensor_id>#<event_id>`` marks a counted message (the per-message ledger);
  ``IDS#<sensor_id>#<day>#<page>`` holds a page of a sensor-day's identities (the compact ledger,
  whose first page is the day item's ``Ids``); ``FIFO#<sensor_id>#<messageId>`` is ordered mode's;
  ``SERIAL#<serial>`` keeps a serial number unique.

The tables' definitions (key schemas, ``CreateTable`` parameters) are in ``tables.py``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from sensor_digest.errors import MalformedItem

Item = dict[str, Any]
"""An item (or a key) in DynamoDB's attribute-value form."""

# -- the digest table -------------------------------------------------------------------------

SENSOR_ID = "SensorId"
DATE = "Date"
DATA_COUNT = "DataCount"
# a day item's counts per hour of the sensor's own day: {"HH": N}, written in the same write as
# DataCount (absent on day items written before it existed); see store/day_writes.py
HOUR_COUNTS = "HourCounts"
# a day item counted from a FIFO queue (``QUEUE_TYPE=fifo``) keeps, per queue, the highest SQS
# sequence number of that queue applied to it: ``AppliedSequence#<queue ARN>`` (sequence numbers of
# two queues do not compare, and during a queue replacement both queues deliver)
APPLIED_SEQUENCE_PREFIX = "AppliedSequence#"
# ordered mode's first release kept one pair: the highest number applied and the queue it belongs to;
# read only by ``sensor-digest migrate sequences``, which moves it into the queue's own attribute
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
SILENCE_HOURS = "SilenceHours"  # optional: the sensor's own silence threshold, in hours (silence/)
# optional: when the sensor was registered, ``YYYY-MM-DDTHH:MM:SSZ`` (S); a never-reported sensor's
# silence counts from it (silence/); profiles registered before it was kept have none
REGISTERED_AT = "RegisteredAt"
# the sparse global secondary index of profiles: partition key ``ProfileList`` (only profile items
# carry it, always ``PROFILE_LIST``), sort key ``SensorId``; it projects the name and time zone
PROFILE_LIST = "ProfileList"
PROFILE_LIST_VALUE = "PROFILE"
PROFILE_INDEX = "Profiles"
PROFILE_INDEX_KEY_SCHEMA = ((PROFILE_LIST, "S", "HASH"), (SENSOR_ID, "N", "RANGE"))
PROFILE_INDEX_PROJECTION = (NAME, TIME_ZONE)

# -- the ledger -------------------------------------------------------------------------------

LEDGER_KEY = "pk"
EXPIRES_AT = "ExpiresAt"
MARKER_PREFIX = "MSG#"
TAIL_MARKER_PREFIX = "FIFO#"  # ordered mode: a counted message made a batch item failure behind a failed one
SERIAL_PREFIX = "SERIAL#"
# what a marker remembers of its message, for people reading the ledger
MARKER_DAY = "Day"
MARKER_COUNT = "Count"
# the compact ledger (``LEDGER_MODE=compact``, store/identities.py): a counted report's identity is
# a hash in a binary set ``Ids``, first in its day item (page 0), then in ledger page items
# ``IDS#<sensor_id>#<day>#<page>`` (pages 1, 2, ...); ``IdPage`` on the day item names the page
# now being filled (0: the day item itself) and marks a day item the compact ledger created
IDS = "Ids"
ID_PAGE = "IdPage"
ID_PAGE_PREFIX = "IDS#"
# a day item's readings' statistics (store/tally.py, docs/readings.md): per reading name a map of
# each hour's statistics by ``HH`` (its one value, or [count, sum, minimum, maximum]) and the day's sum
# of squares (``q``); absent until the day's first report with readings. ``ReadingsCover`` is the part
# of ``DataCount`` counted by writers that keep readings (every write of this release adds to it,
# readings or not): less than ``DataCount``, the statistics hold only some of the day's reports
# (counted before the upgrade, or by a release rolled back to)
READINGS = "Readings"
READING_SQUARES = "q"
READINGS_COVER = "ReadingsCover"
# how many times the day item's Readings were removed by hand (the repair of a map written by hand adds
# 1): a container's knowledge of the statistics from before a repair is no longer true, and every
# write of readings is conditioned on the count it knows (absent: none)
READINGS_REPAIRS = "ReadingsRepairs"
# the part of a compact day item's ``DataCount`` whose reports' hashes the day keeps: added in the same
# write as the count by every writer that keeps hashes. Less than ``DataCount`` (or absent beside a
# count) means another writer counted on the day without a hash (a release before the compact ledger,
# or before this attribute; ordered mode; at-least-once), so a report's hash alone no longer proves
# it new there: from then on its marker is checked too (store/day_view.py)
HASHED_COUNT = "HashedCount"
# how many pages a compact day moved past because it found them holding identities already (its day
# item was put back, deleted or restored, while its pages stayed): absent until it does
SKIPPED_PAGES = "SkippedPages"
# the history import (docs/import.md, store/import_writes.py): each imported row's
# identity (``identities.import_event_hash`` or ``import_row_hash``, 8 bytes) is kept for good on the
# day it counted on, in the same write as its count: in the day item's binary set ``ImportIds`` (up to
# ``IMPORT_DAY_IDS``), else in ledger pages ``IMPIDS#<sensor_id>#<day>#<page id hex>`` (their ``Ids``)
# that the day item names in ``ImportPages``. ``ImportSeq`` counts the import's writes of the day: a
# write rests on it being what the writer read. On a day of the compact ledger the import adds its
# count to ``HashedCount`` too: an imported row is known by its identity as a live report by its hash.
# ``IMPZONE#<sensor_id>`` is the zone a sensor's imported rows are dated in (its ``Zone``: that of its
# first import). ``IMPORT#<object id hex>`` is an object's import record (what it counted, and when).
# No ledger item of the import has ``ExpiresAt``
IMPORT_IDS = "ImportIds"
IMPORT_PAGES = "ImportPages"
IMPORT_SEQ = "ImportSeq"
IMPORT_PAGE_PREFIX = "IMPIDS#"
IMPORT_ZONE_PREFIX = "IMPZONE#"
IMPORT_ZONE = "Zone"
IMPORT_RECORD_PREFIX = "IMPORT#"
# an import record's attributes
RECORD_SOURCE = "Source"
RECORD_STATE = "State"  # "started" or "finished"
RECORD_FIGURES = "Figures"  # a map of the import's figures (rows, counted, duplicates, rejected, ...)
RECORD_STARTED = "StartedAt"
RECORD_FINISHED = "FinishedAt"

MAX_SEQUENCE_NUMBER = 2**128 - 1
SEQUENCE_DIGITS = len(str(MAX_SEQUENCE_NUMBER))  # 39
"""An SQS sequence number has up to 128 bits: more digits than a DynamoDB number keeps (38), so a
day item stores it as a string of fixed width, where string order is number order."""

# -- alarms (alarms/): one item per alarm in the digest table, its log beside it; the rules in the ledger --

ALARM_PREFIX = "ALARM#"  # Date = ALARM#<rule>: the alarm of that rule for the item's sensor
ALARM_LOG_PREFIX = "ALARMLOG#"  # Date = ALARMLOG#<rule>#<version, 12 digits>: one transition, kept
ALARM_STATE = "AlarmState"
ALERTING = "Alerting"  # the state while it is not NORMAL: the partition key of the sparse ``Alarms`` index
ALARM_INDEX = "Alarms"
ALARM_INDEX_KEY_SCHEMA = ((ALERTING, "S", "HASH"), (SENSOR_ID, "N", "RANGE"))
READING = "Reading"
SEVERITY = "Severity"
SEEN_AT = "SeenAt"
SEEN_ID = "SeenId"
PENDING_SINCE = "PendingSince"
PENDING_COUNT = "PendingCount"
SNOOZED_UNTIL = "SnoozedUntil"
STATE_SINCE = "StateSince"
MADE = "Made"  # the transitions this version's write made (the outbox the announcer reads)
ANNOUNCE = "Announce"  # present (the version) when ``Made`` holds transitions: the stream filter's
TRANSITION = "Transition"  # a log item's transition
RULES_KEY = "ALARM-RULES"  # ledger pk: the rule set (``Rules``, JSON) and its ``Version``
RULES_VERSION_KEY = "ALARM-RULES#VERSION"  # ledger pk: the version alone (a container's cheap check)
RULES = "Rules"
CHANGED_BY = "ChangedBy"
CHANGED_AT = "ChangedAt"
LOG_VERSION_DIGITS = 12


def alarm_key(sensor_id: int | str, rule: str) -> Item:
    return _digest_key(sensor_id, ALARM_PREFIX + rule)


def alarm_log_key(sensor_id: int | str, rule: str, version: int, index: int = 0) -> Item:
    """The log item of the ``index``-th transition of the alarm's ``version``: sorted by both."""
    return _digest_key(sensor_id, f"{ALARM_LOG_PREFIX}{rule}#{version:0{LOG_VERSION_DIGITS}d}#{index:05d}")


# -- table definitions: (attribute, type, key role), as CloudFormation and CreateTable name them --

DIGEST_KEY_SCHEMA = ((SENSOR_ID, "N", "HASH"), (DATE, "S", "RANGE"))
LEDGER_KEY_SCHEMA = ((LEDGER_KEY, "S", "HASH"),)


# -- keys ---------------------------------------------------------------------------------------


def _digest_key(sensor_id: int | str, sort_key: str) -> Item:
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


def profile_key(sensor_id: int | str) -> Item:
    return _digest_key(sensor_id, PROFILE_SORT_KEY)


def profile_index_key(sensor_id: int | str) -> Item:
    """The key of a profile's entry in the ``Profiles`` index (a ``Query`` there starts after it); a
    ``SensorId`` that is no sensor id (a number as text) is keyed as DynamoDB keeps it."""
    return {**profile_key(sensor_id), PROFILE_LIST: {"S": PROFILE_LIST_VALUE}}


def marker_id(sensor_id: int, event_id: str) -> str:
    """The contract's marker key of one counted message: ``MSG#<sensor_id>#<event_id>``."""
    return f"{MARKER_PREFIX}{sensor_id}#{event_id}"


def tail_marker_id(sensor_id: int, origin_id: str) -> str:
    """Ordered mode's marker of a counted message that was listed (to keep its group's order) and
    so may reach the dead-letter queue: ``FIFO#<sensor_id>#<its original messageId>``."""
    return f"{TAIL_MARKER_PREFIX}{sensor_id}#{origin_id}"


def id_page_key(sensor_id: int, day: str, page: int) -> Item:
    """The ledger item of page ``page`` (1, 2, ...) of a sensor-day's identities."""
    return ledger_key(f"{ID_PAGE_PREFIX}{sensor_id}#{day}#{page}")


def ledger_key(key: str) -> Item:
    return {LEDGER_KEY: {"S": key}}


def sentinel_key(serial: str) -> Item:
    return ledger_key(f"{SERIAL_PREFIX}{serial}")


def import_page_key(sensor_id: int, day: str, page: bytes) -> Item:
    """The ledger item of a page of a sensor-day's imported identities: ``IMPIDS#<sensor_id>#<day>#<hex>``."""
    return ledger_key(f"{IMPORT_PAGE_PREFIX}{sensor_id}#{day}#{page.hex()}")


def import_zone_key(sensor_id: int) -> Item:
    """The ledger item of the zone a sensor's imported rows are dated in: ``IMPZONE#<sensor_id>``."""
    return ledger_key(f"{IMPORT_ZONE_PREFIX}{sensor_id}")


def import_record_key(object_id: bytes) -> Item:
    """The ledger item of an imported object's record: ``IMPORT#<object id hex>``."""
    return ledger_key(f"{IMPORT_RECORD_PREFIX}{object_id.hex()}")


# -- items --------------------------------------------------------------------------------------


def day_item(sensor_id: int, day: str, count: int, hours: Mapping[str, int] | None = None) -> Item:
    """A new day item: its count and, when given, its ``HourCounts`` (summing to ``count``)."""
    item: Item = {**day_key(sensor_id, day), DATA_COUNT: {"N": str(count)}}
    if hours is not None:
        item[HOUR_COUNTS] = hour_counts_value(hours)
    return item


def hour_counts_value(hours: Mapping[str, int]) -> dict[str, Any]:
    """``HourCounts`` as an attribute value: ``{"M": {"HH": {"N": ...}}}``."""
    return {"M": {hour: {"N": str(n)} for hour, n in sorted(hours.items())}}


def is_hour(key: str) -> bool:
    """Whether ``key`` names an hour of a day, ``00`` to ``23``."""
    return len(key) == 2 and key.isascii() and key.isdigit() and int(key) < 24


def hour_counts_of_item(item: Mapping[str, Any]) -> dict[str, int] | None:
    """A day item's ``HourCounts`` by hour; ``None`` when it has none (written before hours were
    kept); ``MalformedItem`` when it is no map, or an element is no hour ``00``-``23`` of a whole
    number of at least 0 (a map written by hand)."""
    if HOUR_COUNTS not in item:
        return None
    elements = attribute_of(item, HOUR_COUNTS, "M")
    try:
        hours = {hour: number_of(elements, hour, within=item) for hour in sorted(elements)}
    except MalformedItem as bad:  # an element's fault is the map's
        raise MalformedItem(str(bad), HOUR_COUNTS) from None
    for hour, count in hours.items():
        if not is_hour(hour) or count < 0:
            raise MalformedItem(
                f"{describe(item)}: {HOUR_COUNTS} element {hour!r}: {count} is no count of an hour 00-23", HOUR_COUNTS
            )
    return hours


def decimal_of(item: Mapping[str, Any], name: str, *, within: Mapping[str, Any] | None = None) -> Decimal:
    """A number attribute of an item (or of a map ``within`` it), exactly (``MalformedItem`` otherwise)."""
    text = attribute_of(item, name, "N", within=within)
    try:
        value = Decimal(text)
    except (InvalidOperation, TypeError, ValueError):
        value = Decimal("NaN")
    if not value.is_finite():
        raise MalformedItem(
            f"{describe(within if within is not None else item)}: {name} {text!r} is not a number", name
        )
    return value


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
    was (no item, an item counted by the ledger, or one counted only from other queues)."""
    text = item.get(applied_sequence_name(source), {}).get("S")
    return None if text is None else int(text)


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
    return text_of(item, DATE).removeprefix(SUMMARY_PREFIX)


def day_count_of_item(item: Mapping[str, Any]) -> tuple[int, str, int] | None:
    """``(sensor, day, count)`` of a day item; ``None`` for any other item (``MalformedItem`` for a
    day item whose count is not an integer)."""
    if DATA_COUNT not in item:
        return None
    count = number_of(item, DATA_COUNT)
    if count < 0:
        raise MalformedItem(f"{describe(item)}: {DATA_COUNT} {count} is negative", DATA_COUNT)
    return sensor_of_item(item), text_of(item, DATE), count


ITEM_SIZE_LIMIT = 400 * 1024
"""DynamoDB's largest item, in bytes."""
NEAR_ITEM_SIZE_LIMIT = ITEM_SIZE_LIMIT - 8 * 1024
"""A day item this large has no room left for a write's growth (its identities, hours, a marker's
name): a write that would pass the limit is refused, whatever it adds."""


DYNAMODB_DIGITS = 38
"""DynamoDB keeps a number's 38 most significant digits: an ``ADD`` whose result needs more is refused."""


def exact_in_dynamodb(number: int) -> bool:
    """Whether DynamoDB can hold ``number`` exactly: at most 38 significant digits."""
    return len(str(abs(number)).rstrip("0")) <= DYNAMODB_DIGITS


def fits_dynamodb(number: Decimal) -> bool:
    """Whether DynamoDB can hold ``number`` exactly: at most 38 significant digits."""
    return len(number.normalize().as_tuple().digits) <= DYNAMODB_DIGITS


def check_day_item(item: Mapping[str, Any], size: int, adding: int = 1) -> None:
    """``MalformedItem`` naming the first attribute of a day item (``size``: its bytes, as DynamoDB
    counts them) that a counting write of ``adding`` reports cannot add to: ``DataCount``, ``HashedCount``
    or ``IdPage`` that is no whole number of at least 0, ``Ids`` that is no binary set, ``HourCounts`` that
    is no map of counts; ``DataCount``, ``HashedCount`` or an ``HourCounts`` element whose sum with
    ``adding`` needs more than DynamoDB's 38 digits; or the item as a whole, when it is too near
    DynamoDB's 400 KB to grow."""
    for name in (DATA_COUNT, HASHED_COUNT, ID_PAGE, SKIPPED_PAGES, READINGS_COVER):
        if name in item and number_of(item, name) < 0:
            raise MalformedItem(f"{describe(item)}: {name} {number_of(item, name)} is negative", name)
    if IDS in item:
        attribute_of(item, IDS, "BS")
    counts = [(name, name, number_of(item, name)) for name in (DATA_COUNT, HASHED_COUNT) if name in item]
    hours = hour_counts_of_item(item) or {}
    counts += [(HOUR_COUNTS, f"{HOUR_COUNTS} element {hour!r}", n) for hour, n in hours.items()]
    for name, what, count in counts:
        if not exact_in_dynamodb(count + adding):
            raise MalformedItem(
                f"{describe(item)}: {what} {count} plus {adding} needs more than DynamoDB's {DYNAMODB_DIGITS} digits",
                name,
            )
    if size >= NEAR_ITEM_SIZE_LIMIT:
        raise MalformedItem(
            f"{describe(item)}: {size:,} bytes, too near DynamoDB's {ITEM_SIZE_LIMIT:,} to grow "
            f"(its attributes: {', '.join(sorted(item))})"
        )


def daily_counts_of_item(item: Mapping[str, Any]) -> dict[str, int] | None:
    """A summary item's ``DailyCounts`` by day; ``None`` when the item has no map (``MalformedItem``
    when an element is not an integer)."""
    if DAILY_COUNTS not in item:
        return None
    elements = attribute_of(item, DAILY_COUNTS, "M")
    return {day: number_of(elements, day, within=item) for day in sorted(elements)}


def daily_counts_as_read(item: Mapping[str, Any]) -> dict[str, int | None] | None:
    """A summary item's ``DailyCounts`` as stored, every key, an element that is not an integer as
    ``None`` (for the repair, which must see what is wrong); ``{}`` when the item has no map
    attribute, ``None`` when it has one that is no map."""
    if DAILY_COUNTS not in item:
        return {}
    stored = item.get(DAILY_COUNTS)
    elements = stored.get("M") if isinstance(stored, Mapping) else None
    out: dict[str, int | None] = {}
    if not isinstance(elements, Mapping):
        return None
    for day in sorted(elements):
        try:
            out[day] = number_of(elements, day, within=item)
        except MalformedItem:
            out[day] = None
    return out


def daily_count_of_item(item: Mapping[str, Any], day: str) -> int | None:
    """One day's element of a summary item's ``DailyCounts``; ``None`` when it has none."""
    elements = attribute_of(item, DAILY_COUNTS, "M")
    return None if day not in elements else number_of(elements, day, within=item)


def sensor_of_item(item: Mapping[str, Any]) -> int:
    return number_of(item, SENSOR_ID)


# -- reading attribute values: a value without the contract's shape is a MalformedItem, named ---


def describe(item: Mapping[str, Any]) -> str:
    """An item named by its keys, as a person reads it."""
    keys = []
    for name in (SENSOR_ID, DATE, LEDGER_KEY):
        value = item.get(name)
        if isinstance(value, Mapping) and value:
            keys.append(f"{name} {next(iter(value.values()))!r}")
    return f"item {', '.join(keys)}" if keys else "an item without its keys"


def attribute_of(item: Mapping[str, Any], name: str, kind: str, *, within: Mapping[str, Any] | None = None) -> Any:
    value = item.get(name)
    if not isinstance(value, Mapping) or kind not in value:
        what = "missing" if value is None else f"not of type {kind}"
        raise MalformedItem(f"{describe(within if within is not None else item)}: {name} is {what}", name)
    return value[kind]


def text_of(item: Mapping[str, Any], name: str) -> str:
    """A string attribute of an item (``MalformedItem`` when it is missing or not a string)."""
    return str(attribute_of(item, name, "S"))


def number_of(item: Mapping[str, Any], name: str, *, within: Mapping[str, Any] | None = None) -> int:
    """An integer attribute of an item, or of a map ``within`` it (``MalformedItem`` otherwise)."""
    text = attribute_of(item, name, "N", within=within)
    try:
        return int(text)
    except (TypeError, ValueError):
        raise MalformedItem(
            f"{describe(within if within is not None else item)}: {name} {text!r} is not an integer", name
        ) from None


# -- key rules ---------------------------------------------------------------------------------

DAY_PATTERN = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
"""``YYYY-MM-DD`` in ASCII digits, used with ``fullmatch`` (``$`` would match before a final newline,
``\\d`` any Unicode digit)."""
MONTH_PATTERN = re.compile(r"[0-9]{4}-(?:0[1-9]|1[0-2])")


def is_day(text: str) -> bool:
    """Whether ``text`` is a day key: ASCII ``YYYY-MM-DD`` naming a real calendar date (the same
    verdict on every Python: the pattern fixes the shape before ``date`` checks the calendar)."""
    if DAY_PATTERN.fullmatch(text) is None:
        return False
    try:
        date(int(text[:4]), int(text[5:7]), int(text[8:]))
    except ValueError:
        return False
    return True


def is_month(text: str) -> bool:
    """Whether ``text`` is a month key: ASCII ``YYYY-MM``."""
    return MONTH_PATTERN.fullmatch(text) is not None
