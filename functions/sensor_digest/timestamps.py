"""The timestamp of a sensor message (docs/contract.md, "Sensor message"): one written grammar, our own parser.

``datetime.fromisoformat`` accepts what the running Python accepts (``T24:00`` from 3.14 on and
not before; any character between date and time; fractions of hours; offsets with seconds), so a
message's verdict and day would follow the interpreter. This parser gives every text the same
verdict and the same day on every Python: it matches ASCII-only regular expressions (``[0-9]``,
never ``\\d``) and computes with integers, ``date``/``timedelta`` arithmetic and the zone's own
conversion (``astimezone``); no call whose behaviour changed between Python versions.

Grammar (ABNF, RFC 5234; ``DIGIT`` is an ASCII digit 0-9 and nothing else; the whole text, at most
64 characters, nothing before or after it)::

    timestamp = date [ ( "T" / "t" / " " ) time [ offset ] ]
    date      = year "-" month "-" mday / year month mday         ; calendar date
              / year "-W" week "-" wday / year "W" week wday      ; ISO week date
    time      = hour [ ":" minute [ ":" second [ fraction ] ] ]   ; extended
              / hour [ minute [ second [ fraction ] ] ]           ; basic
    fraction  = ( "." / "," ) 1*9DIGIT                            ; of the second only
    offset    = "Z" / "z" / ( "+" / "-" ) hour [ [ ":" ] minute ]
    year = 4DIGIT  month = 2DIGIT  mday = 2DIGIT  week = 2DIGIT  wday = DIGIT
    hour = 2DIGIT  minute = 2DIGIT  second = 2DIGIT

- year 0001-9999, month 01-12, mday 01 to the month's last day, week 01-52 (53 in an ISO year that
  has 53 weeks), wday 1 (Monday) to 7 (Sunday), hour 00-23, minute and second 00-59; a fraction is
  truncated to microseconds; an offset is at most 23:59 either way; a date alone is its 00:00.
- Hour ``24`` with every later field zero (``T24``, ``T24:00``, ``T24:00:00``, ``T24:00:00.000``) is
  the midnight that ends the date: the next day's 00:00. Any other ``24:xx`` is refused.
- Second ``60`` (a leap second) only after minute ``59``: read as hh:59:59.999999, so it counts on
  the day it is written in.
- Refused, each with a one-line reason: ordinal dates (``YYYY-DDD``, ``YYYYDDD``: send YYYY-MM-DD),
  year 0000, reduced dates (``YYYY-MM``), fractions of hours or minutes, offsets with seconds, any
  character that is not ASCII, whitespace around the text, more than 64 characters.

Days:

- A time without offset is the sensor's wall-clock time: its day is the date as written (``24:00``:
  the next day), whatever the zone's daylight saving time does that day.
- A time with an offset is an instant; its day is the calendar day of that instant in the zone.
- Epoch seconds (a JSON integer or finite number, negative too) are the instant
  1970-01-01T00:00:00Z + seconds, floored to the microsecond from the number's exact binary value
  (never ``datetime.fromtimestamp``, which rounds and depends on the platform's range).
- A day outside 0001-01-01..9999-12-31 in the zone is refused as out of range; for epoch seconds
  that read as epoch milliseconds, microseconds or nanoseconds (a positive number out of range as
  seconds and in range in one of those units: ``1714557600000``, what IoT Core's ``timestamp()``
  gives), the reason says so, with that day, and how to send seconds. An instant just
  outside that range in UTC whose day in the zone is inside it counts
  (``0001-01-01T00:00+01:00`` in Asia/Tokyo is 0001-01-01): near either end the conversion is made
  400 years inward, where the Gregorian calendar repeats and the zone's rule is the same (its first
  offset before its first transition, its yearly rule after its last).
"""

from __future__ import annotations

import calendar
import math
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo

from sensor_digest.errors import RejectedMessage

MAX_LENGTH = 64
MICROS_PER_SECOND = 1_000_000
MICROS_PER_DAY = 86_400 * MICROS_PER_SECOND
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_EPOCH_ORDINAL = EPOCH.date().toordinal()
_LAST_ORDINAL = date(9999, 12, 31).toordinal()
_FIRST = (1 - _EPOCH_ORDINAL) * MICROS_PER_DAY  # 0001-01-01T00:00:00Z
_END = (_LAST_ORDINAL + 1 - _EPOCH_ORDINAL) * MICROS_PER_DAY  # 10000-01-01T00:00:00Z, excluded
_CYCLE = 146_097 * MICROS_PER_DAY  # 400 Gregorian years: dates and weekdays repeat
_MARGIN = 2 * MICROS_PER_DAY  # more than any zone's offset (a tzinfo's is under 24 hours)

