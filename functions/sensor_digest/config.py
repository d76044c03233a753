"""Typed configuration, read once from the environment and validated at cold start.

Logic never reads ``os.environ``; handlers call ``*.from_env()`` once and pass the result in.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Self
from zoneinfo import ZoneInfo

from sensor_digest import names, zones
from sensor_digest.errors import ConfigurationError, UnknownTimeZone
from sensor_digest.silence.rules import MAX_HOURS, MIN_HOURS

DEFAULT_MARKER_TTL_SECONDS = 43 * 24 * 3600
"""Queue retention (14 d) + twice the dead-letter retention (14 d: the redrive window, once more for
a letter ``dlq stamp`` wrote again) + 1 d margin.

The stack derives the same figure from its own queue settings and passes it as
``MARKER_TTL_SECONDS`` (``sensor_digest_cdk/shape.py``); this default only serves local runs.
"""


ENVIRONMENT_VARIABLES = frozenset(
    {
        "TABLE_NAME",
        "LEDGER_TABLE_NAME",
        "DLQ_URL",
        "DIGEST_TIMEZONE",
        "DELIVERY_MODE",
        "QUEUE_TYPE",
        "MARKER_TTL_SECONDS",
        "INGEST_MAX_WORKERS",
        "UNKNOWN_SENSORS",
        "PROFILE_CACHE_SECONDS",
        "MAX_RECEIVE_COUNT",
        "LEDGER_MODE",
        "SILENCE_HOURS",
        names.PIPELINE_ENV,
    }
)
"""Every variable the settings read (``from_env``): a handler's service is built again when one of
them changes (``entry.py``), as it does between two tests of a user's suite."""


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


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ConfigurationError(f"environment variable {name} is required")
    return value


def _zone(name: str) -> ZoneInfo:
    """``DIGEST_TIMEZONE`` from the zone data the functions ship (``zones.py``), never the machine's."""
    try:
        return zones.load(name)
    except UnknownTimeZone as exc:
        raise ConfigurationError(f"DIGEST_TIMEZONE: {exc.reason}") from exc


