"""The sensor message schema of the contract (docs/contract.md, "Sensor message"): parse, validate, assign the day.

Every rule of the contract lives here (the timestamp's grammar in ``timestamps.py``), and every
violation raises ``RejectedMessage`` with a reason a person can act on. No rule depends on the
Python that runs it: no ``fromisoformat``, no ``isprintable``. Nothing in here touches the network.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import tzinfo
from decimal import Decimal, InvalidOperation
from typing import Any

from sensor_digest import timestamps
from sensor_digest.characters import CHARACTER_RULE, control_character
from sensor_digest.dead_letter_format import SOURCE_ID_ATTRIBUTE
from sensor_digest.errors import RejectedMessage
from sensor_digest.reading_names import MAX_READINGS, READING_NAME
from sensor_digest.store import schema

MAX_SENSOR_ID = 2**53 - 1
MAX_COUNT = 1_000_000
MAX_EVENT_ID_LENGTH = 128
READING_DECIMALS = 6
READING_LIMIT = Decimal(10) ** 9
"""A reading's value is a multiple of 10^-6 below 10^9 in magnitude: 15 significant digits at most,
its square 30, so a sensor-day's sum stays exact in DynamoDB's 38 digits for 10^23 readings of a name
and its sum of squares for 10^8 of them at the largest magnitude (docs/readings.md)."""

Readings = tuple[tuple[str, Decimal], ...]
"""A report's readings: (name, value) by name."""


@dataclass(frozen=True)
class SensorMessage:
    """A valid message, reduced to what counting needs."""

    message_id: str
    sensor_id: int
    day: str
    count: int
    event_id: str
    sequence: int | None = None  # the SQS sequence number, on a FIFO queue
    source: str = ""  # on a FIFO queue, the queue's ARN: the sequence number is that queue's
    origin_id: str = ""  # the SQS messageId it first had (another than message_id after a redrive)
    receive_count: int = 1  # how often SQS has handed this message out, this time included
    timed: bool = True  # its body has a ``timestamp`` (else its day comes from the send time)
    named: bool = True  # its body has an ``event_id`` (else its identity is its origin messageId)
    hour: str = "00"  # ``HH``: the hour of its day it counts toward (``HourCounts``), in the same zone as ``day``
    readings: Readings = ()  # the values the sensor measured for this report, by name
    at: int = 0  # its report time, microseconds since 1970-01-01T00:00Z (a wall-clock time read in its zone)

    @property
    def sent_again_elsewhere(self) -> bool:
        """Whether a producer's resend of this report could fall on another day: it names its own
        ``event_id`` but no ``timestamp``, so its day comes from the send time, which a resend
        changes. Only a per-message marker (keyed by sensor and ``event_id`` alone) recognises such
        a resend; every other report's identity stays on its day."""
        return self.named and not self.timed

    @property
    def redriven(self) -> bool:
        """Whether it came back from the dead-letter queue (its origin is another message)."""
        return bool(self.origin_id) and self.origin_id != self.message_id

    @property
    def ledger_key(self) -> str:
        """The contract's ledger marker key of this message (``schema.marker_id``)."""
        return schema.marker_id(self.sensor_id, self.event_id)


def _reject_constant(name: str) -> Any:
    raise RejectedMessage(f"body is not valid JSON: {name} is not a JSON number")


MAX_INTEGER_DIGITS = 4_300
"""The longest integer a body may hold (Python's own limit on reading one, ``sys.int_info``): far
past what any field takes (``sensor_id`` at most 16 digits)."""


def _integer(text: str) -> int:
    digits = len(text) - text.startswith("-")
    if digits > MAX_INTEGER_DIGITS:
        raise RejectedMessage(f"body holds an integer of {digits:,} digits: no field takes one that long")
    return int(text)


class JsonNumber(float):
    """A JSON number with a fraction or an exponent, as Python reads it (a float, for the rules that
    read floats), keeping its text: a reading is taken from its text, exactly, never from the float."""

    text: str

    def __new__(cls, text: str) -> JsonNumber:
        number = super().__new__(cls, text)
        number.text = text
        return number