_SPLIT = re.compile(r"(?P<date>[^Tt ]*)(?:[Tt ](?P<time>[^Zz+-]*)(?P<offset>.*))?", re.DOTALL)
_CALENDAR = (
    re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})"),
    re.compile(r"([0-9]{4})([0-9]{2})([0-9]{2})"),
)
_WEEK = (
    re.compile(r"([0-9]{4})-W([0-9]{2})-([0-9])"),
    re.compile(r"([0-9]{4})W([0-9]{2})([0-9])"),
)
_ORDINAL = re.compile(r"[0-9]{4}-?[0-9]{3}")
_TIME = (
    re.compile(r"([0-9]{2})(?::([0-9]{2})(?::([0-9]{2})([.,][0-9]+)?)?)?"),
    re.compile(r"([0-9]{2})(?:([0-9]{2})(?:([0-9]{2})([.,][0-9]+)?)?)?"),
)
_FRACTION_OF_HOUR_OR_MINUTE = re.compile(r"[0-9]{2}(?::?[0-9]{2})?[.,][0-9]*")
_OFFSET = re.compile(r"([+-])([0-9]{2})(?::?([0-9]{2}))?")
_OFFSET_WITH_SECONDS = re.compile(r"[+-][0-9]{2}:?[0-9]{2}:?[0-9]{2}(?:[.,][0-9]*)?")
_ASCII_SPACE = " \t\r\n\f\v"


@dataclass(frozen=True)
class Timestamp:
    """A timestamp as written: its date, its time of day and, for an instant, its offset."""

    date: date
    time_micros: int = 0
    """Since the date's 00:00; ``24:00`` is ``MICROS_PER_DAY``."""
    offset_minutes: int | None = None
    """East of UTC; ``None``: the sensor's wall-clock time."""

    @property
    def epoch_micros(self) -> int | None:
        """The instant, in microseconds since 1970-01-01T00:00Z; ``None`` for a wall-clock time."""
        if self.offset_minutes is None:
            return None
        local = (self.date.toordinal() - _EPOCH_ORDINAL) * MICROS_PER_DAY + self.time_micros
        return local - self.offset_minutes * 60 * MICROS_PER_SECOND

    def day_in(self, zone: tzinfo) -> str | None:
        """``YYYY-MM-DD`` it counts toward in ``zone``: the date as written for a wall-clock time
        (``24:00``: the next day), the instant's day there otherwise; ``None`` past 0001..9999."""
        micros = self.epoch_micros
        if micros is None:
            ordinal = self.date.toordinal() + self.time_micros // MICROS_PER_DAY
            return date.fromordinal(ordinal).isoformat() if ordinal <= _LAST_ORDINAL else None
        return day_of_instant(micros, zone)


def hour_in(stamp: Timestamp, zone: tzinfo) -> str:
    """``HH``, the hour of the sensor's day ``stamp`` counts toward (``Timestamp.day_in``): the hour as
    written for a wall-clock time (``24:00``: the next day's ``00``), the instant's wall-clock hour
    in ``zone`` otherwise. On a daylight-saving change day the hours are the zone's wall-clock
    hours: the hour skipped in spring holds no instant (only a time written in it without offset),
    the hour repeated in autumn holds both."""
    micros = stamp.epoch_micros
    if micros is None:
        return f"{stamp.time_micros // (3600 * MICROS_PER_SECOND) % 24:02d}"
    return hour_of_instant(micros, zone)


