"""The functions' environment, declared once: each variable's name, default and range (or choices),
and the construct prop whose value the construct gives it.

The construct reads these declarations for its props' defaults and rules and for the environment it
deploys (``PipelineShape.ingest_environment``, and ``PipelineShape.silence_environment`` for the read
API and the silence check); the runtime's ``IngestSettings.from_env`` and ``ApiSettings.from_env``
read the variables by them. A test holds the props and the settings to the same names, defaults and
ranges (``tests/unit/test_environment.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from sensor_digest import names
from sensor_digest.errors import ConfigurationError
from sensor_digest.silence.rules import MAX_HOURS, MIN_HOURS


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
    prop: str = ""  # the construct prop it carries ("": the construct derives it)

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
    """A whole number from ``low`` to ``high``, or none (``None``) when unset or blank; its prop's 0
    stands for none, and the construct then sets no variable."""

    name: str
    low: int
    high: int
    prop: str = ""

    def read(self, env: Mapping[str, str]) -> int | None:
        raw = env.get(self.name)
        if raw is None or raw.strip() == "":
            return None
        return Whole(self.name, self.low, self.low, self.high).read(env)


@dataclass(frozen=True)
class Choice:
    """One of ``choices``, the first the default (also for a blank value, unless ``strict``)."""

    name: str
    choices: tuple[str, ...]
    prop: str = ""
    strict: bool = False  # a blank value is refused, not the default

    @property
    def default(self) -> str:
        return self.choices[0]

    def read(self, env: Mapping[str, str]) -> str:
        value = env.get(self.name, self.default).strip()
        value = value if self.strict else value or self.default
        if value not in self.choices:
            raise ConfigurationError(f"{self.name} must be one of {', '.join(self.choices)}, got {value!r}")
        return value


@dataclass(frozen=True)
class Text:
    """Text, ``default`` when unset or blank (``required``: refused then)."""

    name: str
    default: str = ""
    prop: str = ""
    required: bool = False

    def read(self, env: Mapping[str, str]) -> str:
        value = env.get(self.name, self.default).strip() or self.default
        if self.required and not value:
            raise ConfigurationError(f"environment variable {self.name} is required")
        return value


def _values(kind: type[StrEnum]) -> tuple[str, ...]:
    return tuple(member.value for member in kind)


TABLE_NAME = Text("TABLE_NAME", required=True)
LEDGER_TABLE_NAME = Text("LEDGER_TABLE_NAME", required=True)
DLQ_URL = Text("DLQ_URL", required=True)
DIGEST_TIMEZONE = Text("DIGEST_TIMEZONE", "UTC", prop="digest_timezone")
DELIVERY_MODE = Choice("DELIVERY_MODE", _values(DeliveryMode), prop="delivery_mode", strict=True)
MARKER_TTL_SECONDS = Whole("MARKER_TTL_SECONDS", 43 * 24 * 3600, 3600, 366 * 24 * 3600)
"""Queue retention (14 d) + twice the dead-letter retention (14 d: the redrive window, once more for
a letter ``dlq stamp`` wrote again) + 1 d margin. The construct derives the same figure from its own
queue settings (``PipelineShape.marker_ttl_seconds``); this default only serves local runs."""
INGEST_MAX_WORKERS = Whole("INGEST_MAX_WORKERS", 8, 1, 64, prop="ingest_max_workers")
UNKNOWN_SENSORS = Choice("UNKNOWN_SENSORS", _values(UnknownSensors), prop="unknown_sensors")
PROFILE_CACHE_SECONDS = Whole("PROFILE_CACHE_SECONDS", 60, 0, 3600, prop="profile_cache_seconds")
# SQS's range for maxReceiveCount (the construct advises at least 5 for a Lambda event source)
MAX_RECEIVE_COUNT = Whole("MAX_RECEIVE_COUNT", 5, 1, 1000, prop="max_receive_count")
QUEUE_TYPE = Choice("QUEUE_TYPE", _values(QueueType), prop="queue_type")
LEDGER_MODE = Choice("LEDGER_MODE", _values(LedgerMode), prop="ledger_mode")

INGEST: tuple[Whole | Choice | Text, ...] = (
    TABLE_NAME,
    LEDGER_TABLE_NAME,
    DLQ_URL,
    DIGEST_TIMEZONE,
    DELIVERY_MODE,
    MARKER_TTL_SECONDS,
    INGEST_MAX_WORKERS,
    UNKNOWN_SENSORS,
    PROFILE_CACHE_SECONDS,
    MAX_RECEIVE_COUNT,
    QUEUE_TYPE,
    LEDGER_MODE,
)
"""Every variable of the ingest function, in the order the construct sets them."""

SILENCE_HOURS = WholeOrNone("SILENCE_HOURS", MIN_HOURS, MAX_HOURS, prop="silence_hours")
"""The default silence threshold in hours (``silence/rules.py``'s range); none: only sensors with a
threshold of their own can be silent."""

SILENCE: tuple[Whole | WholeOrNone | Choice | Text, ...] = (TABLE_NAME, DIGEST_TIMEZONE, SILENCE_HOURS)
"""Every variable of the read API (``GET /silence``) and of the scheduled silence check, in the order
the construct sets them (``SILENCE_HOURS`` only when ``silence_hours`` is set)."""

BY_PROP = {variable.prop: variable for variable in INGEST if variable.prop}
"""The variables a construct prop sets, by that prop."""

NAMES = frozenset({variable.name for variable in INGEST + SILENCE} | {names.PIPELINE_ENV})
"""Every variable the settings read: a handler's service is built again when one of them changes
(``entry.py``), as it does between two tests of a user's suite."""