MAX_NESTING = 64
"""How deep arrays and objects may nest in a body. Python's own limit comes from its recursion
limit and its stack, and differs between versions (about 990 on 3.11, 1,500 on 3.12, 10,000 on
3.13); this one lies below all of them, so every Python gives a body the same verdict."""

_TOKENS = re.compile(r'\\.|["\[\]{}]')
"""What nesting depends on, each matched without backtracking: an escape (a backslash and the
character it escapes), a quote, a bracket."""


def nesting_depth(text: str) -> int:
    """How deep arrays and objects nest in JSON ``text`` (brackets inside strings do not count), in
    one pass over its quotes, brackets and escapes: linear in the text, whatever it holds."""
    depth = deepest = 0
    in_string = False
    for mark in _TOKENS.findall(text):
        if mark == '"':
            in_string = not in_string
        elif in_string or len(mark) == 2:  # inside a string, or an escape
            continue
        elif mark in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _load_object(body: Any) -> dict[str, Any]:
    if not isinstance(body, str):
        raise RejectedMessage("body is missing or not text")
    # most bodies hold a few brackets: only a body that could nest too deep is measured
    if body.count("[") + body.count("{") > MAX_NESTING and nesting_depth(body) > MAX_NESTING:
        raise RejectedMessage(f"body is not valid JSON: nested too deeply (more than {MAX_NESTING} levels)")
    try:
        value = json.loads(body, parse_constant=_reject_constant, parse_float=JsonNumber, parse_int=_integer)
    except RejectedMessage:
        raise
    except RecursionError:
        raise RejectedMessage("body is not valid JSON: nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError
        raise RejectedMessage(f"body is not valid JSON: {_short(str(exc))}") from None
    if not isinstance(value, dict):
        raise RejectedMessage(f"body must be a JSON object, got {_got(value)}")
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


SHOWN_VALUE_CHARS = 40
"""How much of a refused value a reason repeats (as JSON, in ASCII: nothing in it can act on a terminal or a log)."""


def _got(value: Any) -> str:
    """A refused value as a reason shows it: its JSON type and its JSON text, clipped
    (``number 1.5``, ``string "7"``, ``boolean true``; ``null`` alone)."""
    if value is None:
        return "null"
    text = json.dumps(value, ensure_ascii=True)
    if len(text) > SHOWN_VALUE_CHARS:
        text = text[: SHOWN_VALUE_CHARS - 3] + "..."
    return f"{_json_type(value)} {text}"


def _short(text: str) -> str:
    return text if len(text) <= 120 else text[:117] + "..."


def _strict_int(fields: Mapping[str, Any], name: str, low: int, high: int) -> int:
    value = fields[name]
    if type(value) is not int:  # bool is an int subclass; floats and strings are refused too
        raise RejectedMessage(f"{name} must be an integer, got {_got(value)}")
    if not low <= value <= high:
        raise RejectedMessage(f"{name} must be between {low} and {high}, got {_short(str(value))}")
    return value


def _parse_sensor_id(fields: Mapping[str, Any]) -> int:
    if "sensor_id" not in fields:
        raise RejectedMessage("sensor_id is required")
    return _strict_int(fields, "sensor_id", 0, MAX_SENSOR_ID)


def _parse_count(fields: Mapping[str, Any]) -> int:
    if "count" not in fields:
        return 1
    return _strict_int(fields, "count", 1, MAX_COUNT)


def check_event_id(value: Any, what: str = "event_id") -> str:
    """``value`` if it is a valid event id (a string of 1 to 128 characters, none of them a control
    character or a lone surrogate); ``RejectedMessage`` otherwise. Ingest checks an event id taken
    from a message attribute with it too."""
    if not isinstance(value, str):
        raise RejectedMessage(f"{what} must be a string, got {_got(value)}")
    if not 1 <= len(value) <= MAX_EVENT_ID_LENGTH:
        raise RejectedMessage(f"{what} must have 1 to {MAX_EVENT_ID_LENGTH} characters, got {len(value)}")
    if (found := control_character(value)) is not None:
        raise RejectedMessage(f"{what} {CHARACTER_RULE}: {found}")
    return value


def _parse_event_id(fields: Mapping[str, Any], message_id: str, origin_id: str | None) -> str:
    """The body's ``event_id``, else the message's origin id: SQS's own ``messageId``, or the
    ``sensor-digest.source_message_id`` attribute of a redriven dead letter (checked by the same rule)."""
    if "event_id" in fields:
        return check_event_id(fields["event_id"])
    if origin_id is None or origin_id == message_id:
        return message_id
    return check_event_id(origin_id, f"the {SOURCE_ID_ATTRIBUTE} attribute (the report's event id)")


READING_RULE = (
    f"a JSON number below {READING_LIMIT:,} in magnitude with at most {READING_DECIMALS} digits after the decimal "
    "point (the bounds within which a day's sums and sums of squares stay exact)"
)


def _parse_readings(fields: Mapping[str, Any]) -> Readings:
    """The body's ``readings``: an object of at most ``MAX_READINGS`` names, each ``READING_NAME``, each
    value ``READING_RULE``; -0 reads as 0. Absent: none."""
    if "readings" not in fields:
        return ()
    given = fields["readings"]
    if not isinstance(given, dict):
        raise RejectedMessage(f"readings must be an object of named numbers, got {_got(given)}")
    if len(given) > MAX_READINGS:
        raise RejectedMessage(f"readings must have at most {MAX_READINGS} names, got {len(given)}")
    readings = []
    for name, value in given.items():
        if not READING_NAME.fullmatch(name):
            raise RejectedMessage(
                f"readings name {_got(name)} must be 1 to 32 ASCII letters, digits or _, a letter first"
            )
        readings.append((name, _reading_value(name, value)))
    return tuple(sorted(readings))


def _reading_value(name: str, value: Any) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RejectedMessage(f"readings.{name} must be {READING_RULE}, got {_got(value)}")
    text = value.text if isinstance(value, JsonNumber) else str(value)
    try:
        number = Decimal(text)
    except (InvalidOperation, ValueError):  # pragma: no cover - json.loads gave the text
        raise RejectedMessage(f"readings.{name} must be {READING_RULE}, got {_got(value)}") from None
    if (
        not number.is_finite()
        or number.copy_abs() >= READING_LIMIT  # no arithmetic: 1e1000000 is past the context's exponents
        or number != number.quantize(Decimal(1).scaleb(-READING_DECIMALS))
    ):
        raise RejectedMessage(f"readings.{name} must be {READING_RULE}, got {_short_number(text)}")
    return Decimal(format(number.normalize(), "f")) + 0  # plain digits, no exponent; -0 is 0


def _short_number(text: str) -> str:
    return f"number {text}" if len(text) <= SHOWN_VALUE_CHARS else f"number {text[: SHOWN_VALUE_CHARS - 3]}..."


_SENT_TIMESTAMP = re.compile(r"-?[0-9]{1,19}")


def _day_of(fields: Mapping[str, Any], sent_timestamp: str | None, zone: tzinfo) -> str:
    """The day the message counts toward in ``zone``, by the grammar of ``timestamps.py``."""
    if "timestamp" not in fields:
        if sent_timestamp is None:
            raise RejectedMessage("timestamp is absent and the SQS SentTimestamp attribute is missing")
        if not (isinstance(sent_timestamp, str) and _SENT_TIMESTAMP.fullmatch(sent_timestamp)):
            raise RejectedMessage("the SQS SentTimestamp attribute is not an integer")
        return timestamps.day_of_epoch_millis(int(sent_timestamp), zone, "SentTimestamp")
    value = fields["timestamp"]
    if isinstance(value, bool) or value is None:
        raise RejectedMessage(f"timestamp must be an ISO-8601 string or epoch seconds, got {_got(value)}")
    if isinstance(value, int | float):
        return timestamps.day_of_epoch(value, zone)
    if isinstance(value, str):
        return timestamps.day_of_text(value, zone)
    raise RejectedMessage(f"timestamp must be an ISO-8601 string or epoch seconds, got {_got(value)}")


def _hour_of(fields: Mapping[str, Any], sent_timestamp: str | None, zone: tzinfo) -> str:
    """The hour of its day (``HH``) the message counts toward in ``zone``; called once ``_day_of``
    accepted the same fields, so it reads them without checking them again."""
    if "timestamp" not in fields:
        return timestamps.hour_of_instant(int(str(sent_timestamp)) * 1000, zone)
    value = fields["timestamp"]
    if isinstance(value, str):
        return timestamps.hour_in(timestamps.parse(value), zone)
    return timestamps.hour_of_instant(timestamps.epoch_micros(value), zone)


def _instant_of(fields: Mapping[str, Any], sent_timestamp: str | None, zone: tzinfo) -> int:
    """The report time in microseconds since the epoch (an alarm's time order); called once
    ``_day_of`` accepted the same fields. A wall-clock time is read in ``zone`` (the earlier of a
    repeated hour)."""
    if "timestamp" not in fields:
        return int(str(sent_timestamp)) * 1000
    value = fields["timestamp"]
    if not isinstance(value, str):
        return timestamps.epoch_micros(value)
    return timestamps.instant_in(timestamps.parse(value), zone)


@dataclass(frozen=True)
class PendingMessage:
    """A body that passed every rule but the timestamp's: valid but for its day, which needs the
    sensor's time zone (``in_zone``)."""

    message_id: str
    sensor_id: int
    count: int
    event_id: str
    fields: dict[str, Any]
    sent_timestamp: str | None
    sequence: int | None = None
    source: str = ""
    origin_id: str = ""
    receive_count: int = 1
    readings: Readings = ()

    def in_zone(self, zone: tzinfo) -> SensorMessage:
        """The message with its day, the timestamp read in ``zone``; ``RejectedMessage`` if invalid."""
        return SensorMessage(
            message_id=self.message_id,
            sensor_id=self.sensor_id,
            day=_day_of(self.fields, self.sent_timestamp, zone),
            count=self.count,
            event_id=self.event_id,
            sequence=self.sequence,
            source=self.source,
            origin_id=self.origin_id,
            receive_count=self.receive_count,
            timed="timestamp" in self.fields,
            named="event_id" in self.fields,
            hour=_hour_of(self.fields, self.sent_timestamp, zone),
            readings=self.readings,
            at=_instant_of(self.fields, self.sent_timestamp, zone),
        )


def read_pending(
    *,
    message_id: str,
    body: Any,
    sent_timestamp: str | None,
    sequence: int | None = None,
    origin_id: str | None = None,
) -> PendingMessage:
    """Load and validate a body up to its timestamp (the day needs the sensor's zone).

    ``sent_timestamp`` and ``origin_id`` are the message's origin (``dead_letters.Origin``): the
    send time a report without ``timestamp`` is dated by, and the id a report without ``event_id``
    is counted by (``message_id`` when not given)."""
    fields = _load_object(body)
    return PendingMessage(
        message_id=message_id,
        sensor_id=_parse_sensor_id(fields),
        count=_parse_count(fields),
        event_id=_parse_event_id(fields, message_id, origin_id),
        origin_id=message_id if origin_id is None else origin_id,
        fields=fields,
        readings=_parse_readings(fields),
        sent_timestamp=sent_timestamp,
        sequence=sequence,
    )


def sequenced(pending: PendingMessage, *, sequence_number: Any, group_id: Any, source: str = "") -> PendingMessage:
    """A FIFO queue's message (``QUEUE_TYPE=fifo``) from queue ``source``: its ``SequenceNumber`` read, and its
    ``MessageGroupId`` checked to be its sensor (each sensor is one group, so that its messages
    arrive in order and one at a time); ``RejectedMessage`` otherwise."""
    if not (isinstance(sequence_number, str) and sequence_number.isascii() and sequence_number.isdigit()):
        raise RejectedMessage(
            "the SQS SequenceNumber attribute is missing or not a decimal number "
            "(QUEUE_TYPE=fifo reads a FIFO queue's records)"
        )
    if len(sequence_number) > schema.SEQUENCE_DIGITS or int(sequence_number) > schema.MAX_SEQUENCE_NUMBER:
        raise RejectedMessage(f"the SQS SequenceNumber {_short(sequence_number)} has more than 128 bits")
    if group_id != str(pending.sensor_id):
        raise RejectedMessage(
            f"MessageGroupId {_short(repr(group_id))} is not the sensor id {pending.sensor_id}: "
            "on a FIFO queue each sensor's reports must be sent with MessageGroupId = the sensor id"
        )
    return replace(pending, sequence=int(sequence_number), source=source)