def instant_in(stamp: Timestamp, zone: tzinfo) -> int:
    """The instant ``stamp`` names, in microseconds since the epoch: its own for a time with offset,
    the wall-clock time read in ``zone`` otherwise (the earlier of a repeated autumn hour; a time in
    the skipped spring hour as the zone's rules shift it). Past 0001..9999 in ``zone``, the time read
    as UTC (only the order of reports depends on it)."""
    micros = stamp.epoch_micros
    if micros is not None:
        return micros
    local = (stamp.date.toordinal() - _EPOCH_ORDINAL) * MICROS_PER_DAY + stamp.time_micros
    try:
        wall = datetime.combine(stamp.date, datetime.min.time()) + timedelta(microseconds=stamp.time_micros)
        offset = wall.replace(tzinfo=zone).utcoffset()
    except (OverflowError, ValueError):
        return local
    return local - (0 if offset is None else offset // timedelta(microseconds=1))


def day_of_instant(micros: int, zone: tzinfo) -> str | None:
    """``YYYY-MM-DD`` of the instant ``micros`` (since 1970-01-01T00:00Z) in ``zone``; ``None`` when
    that day is outside 0001-01-01..9999-12-31."""
    if not _FIRST - _MARGIN <= micros < _END + _MARGIN:
        return None
    # Near either end the instant itself may not fit a datetime: convert it 400 years inward.
    cycles = 1 if micros < _FIRST + _MARGIN else -1 if micros >= _END - _MARGIN else 0
    local = (EPOCH + timedelta(microseconds=micros + cycles * _CYCLE)).astimezone(zone)
    year = local.year - 400 * cycles
    return f"{year:04d}-{local.month:02d}-{local.day:02d}" if 1 <= year <= 9999 else None


def hour_of_instant(micros: int, zone: tzinfo) -> str:
    """``HH``, the wall-clock hour of the instant ``micros`` in ``zone`` (its day is
    ``day_of_instant``'s; converted 400 years inward near either end, as the day is)."""
    cycles = 1 if micros < _FIRST + _MARGIN else -1 if micros >= _END - _MARGIN else 0
    return f"{(EPOCH + timedelta(microseconds=micros + cycles * _CYCLE)).astimezone(zone).hour:02d}"


def epoch_micros(seconds: int | float) -> int:
    """Epoch seconds as whole microseconds, floored, from the number's exact value (a float's
    binary fraction, not its decimal rounding)."""
    if isinstance(seconds, int):
        return seconds * MICROS_PER_SECOND
    numerator, denominator = seconds.as_integer_ratio()  # ValueError/OverflowError for NaN/inf
    return numerator * MICROS_PER_SECOND // denominator


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 80 else repr(text[:77]) + "..."


def parse(text: str, what: str = "timestamp") -> Timestamp:
    """``text`` read by the grammar above; ``RejectedMessage`` with a one-line reason otherwise."""
    if len(text) > MAX_LENGTH:
        raise RejectedMessage(f"{what} {_shown(text)} is longer than the grammar's {MAX_LENGTH} characters")
    if not text.isascii():
        raise RejectedMessage(f"{what} {_shown(text)} is refused: only ASCII characters are accepted (digits 0-9)")
    if text != text.strip(_ASCII_SPACE):
        raise RejectedMessage(f"{what} {_shown(text)} is refused: no whitespace is accepted before or after it")
    written = _Written(text, what)
    parts = _SPLIT.fullmatch(text)
    if parts is None:  # pragma: no cover - the pattern matches every text
        raise written.not_iso()
    day = written.date(parts["date"])
    if parts["time"] is None:
        return Timestamp(day)
    return Timestamp(day, written.time(parts["time"]), written.offset(parts["offset"]))


class _Written:
    """One text being read: its fields checked in turn, each failure a reason that names it."""

    def __init__(self, text: str, what: str) -> None:
        self.text = text
        self.what = what

    def not_iso(self) -> RejectedMessage:
        return RejectedMessage(
            f"{self.what} {_shown(self.text)} is not ISO-8601 as accepted here: YYYY-MM-DD or YYYY-Www-D, "
            "optionally followed by T and hh[:mm[:ss[.fraction]]], then an optional offset (Z, +hh:mm or -hh:mm; "
            "without one, the sensor's local time)"
        )

    def refused(self, why: str) -> RejectedMessage:
        return RejectedMessage(f"{self.what} {_shown(self.text)} is refused: {why}")

    def out_of_range(self) -> RejectedMessage:
        return RejectedMessage(f"{self.what} {_shown(self.text)} is out of range: after 9999-12-31")

    def date(self, text: str) -> date:
        for pattern in _CALENDAR:
            if match := pattern.fullmatch(text):
                year, month, mday = (int(g) for g in match.groups())
                self.check_year(year)
                if not 1 <= month <= 12:
                    raise self.refused(f"month {match[2]} is not 01 to 12")
                last = calendar.monthrange(year, month)[1]
                if not 1 <= mday <= last:
                    raise self.refused(f"day {match[3]} is not 01 to {last} in {year:04d}-{month:02d}")
                return date(year, month, mday)
        for pattern in _WEEK:
            if match := pattern.fullmatch(text):
                year, week, wday = (int(g) for g in match.groups())
                self.check_year(year)
                monday = _monday_of_week_one(year)
                weeks = (date(year, 12, 28) - monday).days // 7 + 1  # 28 December is in the last week
                if not 1 <= week <= weeks:
                    raise self.refused(f"week {match[2]} is not 01 to {weeks} in ISO year {year:04d}")
                if not 1 <= wday <= 7:
                    raise self.refused(f"weekday {wday} is not 1 (Monday) to 7 (Sunday)")
                try:
                    return monday + timedelta(weeks=week - 1, days=wday - 1)
                except OverflowError:  # the last days of ISO year 9999 fall in 10000
                    raise self.out_of_range() from None
        if _ORDINAL.fullmatch(text):
            raise RejectedMessage(
                f"{self.what} {_shown(self.text)} is an ordinal date (YYYY-DDD), which is not accepted: send YYYY-MM-DD"
            )
        raise self.not_iso()

    def check_year(self, year: int) -> None:
        if year == 0:
            raise self.refused("year 0000 is out of range (0001 to 9999)")

    def time(self, text: str) -> int:
        match = _TIME[0].fullmatch(text) or _TIME[1].fullmatch(text)
        if match is None:
            if _FRACTION_OF_HOUR_OR_MINUTE.fullmatch(text):
                raise self.refused("a fraction is accepted on seconds only (hh:mm:ss.fff)")
            raise self.not_iso()
        hour, minute, second = (int(g) if g else 0 for g in match.groups()[:3])
        digits = (match[4] or ".")[1:]
        if len(digits) > 9:
            raise self.refused("a fraction of a second has 1 to 9 digits")
        if hour == 24:
            if minute or second or digits.strip("0"):
                raise self.refused("hour 24 is accepted only as 24:00, the midnight that ends the day")
            return MICROS_PER_DAY
        if hour > 23:
            raise self.refused(f"hour {hour:02d} is not 00 to 23 (or 24:00)")
        if minute > 59:
            raise self.refused(f"minute {minute:02d} is not 00 to 59")
        if second == 60:
            if minute != 59:
                raise self.refused("second 60 (a leap second) is accepted only after minute 59")
            return (hour * 3600 + 59 * 60 + 60) * MICROS_PER_SECOND - 1  # hh:59:59.999999
        if second > 59:
            raise self.refused(f"second {second:02d} is not 00 to 59 (or 60 after minute 59)")
        return (hour * 3600 + minute * 60 + second) * MICROS_PER_SECOND + int((digits + "000000")[:6])

    def offset(self, text: str) -> int | None:
        if text == "":
            return None
        if text in ("Z", "z"):
            return 0
        match = _OFFSET.fullmatch(text)
        if match is None:
            if _OFFSET_WITH_SECONDS.fullmatch(text):
                raise self.refused("an offset has no seconds (send +hh:mm or -hh:mm)")
            raise self.not_iso()
        hours, minutes = int(match[2]), int(match[3] or 0)
        if hours > 23 or minutes > 59:
            raise self.refused(f"offset {text} is out of range (at most 23:59 either way)")
        return (hours * 60 + minutes) * (-1 if match[1] == "-" else 1)


def _monday_of_week_one(year: int) -> date:
    """ISO week 1 is the week with 4 January in it (0001-01-01 is itself a Monday)."""
    january_4 = date(year, 1, 4)
    return january_4 - timedelta(days=january_4.weekday())


def day_of_text(text: str, zone: tzinfo, what: str = "timestamp") -> str:
    """The day ``text`` counts toward in ``zone``; ``RejectedMessage`` if refused or out of range."""
    day = parse(text, what).day_in(zone)
    if day is None:
        raise RejectedMessage(
            f"{what} {_shown(text)} is out of range: its day in {zone} is not 0001-01-01 to 9999-12-31"
        )
    return day


def day_of_epoch(seconds: int | float, zone: tzinfo, what: str = "timestamp") -> str:
    """The day of epoch ``seconds`` in ``zone``; ``RejectedMessage`` if not finite or out of range,
    saying so when the number reads as epoch milliseconds, microseconds or nanoseconds (``unit_hint``)."""
    if isinstance(seconds, float) and not math.isfinite(seconds):
        raise RejectedMessage(f"{what} must be a finite number")
    micros = epoch_micros(seconds)
    day = day_of_instant(micros, zone)
    if day is None:
        raise _out_of_range(what, repr(seconds), zone, unit_hint(micros, zone))
    return day


EPOCH_FLOOR = 100_000_000
"""A timestamp written as a number smaller than this (in size) is, as epoch seconds, an instant
between 1966-10-31 and 1973-03-03, and as written more likely a year (``2024``) or a date
(``20240501``, ``202405``). Live ingest accepts such a body (a producer's epoch is its own); what a
person types or exports is refused (``small_epoch``): ``sensor-digest send``'s ``--timestamp``, an
imported row's ``timestamp``."""

_YEAR_LIKE = re.compile(r"([1-9][0-9]{3})(?:([0-9]{2})([0-9]{2})?)?")
"""``YYYY``, ``YYYYMM``, ``YYYYMMDD``: a year, a month or a date written as a number."""


def small_epoch(text: str, number: int | float, what: str = "timestamp") -> str | None:
    """Why a number ``text`` (``number``) closer to 0 than ``EPOCH_FLOOR`` is refused as ``what``: the
    instant it is as epoch seconds, the year, month or date it looks like, and how to write a date,
    epoch seconds, or that instant itself; ``None`` for a number at least that large."""
    if abs(number) >= EPOCH_FLOOR:
        return None
    instant = (EPOCH + timedelta(microseconds=epoch_micros(number))).isoformat().replace("+00:00", "Z")
    looks, written = f", and a number closer to 0 than {EPOCH_FLOOR} is more likely a year or a date", "2024-05-01"
    if (shape := _YEAR_LIKE.fullmatch(text)) and _is_date(*(int(part or 1) for part in shape.groups())):
        year, month, day = shape.groups()
        looks = f", not {'the year' if month is None else 'the month' if day is None else 'the date'} "
        looks += "-".join(part for part in (year, month, day) if part)
        written = f"{year}-{month or '01'}-{day or '01'}"
    return (
        f"{what} {text} is refused: as epoch seconds it is {instant}{looks}; write a date in ISO-8601 "
        f"({written}, or {written}T09:00:00Z with a time), epoch seconds of 9 digits or more (1714557600), or "
        f"{instant} if that instant is meant"
    )


def _is_date(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


FINER_UNITS = (("milliseconds", 10**3), ("microseconds", 10**6), ("nanoseconds", 10**9))
"""What an epoch number too large (or too small) for seconds is likely to be, with its factor:
IoT Core's ``timestamp()`` and JavaScript's ``Date.now()`` give milliseconds."""


def unit_hint(micros: int, zone: tzinfo) -> str:
    """For positive epoch seconds out of range (``micros``, their microseconds): the first of
    ``FINER_UNITS`` that puts the number on a day in range, that day, and how to send seconds; ""
    if none does, or for a negative number (no device reports from before 1970)."""
    for unit, factor in FINER_UNITS if micros > 0 else ():
        day = day_of_instant(micros // factor, zone)
        if day is not None:
            return f"; it looks like epoch {unit} ({day} in {zone}): send epoch seconds (divide by {factor})"
    return ""


def day_of_epoch_millis(millis: int, zone: tzinfo, what: str) -> str:
    """The day of epoch milliseconds (SQS's ``SentTimestamp``) in ``zone``; ``RejectedMessage`` if
    out of range."""
    return _day_or_reject(millis * 1000, zone, what, str(millis))


def _day_or_reject(micros: int, zone: tzinfo, what: str, number: str) -> str:
    day = day_of_instant(micros, zone)
    if day is None:
        raise _out_of_range(what, number, zone)
    return day


def _out_of_range(what: str, number: str, zone: tzinfo, hint: str = "") -> RejectedMessage:
    shown = number if len(number) <= 80 else number[:77] + "..."
    return RejectedMessage(f"{what} {shown} is out of range: its day in {zone} is not 0001-01-01 to 9999-12-31{hint}")
