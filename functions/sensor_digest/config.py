"""The functions' settings: each variable of their environment declared once (name, default, range),
and one typed model per function's environment, read once and validated at cold start.

Logic never reads ``os.environ``; handlers call ``*.from_env()`` once and pass the result in. A
model's fields read their variables (``environment.setting``); the construct deploys them from the
same declarations (a prop carries a variable: ``sensor_digest_cdk.tunables.carried``), so adding a
variable a function reads is its declaration and its field here, and the prop that carries it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from sensor_digest import names
from sensor_digest.environment import (
    Choice,
    DeliveryMode,
    LedgerMode,
    QueueType,
    Settings,
    Text,
    UnknownSensors,
    Whole,
    WholeOrNone,
    Zone,
    setting,
)
from sensor_digest.errors import ConfigurationError
from sensor_digest.silence.rules import MAX_HOURS, MIN_HOURS

__all__ = [
    "ENVIRONMENT_VARIABLES",
    "ApiSettings",
    "DeliveryMode",
    "ImportSettings",
    "IngestSettings",
    "LedgerMode",
    "QueueType",
    "SilenceSettings",
    "SummarySettings",
    "TableSettings",
    "UnknownSensors",
    "pipeline_name",
]

TABLE_NAME = Text("TABLE_NAME", required=True)
LEDGER_TABLE_NAME = Text("LEDGER_TABLE_NAME", required=True)
DLQ_URL = Text("DLQ_URL", required=True)
DIGEST_TIMEZONE = Zone("DIGEST_TIMEZONE", "UTC")
DELIVERY_MODE = Choice("DELIVERY_MODE", DeliveryMode, strict=True)
MARKER_TTL_SECONDS = Whole("MARKER_TTL_SECONDS", 43 * 24 * 3600, 3600, 366 * 24 * 3600)
"""Queue retention (14 d) + twice the dead-letter retention (14 d: the redrive window, once more for
a letter ``dlq stamp`` wrote again) + 1 d margin. The construct derives the same figure from its own
queue settings (``PipelineShape.marker_ttl_seconds``); this default only serves local runs."""
INGEST_MAX_WORKERS = Whole("INGEST_MAX_WORKERS", 8, 1, 64)
UNKNOWN_SENSORS = Choice("UNKNOWN_SENSORS", UnknownSensors)
PROFILE_CACHE_SECONDS = Whole("PROFILE_CACHE_SECONDS", 60, 0, 3600)
# SQS's range for maxReceiveCount (the construct advises at least 5 for a Lambda event source)
MAX_RECEIVE_COUNT = Whole("MAX_RECEIVE_COUNT", 5, 1, 1000)
QUEUE_TYPE = Choice("QUEUE_TYPE", QueueType)
LEDGER_MODE = Choice("LEDGER_MODE", LedgerMode)
IMPORT_BUCKET = Text("IMPORT_BUCKET", required=True)
"""The history import's bucket: its inputs, and the reports of its batches (docs/import.md)."""
SILENCE_HOURS = WholeOrNone("SILENCE_HOURS", MIN_HOURS, MAX_HOURS)
"""The default silence threshold in hours (``silence/rules.py``'s range); none: only sensors with a
threshold of their own can be silent."""

DEFAULT_MARKER_TTL_SECONDS = MARKER_TTL_SECONDS.default
DEADLINE_MARGIN_SECONDS = 3.0
"""Time ingest keeps free before Lambda's timeout for what follows the writes (the response, the
logs): no dead letter is sent, no group written, no transaction retried past it. The construct's
shortest ingest timeout keeps room for it (``sensor_digest_cdk.rules.INGEST_MIN_TIMEOUT_SECONDS``)."""


def ordered_at_least_once(queue_type: str, delivery_mode: str, queue_key: str, mode_key: str) -> str | None:
    """The one pair of ingest's values refused together, in the caller's names for the two keys (the
    variables here, the props or context keys in the construct); ``None`` when the pair is taken."""
    if queue_type == QueueType.FIFO and delivery_mode == DeliveryMode.AT_LEAST_ONCE:
        return f"{queue_key}=fifo counts exactly once by sequence number: leave {mode_key} exactly-once"
    return None