def _int(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ConfigurationError(f"{name} must be an integer, got {raw!r}") from exc
    if not low <= value <= high:
        raise ConfigurationError(f"{name} must be between {low} and {high}, got {value}")
    return value


def _choice(env: Mapping[str, str], name: str, allowed: tuple[str, ...]) -> str:
    value = env.get(name, allowed[0]).strip() or allowed[0]
    if value not in allowed:
        raise ConfigurationError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


@dataclass(frozen=True)
class IngestSettings:
    table_name: str
    ledger_table_name: str
    dlq_url: str
    timezone: ZoneInfo
    delivery_mode: DeliveryMode = DeliveryMode.EXACTLY_ONCE
    marker_ttl_seconds: int = DEFAULT_MARKER_TTL_SECONDS
    max_workers: int = 8
    unknown_sensors: str = "accept"
    profile_cache_seconds: int = 60
    queue_type: QueueType = QueueType.STANDARD
    max_receive_count: int = 5  # the ingest queue's: after that many receives SQS moves a message away
    ledger_mode: LedgerMode = LedgerMode.COMPACT

    def __post_init__(self) -> None:
        if self.queue_type is QueueType.FIFO and self.delivery_mode is DeliveryMode.AT_LEAST_ONCE:
            raise ConfigurationError(
                "QUEUE_TYPE=fifo counts exactly once by sequence number at the cost of at-least-once; "
                "DELIVERY_MODE=at-least-once has nothing to save there (leave it exactly-once)"
            )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> IngestSettings:
        env = os.environ if env is None else env
        mode_raw = env.get("DELIVERY_MODE", DeliveryMode.EXACTLY_ONCE.value).strip()
        try:
            mode = DeliveryMode(mode_raw)
        except ValueError as exc:
            allowed = ", ".join(m.value for m in DeliveryMode)
            raise ConfigurationError(f"DELIVERY_MODE must be one of {allowed}, got {mode_raw!r}") from exc
        return cls(
            table_name=_required(env, "TABLE_NAME"),
            ledger_table_name=_required(env, "LEDGER_TABLE_NAME"),
            dlq_url=_required(env, "DLQ_URL"),
            timezone=_zone(env.get("DIGEST_TIMEZONE", "UTC").strip() or "UTC"),
            delivery_mode=mode,
            marker_ttl_seconds=_int(env, "MARKER_TTL_SECONDS", DEFAULT_MARKER_TTL_SECONDS, 3600, 366 * 24 * 3600),
            max_workers=_int(env, "INGEST_MAX_WORKERS", 8, 1, 64),
            unknown_sensors=_choice(env, "UNKNOWN_SENSORS", ("accept", "reject")),
            profile_cache_seconds=_int(env, "PROFILE_CACHE_SECONDS", 60, 0, 3600),
            queue_type=QueueType(_choice(env, "QUEUE_TYPE", tuple(t.value for t in QueueType))),
            max_receive_count=_int(env, "MAX_RECEIVE_COUNT", 5, 1, 1000),
            ledger_mode=LedgerMode(_choice(env, "LEDGER_MODE", tuple(m.value for m in LedgerMode))),
        )


PIPELINE_NAME_MAX = 255


def pipeline_name(env: Mapping[str, str] | None = None) -> str | None:
    """The value of the metrics' ``pipeline`` dimension (``SENSOR_DIGEST_PIPELINE``, set by the
    construct on every function it builds); ``None`` when unset (a handler run outside the
    construct publishes its metrics by service alone). CloudWatch takes a dimension value of ASCII
    with something other than blanks in it."""
    env = os.environ if env is None else env
    raw = env.get(names.PIPELINE_ENV)
    if raw is None or raw == "":
        return None
    if not raw.isascii() or not raw.strip() or len(raw) > PIPELINE_NAME_MAX:
        raise ConfigurationError(
            f"{names.PIPELINE_ENV} must be 1 to {PIPELINE_NAME_MAX} ASCII characters, not all blank, got {raw[:40]!r}"
        )
    return raw


@dataclass(frozen=True)
class TableSettings:
    """A function's that reads or updates the digest table only: ``TABLE_NAME``."""

    table_name: str

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Self:
        env = os.environ if env is None else env
        return cls(table_name=_required(env, "TABLE_NAME"))


@dataclass(frozen=True)
class SummarySettings(TableSettings):
    """The summary's: the digest table whose day items it folds into monthly summary items."""


def silence_hours(env: Mapping[str, str]) -> int | None:
    """``SILENCE_HOURS``: the stack's default silence threshold in hours (``silence/rules.py``'s
    range); unset or empty: none (only sensors with their own threshold can be silent)."""
    raw = env.get("SILENCE_HOURS", "").strip()
    return None if raw == "" else _int(env, "SILENCE_HOURS", 0, MIN_HOURS, MAX_HOURS)


@dataclass(frozen=True)
class ApiSettings(TableSettings):
    """The read API's: the digest table it reads (and the ``Profiles`` index on it); for
    ``GET /silence``, the default silence threshold (``SILENCE_HOURS``) and the zone of sensors
    registered without one (``DIGEST_TIMEZONE``)."""

    silence_hours: int | None = None
    timezone: ZoneInfo = field(default_factory=lambda: ZoneInfo("UTC"))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Self:
        env = os.environ if env is None else env
        return cls(
            table_name=_required(env, "TABLE_NAME"),
            silence_hours=silence_hours(env),
            timezone=_zone(env.get("DIGEST_TIMEZONE", "UTC").strip() or "UTC"),
        )


@dataclass(frozen=True)
class SilenceSettings(ApiSettings):
    """The scheduled silence check's: the same as the read API's ``GET /silence``."""
