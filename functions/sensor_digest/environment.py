"""How a function reads its environment: the kinds of variable (a whole number, a whole number or
none, one of some choices, text, a time zone), each read once at cold start and refused in one line
when it is out of its range; and ``Settings``, the base of the functions' typed settings.

Each variable is declared once, with its name, default and range, in ``config.py``, beside the one
typed model per function that reads it: a field of a model reads its variable (``setting``), the
model's ``from_env`` reads every field so, and a field's default is what its variable reads when
unset. The construct deploys the same declarations (``PipelineShape.function_environment``): a prop
that carries a variable takes its default and range from it (``sensor_digest_cdk.tunables.carried``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, Generic, Self, TypeVar
from zoneinfo import ZoneInfo

from sensor_digest import zones
from sensor_digest.errors import ConfigurationError, UnknownTimeZone

E = TypeVar("E", bound=StrEnum)
VARIABLE = "variable"  # where a field of a settings model keeps its variable (its metadata)


class DeliveryMode(StrEnum):
    EXACTLY_ONCE = "exactly-once"
    AT_LEAST_ONCE = "at-least-once"


class LedgerMode(StrEnum):
    """How exactly-once ingest on a standard queue remembers what it counted (``LEDGER_MODE``):
    ``compact`` keeps a sensor-day's identities as hashes in its day item, then in ledger pages;
    ``per-message`` writes one marker per message (``MSG#<sensor_id>#<event_id>``), the strict
    identity rule across days, at about four times the write units (counting/ledger.py)."""

    COMPACT = "compact"
    PER_MESSAGE = "per-message"


class QueueType(StrEnum):
    """The kind of queue ingest reads: ``standard`` (the ledger makes counts exact) or ``fifo``
    (one message group per sensor; each day item remembers the last sequence number applied)."""

    STANDARD = "standard"
    FIFO = "fifo"


class UnknownSensors(StrEnum):
    """What ingest does with a report of a sensor the registry does not hold."""

    ACCEPT = "accept"
    REJECT = "reject"


@dataclass(frozen=True)
class Whole:
    """A whole number from ``low`` to ``high``; ``default`` when unset or blank."""

    name: str
    default: int
    low: int
    high: int

    def read(self, env: Mapping[str, str]) -> int:
        raw = env.get(self.name)
        if raw is None or raw.strip() == "":
            return self.default
        try:
            value = int(raw)
        except ValueError as exc:
            raise ConfigurationError(f"{self.name} must be an integer, got {raw!r}") from exc
        if not self.low <= value <= self.high:
            raise ConfigurationError(f"{self.name} must be between {self.low} and {self.high}, got {value}")
        return value


@dataclass(frozen=True)
class WholeOrNone:
    """A whole number from ``low`` to ``high``, or none (``None``) when unset or blank."""

    name: str
    low: int
    high: int

    def read(self, env: Mapping[str, str]) -> int | None:
        raw = env.get(self.name)
        if raw is None or raw.strip() == "":
            return None
        return Whole(self.name, self.low, self.low, self.high).read(env)


@dataclass(frozen=True)
class Choice(Generic[E]):
    """One of the values of ``kind``, the first the default (also for a blank value, unless ``strict``)."""

    name: str
    kind: type[E]
    strict: bool = False  # a blank value is refused, not the default

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(member.value for member in self.kind)

    @property
    def default(self) -> str:
        return self.choices[0]

    def read(self, env: Mapping[str, str]) -> E:
        value = env.get(self.name, self.default).strip()
        value = value if self.strict else value or self.default
        if value not in self.choices:
            raise ConfigurationError(f"{self.name} must be one of {', '.join(self.choices)}, got {value!r}")
        return self.kind(value)


@dataclass(frozen=True)
class Text:
    """Text, ``default`` when unset or blank (``required``: refused then)."""

    name: str
    default: str = ""
    required: bool = False

    def read(self, env: Mapping[str, str]) -> str:
        value = env.get(self.name, self.default).strip() or self.default
        if self.required and not value:
            raise ConfigurationError(f"environment variable {self.name} is required")
        return value


@dataclass(frozen=True)
class Zone:
    """An IANA time zone of the zone data the functions ship (``zones.py``), never the machine's;
    ``default`` when unset or blank."""

    name: str
    default: str = "UTC"

    def read(self, env: Mapping[str, str]) -> ZoneInfo:
        try:
            return zones.load(Text(self.name, self.default).read(env))
        except UnknownTimeZone as exc:
            raise ConfigurationError(f"{self.name}: {exc.reason}") from exc


Variable = Whole | WholeOrNone | Choice[Any] | Text | Zone
"""A variable a function reads: its name, default and range, and how it is read."""


def setting(variable: Variable) -> Any:
    """A field of a settings model that reads ``variable``; its default is what the variable reads
    when unset (none for a required one)."""
    metadata = {VARIABLE: variable}
    if isinstance(variable, Text) and variable.required:
        return field(metadata=metadata)
    if isinstance(variable, Zone):
        return field(default_factory=lambda: variable.read({}), metadata=metadata)
    return field(default=variable.read({}), metadata=metadata)


@dataclass(frozen=True)
class Settings:
    """A function's typed settings: every field reads one variable (``setting``), in field order."""

    @classmethod
    def variables(cls) -> tuple[Variable, ...]:
        """The variables the function reads, in the order its fields (and the construct) name them."""
        return tuple(f.metadata[VARIABLE] for f in fields(cls) if VARIABLE in f.metadata)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Self:
        """The settings ``env`` (else ``os.environ``) sets, each variable checked; ``ConfigurationError``
        (one line) names the first one out of its range."""
        got = os.environ if env is None else env
        return cls(**{f.name: f.metadata[VARIABLE].read(got) for f in fields(cls) if VARIABLE in f.metadata})