@dataclass(frozen=True)
class IngestSettings(Settings):
    """The ingest function's settings, in the order the construct sets its variables."""

    table_name: str = setting(TABLE_NAME)
    ledger_table_name: str = setting(LEDGER_TABLE_NAME)
    dlq_url: str = setting(DLQ_URL)
    timezone: ZoneInfo = setting(DIGEST_TIMEZONE)
    delivery_mode: DeliveryMode = setting(DELIVERY_MODE)
    marker_ttl_seconds: int = setting(MARKER_TTL_SECONDS)
    max_workers: int = setting(INGEST_MAX_WORKERS)
    unknown_sensors: UnknownSensors = setting(UNKNOWN_SENSORS)
    profile_cache_seconds: int = setting(PROFILE_CACHE_SECONDS)
    max_receive_count: int = setting(MAX_RECEIVE_COUNT)  # then SQS moves a message away
    queue_type: QueueType = setting(QUEUE_TYPE)
    ledger_mode: LedgerMode = setting(LEDGER_MODE)

    def __post_init__(self) -> None:
        refused = ordered_at_least_once(self.queue_type, self.delivery_mode, QUEUE_TYPE.name, DELIVERY_MODE.name)
        if refused:
            raise ConfigurationError(refused)


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
class TableSettings(Settings):
    """A function's that reads or updates the digest table only: ``TABLE_NAME``."""

    table_name: str = setting(TABLE_NAME)


@dataclass(frozen=True)
class SummarySettings(TableSettings):
    """The summary's: the digest table whose day items it folds into monthly summary items."""


@dataclass(frozen=True)
class AnnouncerSettings(TableSettings):
    """The alarm announcer's: the digest table whose alarm items' transitions it announces on the
    account's default event bus, and whose alarm log it keeps."""


@dataclass(frozen=True)
class ApiSettings(TableSettings):
    """The read API's: the digest table it reads (and the ``Profiles`` and ``Alarms`` indexes on it);
    the ledger, for the alarm rules (``LEDGER_TABLE_NAME``); for ``GET /silence``, the zone of sensors
    registered without one (``DIGEST_TIMEZONE``) and the default silence threshold (``SILENCE_HOURS``)."""

    ledger_table_name: str = setting(LEDGER_TABLE_NAME)
    timezone: ZoneInfo = setting(DIGEST_TIMEZONE)
    silence_hours: int | None = setting(SILENCE_HOURS)


@dataclass(frozen=True)
class SilenceSettings(TableSettings):
    """The scheduled silence check's: the read API's ``GET /silence`` (its zone and default threshold),
    without the ledger."""

    timezone: ZoneInfo = setting(DIGEST_TIMEZONE)
    silence_hours: int | None = setting(SILENCE_HOURS)


@dataclass(frozen=True)
class ImportSettings(Settings):
    """The history import's functions' (docs/import.md): the tables, the import's bucket, and how a row
    is dated and whose rows are refused, as ingest does (``DIGEST_TIMEZONE``, ``UNKNOWN_SENSORS``)."""

    table_name: str = setting(TABLE_NAME)
    ledger_table_name: str = setting(LEDGER_TABLE_NAME)
    import_bucket: str = setting(IMPORT_BUCKET)
    timezone: ZoneInfo = setting(DIGEST_TIMEZONE)
    unknown_sensors: UnknownSensors = setting(UNKNOWN_SENSORS)
    profile_cache_seconds: int = setting(PROFILE_CACHE_SECONDS)


ENVIRONMENT_VARIABLES = frozenset(
    {
        v.name
        for model in (IngestSettings, SummarySettings, AnnouncerSettings, ApiSettings, ImportSettings)
        for v in model.variables()
    }
    | {names.PIPELINE_ENV}
)
"""Every variable the settings read: a handler's service is built again when one of them changes
(``entry.py``), as it does between two tests of a user's suite."""
