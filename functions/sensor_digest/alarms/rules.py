"""Alarm rules: what one watches, read and checked at the boundary (``AlarmRule.parse``), stored as
one rule set (``RuleSet``), and which of them apply to a sensor (``RuleSet.for_sensor``).

A rule as written (JSON, the command line's files, the construct's seed)::

    {"name": "hot", "reading": "temperature", "sensors": "*",
     "condition": "above", "threshold": 30, "clear": 28,
     "for_seconds": 600, "severity": 2, "latch": false}

- ``name``: 1 to 64 characters, a letter first, then letters, digits, ``_`` or ``-``; unique.
- ``reading``: a reading name (the message schema's rule).
- ``sensors``: ``"*"`` (every sensor: a fleet rule) or a list of 1 to ``MAX_RULE_SENSORS`` ids.
  A sensor named by any rule of a reading is watched by those rules only: its own rules override
  the fleet's for that reading.
- ``condition``: ``above`` or ``below`` with ``threshold``, or ``outside`` with ``band``
  ``[low, high]``. A report breaches when its value is strictly beyond.
- ``clear``: where the alarm clears (hysteresis): for ``above`` at or below it (``<= threshold``),
  for ``below`` at or above it, for ``outside`` inside ``[low, high]`` of its own band (within the
  breach band). Default: the threshold (band) itself.
- ``for_seconds`` or ``for_reports`` (at most one): a breach is active once its breaching reports
  span that many seconds of their own time, or once that many consecutive reports breach.
  Default: the first breaching report.
- ``severity``: 1 to 5 (default 3); ``latch``: active until acknowledged (default false).

Values are exact decimals (a JSON number read as written), as readings are.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from sensor_digest.errors import ReasonedError
from sensor_digest.reading_names import READING_NAME

MAX_RULES = 200
MAX_RULE_SENSORS = 100
MAX_FOR_SECONDS = 7 * 86_400
MAX_FOR_REPORTS = 1_000
MAX_VALUE_DIGITS = 38  # DynamoDB's number precision
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
CONDITIONS = ("above", "below", "outside")
FIELDS = frozenset(
    {
        "name",
        "reading",
        "sensors",
        "condition",
        "threshold",
        "band",
        "clear",
        "for_seconds",
        "for_reports",
        "severity",
        "latch",
        "description",
    }
)
EVERY_SENSOR = "*"
MAX_DESCRIPTION = 256
MAX_SENSOR_ID = 2**53 - 1


class InvalidRule(ReasonedError):
    """A rule (or rule file) that breaks the rules above; nothing of it is applied."""


def _number(value: object, what: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise InvalidRule(f"{what} must be a number, got {json.dumps(value, default=str)[:40]}")
    try:
        number = value if isinstance(value, Decimal) else Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise InvalidRule(f"{what} must be a number, got {str(value)[:40]!r}") from None
    if not number.is_finite():
        raise InvalidRule(f"{what} must be a finite number, got {value}")
    digits = len("".join(map(str, number.as_tuple().digits)).strip("0") or "0")  # no context: no rounding
    if digits > MAX_VALUE_DIGITS or abs(number.adjusted()) > 100:
        raise InvalidRule(
            f"{what} must have at most {MAX_VALUE_DIGITS} significant digits and a magnitude within 1e100"
        )
    return number


def _whole(value: object, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidRule(
            f"{what} must be a whole number from {low} to {high}, got {json.dumps(value, default=str)[:40]}"
        )
    return value


def _band(value: object, what: str) -> tuple[Decimal, Decimal]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise InvalidRule(f"{what} must be a list of two numbers [low, high]")
    low, high = _number(value[0], f"{what}[0]"), _number(value[1], f"{what}[1]")
    if low > high:
        raise InvalidRule(f"{what} must have low <= high, got [{low}, {high}]")
    return low, high


@dataclass(frozen=True)
class AlarmRule:
    """One rule, checked (``parse``); ``band`` is ``(threshold, threshold)`` for ``above``/``below``."""

    name: str
    reading: str
    sensors: tuple[int, ...] | None  # None: every sensor
    condition: str
    band: tuple[Decimal, Decimal]
    clear: tuple[Decimal, Decimal]
    for_seconds: int = 0
    for_reports: int = 1
    severity: int = 3
    latch: bool = False
    description: str = ""

    @classmethod
    def parse(cls, raw: object) -> AlarmRule:
        """A rule from its JSON form; ``InvalidRule`` naming the rule and the first thing wrong."""
        if not isinstance(raw, Mapping):
            raise InvalidRule("a rule must be a JSON object")
        name = raw.get("name")
        if not isinstance(name, str) or NAME.fullmatch(name) is None:
            raise InvalidRule(
                "a rule's name must be 1 to 64 characters, a letter first, then letters, digits, _ or -, "
                f"got {json.dumps(name, default=str)[:70]}"
            )
        try:
            return cls._parse(name, raw)
        except InvalidRule as bad:
            raise InvalidRule(f"rule {name}: {bad.reason}") from None

    @classmethod
    def _parse(cls, name: str, raw: Mapping[str, Any]) -> AlarmRule:
        unknown = sorted(str(k) for k in raw if k not in FIELDS)
        if unknown:
            raise InvalidRule(f"unknown field {unknown[0][:40]!r} (fields: {', '.join(sorted(FIELDS))})")
        reading = raw.get("reading")
        if not isinstance(reading, str) or READING_NAME.fullmatch(reading) is None:
            raise InvalidRule(
                "reading must be 1 to 32 characters, a letter first, then letters, digits or _, "
                f"got {json.dumps(reading, default=str)[:50]}"
            )
        sensors = cls._sensors(raw.get("sensors"))
        condition = raw.get("condition")
        if condition not in CONDITIONS:
            raise InvalidRule(
                f"condition must be one of {', '.join(CONDITIONS)}, got {json.dumps(condition, default=str)[:40]}"
            )
        if condition == "outside":
            if "threshold" in raw:
                raise InvalidRule("condition outside takes band [low, high], not threshold")
            band = _band(raw.get("band"), "band")
            clear = _band(raw["clear"], "clear") if "clear" in raw else band
            if not band[0] <= clear[0] <= clear[1] <= band[1]:
                raise InvalidRule(f"clear must lie within band [{band[0]}, {band[1]}]")
        else:
            if "band" in raw:
                raise InvalidRule(f"condition {condition} takes threshold, not band")
            if "threshold" not in raw:
                raise InvalidRule(f"condition {condition} needs a threshold")
            threshold = _number(raw["threshold"], "threshold")
            level = _number(raw["clear"], "clear") if "clear" in raw else threshold
            if (condition == "above" and level > threshold) or (condition == "below" and level < threshold):
                side = "at or below" if condition == "above" else "at or above"
                raise InvalidRule(f"clear must be {side} the threshold {threshold}, got {level}")
            band, clear = (threshold, threshold), (level, level)
        if "for_seconds" in raw and "for_reports" in raw:
            raise InvalidRule("give for_seconds or for_reports, not both")
        for_seconds = _whole(raw.get("for_seconds", 0), "for_seconds", 0, MAX_FOR_SECONDS)
        for_reports = _whole(raw.get("for_reports", 1), "for_reports", 1, MAX_FOR_REPORTS)
        latch = raw.get("latch", False)
        if not isinstance(latch, bool):
            raise InvalidRule("latch must be true or false")
        description = raw.get("description", "")
        if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
            raise InvalidRule(f"description must be text of at most {MAX_DESCRIPTION} characters")
        return cls(
            name=name,
            reading=reading,
            sensors=sensors,
            condition=str(condition),
            band=band,
            clear=clear,
            for_seconds=for_seconds,
            for_reports=for_reports,
            severity=_whole(raw.get("severity", 3), "severity", 1, 5),
            latch=latch,
            description=description,
        )

    @staticmethod
    def _sensors(value: object) -> tuple[int, ...] | None:
        if value == EVERY_SENSOR:
            return None
        if not isinstance(value, list) or not 1 <= len(value) <= MAX_RULE_SENSORS:
            raise InvalidRule(f'sensors must be "*" or a list of 1 to {MAX_RULE_SENSORS} sensor ids')
        ids = tuple(_whole(v, "a sensor id", 0, MAX_SENSOR_ID) for v in value)
        if len(set(ids)) != len(ids):
            raise InvalidRule("sensors lists a sensor twice")
        return tuple(sorted(ids))

    def breaches(self, value: Decimal) -> bool:
        """Whether ``value`` is beyond the threshold (band)."""
        low, high = self.band
        if self.condition == "above":
            return value > high
        if self.condition == "below":
            return value < low
        return value < low or value > high

    def clears(self, value: Decimal) -> bool:
        """Whether ``value`` is back at or within the clear level (band)."""
        low, high = self.clear
        if self.condition == "above":
            return value <= high
        if self.condition == "below":
            return value >= low
        return low <= value <= high

    def document(self) -> dict[str, Any]:
        """The rule as written (``parse`` reads it back to an equal rule); numbers as exact decimals."""
        out: dict[str, Any] = {
            "name": self.name,
            "reading": self.reading,
            "sensors": EVERY_SENSOR if self.sensors is None else list(self.sensors),
            "condition": self.condition,
        }
        if self.condition == "outside":
            out["band"] = list(self.band)
            out["clear"] = list(self.clear)
        else:
            out["threshold"] = self.band[0]
            out["clear"] = self.clear[0]
        if self.for_seconds:
            out["for_seconds"] = self.for_seconds
        if self.for_reports != 1:
            out["for_reports"] = self.for_reports
        out["severity"] = self.severity
        out["latch"] = self.latch
        if self.description:
            out["description"] = self.description
        return out


@dataclass(frozen=True)
class RuleSet:
    """Every rule, by name, at one version (the stored rule set's; 0 before any was stored)."""

    rules: tuple[AlarmRule, ...] = ()
    version: int = 0
    _by_reading: dict[tuple[int | None, str], tuple[AlarmRule, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        index: dict[tuple[int | None, str], list[AlarmRule]] = {}
        for rule in self.rules:
            for sensor in rule.sensors or (None,):
                index.setdefault((sensor, rule.reading), []).append(rule)
        self._by_reading.update({key: tuple(rules) for key, rules in index.items()})

    @classmethod
    def of(cls, rules: Iterable[AlarmRule], version: int = 0) -> RuleSet:
        """Rules checked as a set: names unique, at most ``MAX_RULES``."""
        listed = tuple(sorted(rules, key=lambda r: r.name))
        if len(listed) > MAX_RULES:
            raise InvalidRule(f"a rule set holds at most {MAX_RULES} rules, got {len(listed)}")
        names = [r.name for r in listed]
        for a, b in itertools.pairwise(names):
            if a == b:
                raise InvalidRule(f"rule {a} is given twice")
        return cls(listed, version)

    @classmethod
    def parse(cls, raw: object, version: int = 0) -> RuleSet:
        """A rule file's content: ``{"rules": [...]}`` or a list of rules."""
        if isinstance(raw, Mapping) and set(raw) == {"rules"}:
            raw = raw["rules"]
        if not isinstance(raw, list):
            raise InvalidRule('a rule file holds a list of rules, or {"rules": [...]}')
        return cls.of((AlarmRule.parse(r) for r in raw), version)

    def named(self, name: str) -> AlarmRule | None:
        return next((r for r in self.rules if r.name == name), None)

    def for_sensor(self, sensor_id: int) -> tuple[AlarmRule, ...]:
        """The rules that watch ``sensor_id``: for each reading, its own rules, else the fleet's."""
        readings = sorted({r.reading for r in self.rules})
        out: list[AlarmRule] = []
        for reading in readings:
            out += self._by_reading.get((sensor_id, reading)) or self._by_reading.get((None, reading), ())
        return tuple(out)

    def readings(self) -> frozenset[str]:
        return frozenset(r.reading for r in self.rules)

    def replaced(self, rule: AlarmRule) -> RuleSet:
        return RuleSet.of([r for r in self.rules if r.name != rule.name] + [rule], self.version)

    def without(self, name: str) -> RuleSet:
        return RuleSet.of([r for r in self.rules if r.name != name], self.version)

    def document(self) -> dict[str, Any]:
        return {"rules": [r.document() for r in self.rules]}
