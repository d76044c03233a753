"""Typed configuration, read once from the environment and validated at cold start.

Logic never reads ``os.environ``; handlers call ``*.from_env()`` once and pass the result in.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Self
from zoneinfo import ZoneInfo

from sensor_digest import environment, names, zones
from sensor_digest.environment import DeliveryMode, LedgerMode, QueueType
from sensor_digest.errors import ConfigurationError, UnknownTimeZone

DEFAULT_MARKER_TTL_SECONDS = environment.MARKER_TTL_SECONDS.default
ENVIRONMENT_VARIABLES = environment.NAMES

__all__ = [
    "ENVIRONMENT_VARIABLES",
    "ApiSettings",
    "DeliveryMode",
    "IngestSettings",
    "LedgerMode",
    "QueueType",
    "SilenceSettings",
    "SummarySettings",
    "TableSettings",
    "pipeline_name",
]


def _zone(name: str) -> ZoneInfo:
    """``DIGEST_TIMEZONE`` from the zone data the functions ship (``zones.py``), never the machine's."""
    try:
        return zones.load(name)
    except UnknownTimeZone as exc:
        raise ConfigurationError(f"DIGEST_TIMEZONE: {exc.reason}") from exc


@dataclass(frozen=True)
class IngestSettings:
    """The ingest function's settings; each variable's name, default and range are declared once in
    ``environment.py``, which the construct reads too."""

    table_name: str
    ledger_table_name: str
    dlq_url: str
    timezone: ZoneInfo
    delivery_mode: DeliveryMode = DeliveryMode.EXACTLY_ONCE
    marker_ttl_seconds: int = environment.MARKER_TTL_SECONDS.default
    max_workers: int = environment.INGEST_MAX_WORKERS.default
    unknown_sensors: str = environment.UNKNOWN_SENSORS.default
    profile_cache_seconds: int = environment.PROFILE_CACHE_SECONDS.default
    queue_type: QueueType = QueueType.STANDARD
    max_receive_count: int = environment.MAX_RECEIVE_COUNT.default  # then SQS moves a message away
    ledger_mode: LedgerMode = LedgerMode.COMPACT

    def __post_init__(self) -> None:
        if self.queue_type is QueueType.FIFO and self.delivery_mode is DeliveryMode.AT_LEAST_ONCE:
            raise ConfigurationError(
                "QUEUE_TYPE=fifo counts exactly once by sequence number at the cost of at-least-once; "
                "DELIVERY_MODE=at-least-once has nothing to save there (leave it exactly-once)"
            )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> IngestSettings:
        got = os.environ if env is None else env
        mode = DeliveryMode(environment.DELIVERY_MODE.read(got))
        return cls(
            table_name=environment.TABLE_NAME.read(got),
            ledger_table_name=environment.LEDGER_TABLE_NAME.read(got),
            dlq_url=environment.DLQ_URL.read(got),
            timezone=_zone(environment.DIGEST_TIMEZONE.read(got)),
            delivery_mode=mode,
            marker_ttl_seconds=environment.MARKER_TTL_SECONDS.read(got),
            max_workers=environment.INGEST_MAX_WORKERS.read(got),
            unknown_sensors=environment.UNKNOWN_SENSORS.read(got),
            profile_cache_seconds=environment.PROFILE_CACHE_SECONDS.read(got),
            queue_type=QueueType(environment.QUEUE_TYPE.read(got)),
            max_receive_count=environment.MAX_RECEIVE_COUNT.read(got),
            ledger_mode=LedgerMode(environment.LEDGER_MODE.read(got)),
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
        return cls(table_name=environment.TABLE_NAME.read(os.environ if env is None else env))


@dataclass(frozen=True)
class SummarySettings(TableSettings):
    """The summary's: the digest table whose day items it folds into monthly summary items."""


@dataclass(frozen=True)
class ApiSettings(TableSettings):
    """The read API's: the digest table it reads (and the ``Profiles`` index on it); for
    ``GET /silence``, the default silence threshold (``SILENCE_HOURS``) and the zone of sensors
    registered without one (``DIGEST_TIMEZONE``), declared in ``environment.py``."""

    silence_hours: int | None = None
    timezone: ZoneInfo = field(default_factory=lambda: ZoneInfo("UTC"))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Self:
        got = os.environ if env is None else env
        return cls(
            table_name=environment.TABLE_NAME.read(got),
            silence_hours=environment.SILENCE_HOURS.read(got),
            timezone=_zone(environment.DIGEST_TIMEZONE.read(got)),
        )


@dataclass(frozen=True)
class SilenceSettings(ApiSettings):
    """The scheduled silence check's: the same as the read API's ``GET /silence``."""
