"""Every tunable of the stack in one place, with the context keys that override them.

``cdk deploy -c stackName=SensorDigestDev -c removal=destroy -c billing=provisioned`` and so on;
see the README's "Context options". Derived figures (visibility timeout, marker lifetime) are
computed here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from sensor_digest import zones
from sensor_digest.dead_letter_format import DEAD_LETTER_OVERHEAD_BYTES, SQS_MAX_MESSAGE_BYTES, source_queue_max_bytes

if TYPE_CHECKING:  # the CDK is imported where it is used: the benchmark reads these settings without it
    from aws_cdk import Duration, RemovalPolicy

POWERTOOLS_LAYER_ACCOUNT = "017000801446"
# Powertools for AWS Lambda (Python) 3.31.1, as pinned in requirements.txt; Powertools numbers its
# layer versions alike for every Python, so 36 is 3.31.1 for python313 as it was for python314
POWERTOOLS_LAYER_VERSION = 36
LAMBDA_PYTHON = "python313"  # infra/functions.py RUNTIME; `make test-unit-py313` runs the unit tier on it
FIFO_STACK_NAME_MAX = 30


class SettingsError(ValueError):
    """A context value is missing its meaning or out of range."""


@dataclass(frozen=True)
class Settings:
    stack_name: str = "SensorDigest"
    # storage
    billing: str = "on-demand"  # or "provisioned"
    read_capacity: int = 5
    write_capacity: int = 5
    removal: str = "retain"  # or "destroy" (a dev stack: tables, queues and logs go with the stack)
    # queue
    queue_type: str = "standard"  # or "fifo": ordered mode, a message group per sensor, no ledger
    queue_retention_days: int = 14
    dead_letter_retention_days: int = 14
    max_receive_count: int = 5
    dead_letter_max_message_bytes: int = SQS_MAX_MESSAGE_BYTES
    # ingest
    ingest_timeout_seconds: int = 30
    ingest_memory_mb: int = 512
    # chosen by measurement (README, "Benchmarks"): batches of 1,000 coalesce a sensor-day's
    # messages into one transaction; a 20 s window lets live traffic fill them (a message waits
    # at most 20 s); two invocations at once keep DynamoDB's transaction conflicts rare
    ingest_batch_size: int = 1000
    ingest_batching_window_seconds: int = 20
    ingest_max_concurrency: int = 2
    ingest_max_workers: int = 8
    # ordered mode (queueType=fifo): Lambda takes at most 10 messages a batch from a FIFO queue and
    # allows no batching window; a sensor is one message group, so no two invocations ever write
    # one sensor's day items at once, and more of them at a time cost nothing in conflicts
    fifo_batch_size: int = 10
    fifo_max_concurrency: int = 10
    delivery_mode: str = "exactly-once"
    digest_timezone: str = "UTC"
    unknown_sensors: str = "accept"  # or "reject": reports of unregistered sensors go to the DLQ
    profile_cache_seconds: int = 60
    # summary
    summary_timeout_seconds: int = 60
    summary_memory_mb: int = 256
    summary_batch_size: int = 1000  # several versions of a day item per batch coalesce into one write
    summary_batching_window_seconds: int = 5
    summary_retry_attempts: int = 10
    summary_max_record_age_hours: int = 24
    # monitoring
    log_retention_days: int = 30
    iterator_age_alarm_seconds: int = 300
    queue_age_alarm_seconds: int = 0  # 0: derived, see queue_age_threshold_seconds
    alarm_email: str = ""

    # -- derived, in one place -------------------------------------------------------------

    @property
    def table_name(self) -> str:
        """The contract's ``SensorDigest`` for the default stack; a dev stack gets its own tables."""
        return self.stack_name

    @property
    def ledger_table_name(self) -> str:
        return f"{self.stack_name}Ledger"

    @property
    def fifo(self) -> bool:
        return self.queue_type == "fifo"

    @property
    def event_batch_size(self) -> int:
        """The ingest event source's batch size: ``ingestBatchSize``, or ``fifoBatchSize`` on FIFO."""
        return self.fifo_batch_size if self.fifo else self.ingest_batch_size

    @property
    def event_batching_window_seconds(self) -> int:
        """The ingest event source's batching window (FIFO allows none)."""
        return 0 if self.fifo else self.ingest_batching_window_seconds

    @property
    def event_max_concurrency(self) -> int:
        return self.fifo_max_concurrency if self.fifo else self.ingest_max_concurrency

    @property
    def visibility_timeout_seconds(self) -> int:
        """Six times the function timeout plus the batching window (AWS's guidance for SQS sources)."""
        return 6 * self.ingest_timeout_seconds + self.event_batching_window_seconds

    @property
    def visibility_timeout(self) -> Duration:
        from aws_cdk import Duration  # noqa: PLC0415 - the CDK only where it is used (see the imports)

        return Duration.seconds(self.visibility_timeout_seconds)

    @property
    def ingest_max_message_bytes(self) -> int:
        """The ingest queue's ``MaximumMessageSize``: a rejected body is re-sent to the dead-letter
        queue with an ``error`` and a ``source_message_id`` attribute (each clipped to a fixed size,
        ``sensor_digest.dead_letter_format``), and SQS counts attributes toward the same limit, so the
        largest body the queue takes must still fit the dead-letter queue with them."""
        return source_queue_max_bytes(self.dead_letter_max_message_bytes)

    @property
    def queue_age_floor_seconds(self) -> int:
        """How old a message can grow while ingest works normally: every receive of it failing
        (``maxReceiveCount`` visibility timeouts) before SQS moves it to the dead-letter queue. The
        stall alarm's threshold must lie above it, or one retried message would look like a stall."""
        return self.max_receive_count * self.visibility_timeout_seconds

    @property
    def queue_age_threshold_seconds(self) -> int:
        """The stall alarm's threshold: ``queueAgeAlarmSeconds`` if set, else the retry floor plus
        five minutes, and never under 30 minutes (1,800 s with the default settings)."""
        return self.queue_age_alarm_seconds or max(1800, self.queue_age_floor_seconds + 300)

    @property
    def marker_ttl_seconds(self) -> int:
        """A marker must outlive every redelivery of its message: the queue's retention, plus the
        dead-letter queue's retention (the window in which a redrive can bring it back), plus a day."""
        return (self.queue_retention_days + self.dead_letter_retention_days + 1) * 24 * 3600

    @property
    def destroy(self) -> bool:
        return self.removal == "destroy"

    @property
    def removal_policy(self) -> RemovalPolicy:
        """Of every stateful resource: tables, queues, log groups."""
        from aws_cdk import RemovalPolicy  # noqa: PLC0415 - as above

        return RemovalPolicy.DESTROY if self.destroy else RemovalPolicy.RETAIN

    @property
    def powertools_layer_arn(self) -> str:
        return (
            f"arn:${{AWS::Partition}}:lambda:${{AWS::Region}}:{POWERTOOLS_LAYER_ACCOUNT}:layer:"
            f"AWSLambdaPowertoolsPythonV3-{LAMBDA_PYTHON}-arm64:{POWERTOOLS_LAYER_VERSION}"
        )

    # -- reading the context -----------------------------------------------------------------

    @classmethod
    def from_context(cls, get: Any) -> Settings:
        """``get`` is ``node.try_get_context``; context keys are the camelCase field names."""
        values: dict[str, Any] = {}
        for field in fields(cls):
            key = "".join(w.capitalize() if i else w for i, w in enumerate(field.name.split("_")))
            raw = get(key)
            if raw is None:
                continue
            values[field.name] = int(raw) if field.type == "int" else str(raw)
        settings = cls(**values)
        settings.validate()
        return settings

    def validate(self) -> None:
        checks = {
            "billing must be on-demand or provisioned": self.billing in ("on-demand", "provisioned"),
            "removal must be retain or destroy": self.removal in ("retain", "destroy"),
            "deliveryMode must be exactly-once or at-least-once": self.delivery_mode
            in ("exactly-once", "at-least-once"),
            "queueType must be standard or fifo": self.queue_type in ("standard", "fifo"),
            "queueType=fifo counts exactly once by sequence number: leave deliveryMode exactly-once": not (
                self.fifo and self.delivery_mode == "at-least-once"
            ),
            "fifoBatchSize must be 1 to 10 (Lambda's limit for FIFO queues)": 1 <= self.fifo_batch_size <= 10,
            "fifoMaxConcurrency must be 2 to 1000": 2 <= self.fifo_max_concurrency <= 1000,
            # CloudFormation names a FIFO queue <stack>-<logical id>-<suffix>.fifo and does not
            # shorten it to SQS's 80 characters (aws-cdk#11041): the logical ids here take 49
            f"queueType=fifo needs a stackName of at most {FIFO_STACK_NAME_MAX} characters "
            "(CloudFormation's generated FIFO queue names must stay within SQS's 80)": not (
                self.fifo and len(self.stack_name) > FIFO_STACK_NAME_MAX
            ),
            "maxReceiveCount must be at least 5": self.max_receive_count >= 5,
            f"deadLetterMaxMessageBytes must be {1024 + DEAD_LETTER_OVERHEAD_BYTES} to {SQS_MAX_MESSAGE_BYTES}": (
                1024 + DEAD_LETTER_OVERHEAD_BYTES <= self.dead_letter_max_message_bytes <= SQS_MAX_MESSAGE_BYTES
            ),
            # the functions load zones from the tzdata the asset ships (infra/assets.py), nothing else
            f"digestTimezone {self.digest_timezone!r} is not an IANA time zone of tzdata {zones.TZDATA_VERSION}, "
            "the zone data the functions ship": zones.is_known(self.digest_timezone),
            "unknownSensors must be accept or reject": self.unknown_sensors in ("accept", "reject"),
            "profileCacheSeconds must be 0 to 3600": 0 <= self.profile_cache_seconds <= 3600,
            "ingestBatchSize must be 1 to 10000": 1 <= self.ingest_batch_size <= 10_000,
            "ingestBatchingWindowSeconds must be 0 to 300": 0 <= self.ingest_batching_window_seconds <= 300,
            "ingestMaxConcurrency must be 2 to 1000": 2 <= self.ingest_max_concurrency <= 1000,
            "queue retention must be 1 to 14 days": 1 <= self.queue_retention_days <= 14,
            "summaryMaxRecordAgeHours must be 1 to 168": 1 <= self.summary_max_record_age_hours <= 168,
            "summaryRetryAttempts must be 0 to 10000": 0 <= self.summary_retry_attempts <= 10_000,
            "queueAgeAlarmSeconds must be 0 (derived) or exceed maxReceiveCount visibility timeouts": (
                self.queue_age_alarm_seconds == 0
                or self.queue_age_floor_seconds < self.queue_age_alarm_seconds <= 14 * 24 * 3600
            ),
            "logRetentionDays must be 7, 14, 30, 90 or 365": self.log_retention_days in (7, 14, 30, 90, 365),
            "stackName must be 3 to 200 letters, digits, . _ -": 3 <= len(self.stack_name) <= 200,
        }
        failed = [message for message, ok in checks.items() if not ok]
        if failed:
            raise SettingsError("; ".join(failed))
