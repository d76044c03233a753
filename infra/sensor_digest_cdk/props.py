"""The construct's keyword props as a type: ``PipelineProps``, one key per tunable, with its type.

Written from ``tunables.py`` by ``python -m sensor_digest_cdk.props_writer --write`` (``make generated``):
not edited by hand; ``tests/repository/test_generated.py`` fails when it differs from what that writes.
"""

from __future__ import annotations

from typing import TypedDict

from sensor_digest_cdk.tunables import (
    BillingName,
    DeliveryModeName,
    LedgerName,
    QueueTypeName,
    RemovalName,
    UnknownSensorsName,
)

__all__ = [
    "BillingName",
    "DeliveryModeName",
    "LedgerName",
    "PipelineProps",
    "QueueTypeName",
    "RemovalName",
    "UnknownSensorsName",
]


class PipelineProps(TypedDict, total=False):
    """The keyword props of ``SensorDigestPipeline``: every field of ``PipelineShape``."""

    table_name: str
    ledger_table_name: str
    dashboard_name: str
    billing: BillingName
    read_capacity: int
    write_capacity: int
    removal: RemovalName
    queue_type: QueueTypeName
    queue_retention_days: int
    dead_letter_retention_days: int
    max_receive_count: int
    dead_letter_max_message_bytes: int
    ingest_timeout_seconds: int
    ingest_memory_mb: int
    ingest_batch_size: int
    ingest_batching_window_seconds: int
    ingest_max_concurrency: int
    ingest_max_workers: int
    fifo_batch_size: int
    fifo_max_concurrency: int
    delivery_mode: DeliveryModeName
    ledger_mode: LedgerName
    digest_timezone: str
    unknown_sensors: UnknownSensorsName
    profile_cache_seconds: int
    summary_timeout_seconds: int
    summary_memory_mb: int
    summary_batch_size: int
    summary_batching_window_seconds: int
    summary_retry_attempts: int
    summary_max_record_age_hours: int
    api_timeout_seconds: int
    api_memory_mb: int
    api_throttle_rate_limit: int
    api_throttle_burst_limit: int
    log_retention_days: int
    iterator_age_alarm_seconds: int
    queue_age_alarm_seconds: int
    alarm_email: str
    iot_topic: str
    iot_rule_name: str
    iot_readings: tuple[str, ...]
    restrict_producers: bool
    producer_arns: tuple[str, ...]
    import_enabled: bool
    import_max_concurrency: int
    silence_hours: int
