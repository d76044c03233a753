"""Every tunable of the stack in one place, with the context keys that override them.

``cdk deploy -c stackName=SensorDigestDev -c removal=destroy -c billing=provisioned`` and so on;
see the README's "Context options". Derived figures (visibility timeout, marker lifetime) are
computed here and nowhere else.

Every context value is checked at synth, before a construct exists (``Settings.from_context``): its
type (a ``-c key=value`` arrives as text, a value in cdk.json as its JSON type), its range
(``RULES``, one per field), the limits AWS puts on what is derived from several of them, and the
keys themselves: an unknown key that looks like one of these is refused with the nearest name
(CDK's own keys and unrelated ones pass). ``SettingsError.problems`` holds one line per problem,
each naming the key, the value and what is allowed; app.py prints them without a traceback.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
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
STACK_NAME_MAX = 128  # CloudFormation's limit
STACK_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*")  # CloudFormation's (and CDK's) rule for stack names
TABLE_NAME_MIN = 3  # DynamoDB's shortest table name; the digest table is named after the stack
LAMBDA_MAX_TIMEOUT_SECONDS = 900
API_MAX_TIMEOUT_SECONDS = 29  # the function's; API Gateway's HTTP API waits at most 30 s (one more)
SQS_MAX_VISIBILITY_TIMEOUT_SECONDS = 12 * 3600
SQS_MAX_RETENTION_DAYS = 14
LOG_RETENTION_DAYS = (7, 14, 30, 90, 365)  # the retentions lambda_function.RETENTION maps
EMAIL = re.compile(r"[^@\s]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")  # its shape, no more
EMAIL_MAX = 254
# Context keys of CDK itself (feature flags, the CLI's own settings): never ours, never checked.
CDK_KEY_PREFIXES = ("@aws-cdk", "aws:cdk:", "aws-cdk:", "cdk-", "cdk:")
WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")


class SettingsError(ValueError):
    """Context the stack cannot be built from: ``problems`` holds one line per problem, each naming
    the key, the value given and what the key allows."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


@dataclass(frozen=True)
class Rule:
    """What one key takes: ``allowed`` as an error states it, ``ok`` the test of a parsed value,
    ``hint`` (optional) a suggestion for a refused one."""

    allowed: str
    ok: Callable[[Any], bool]
    hint: Callable[[Any], str] | None = None


def _between(low: int, high: int, why: str = "") -> Rule:
    allowed = f"a whole number from {low} to {high}" + (f" ({why})" if why else "")
    return Rule(allowed, lambda value: low <= value <= high)


def _one_of(*choices: object) -> Rule:
    *first, last = map(str, choices)
    return Rule(f"{', '.join(first)} or {last}", lambda value: value in choices)


def _zone_hint(name: str) -> str:
    for prefix in ("posix/", "right/"):  # a machine's copies of the zones (right/: with leap seconds)
        if name.startswith(prefix) and zones.is_known(name[len(prefix) :]):
            return f"; use {name[len(prefix) :]!r}"
    return ""


_FUNCTION_MEMORY = _between(128, 10_240, "Lambda's memory sizes, in MB")
_FUNCTION_TIMEOUT = _between(1, LAMBDA_MAX_TIMEOUT_SECONDS, "Lambda's longest timeout")
_RETENTION_DAYS = _between(1, SQS_MAX_RETENTION_DAYS, "SQS keeps a message at most 14 days")
_BATCHING_WINDOW = _between(0, 300, "Lambda's longest batching window")
_EVENT_SOURCE_CONCURRENCY = _between(2, 1000, "the SQS event source's maximum concurrency")
_CAPACITY = _between(1, 40_000, "DynamoDB's default quota per table; with billing=provisioned")

RULES: dict[str, Rule] = {
    "stack_name": Rule(
        f"{TABLE_NAME_MIN} to {STACK_NAME_MAX} letters, digits and hyphens, starting with a letter "
        "(CloudFormation's stack names; the tables are named after it)",
        lambda name: TABLE_NAME_MIN <= len(name) <= STACK_NAME_MAX and STACK_NAME.fullmatch(name) is not None,
    ),
    "billing": _one_of("on-demand", "provisioned"),
    "read_capacity": _CAPACITY,
    "write_capacity": _CAPACITY,
    "removal": _one_of("retain", "destroy"),
    "queue_type": _one_of("standard", "fifo"),
    "queue_retention_days": _RETENTION_DAYS,
    "dead_letter_retention_days": _RETENTION_DAYS,
    "max_receive_count": _between(5, 1000, "AWS advises at least 5 for a Lambda event source; SQS allows 1,000"),
    "dead_letter_max_message_bytes": _between(
        1024 + DEAD_LETTER_OVERHEAD_BYTES,
        SQS_MAX_MESSAGE_BYTES,
        "SQS's largest message; the ingest queue keeps room for a rejected body's reason and origin",
    ),
    "ingest_timeout_seconds": _FUNCTION_TIMEOUT,
    "ingest_memory_mb": _FUNCTION_MEMORY,
    "ingest_batch_size": _between(1, 10_000, "Lambda's limit for a standard queue"),
    "ingest_batching_window_seconds": _BATCHING_WINDOW,
    "ingest_max_concurrency": _EVENT_SOURCE_CONCURRENCY,
    "ingest_max_workers": _between(1, 64, "the ingest function's INGEST_MAX_WORKERS"),
    "fifo_batch_size": _between(1, 10, "Lambda's limit for FIFO queues"),
    "fifo_max_concurrency": _EVENT_SOURCE_CONCURRENCY,
    "delivery_mode": _one_of("exactly-once", "at-least-once"),
    # the functions load zones from the tzdata the asset ships (lambda_asset.py), nothing else
    "digest_timezone": Rule(
        f"an IANA time zone of tzdata {zones.TZDATA_VERSION}, the zone data the functions ship "
        "(UTC, Europe/Berlin, America/New_York, ...)",
        zones.is_known,
        _zone_hint,
    ),
    "unknown_sensors": _one_of("accept", "reject"),
    "profile_cache_seconds": _between(0, 3600),
    "summary_timeout_seconds": _FUNCTION_TIMEOUT,
    "summary_memory_mb": _FUNCTION_MEMORY,
    "summary_batch_size": _between(1, 10_000, "Lambda's limit for a DynamoDB stream"),
    "summary_batching_window_seconds": _BATCHING_WINDOW,
    "summary_retry_attempts": _between(0, 10_000, "Lambda's most; -1, retrying forever, would block the stream"),
    "summary_max_record_age_hours": _between(1, 168, "Lambda gives up stream records at 7 days at most"),
    "api_timeout_seconds": _between(1, API_MAX_TIMEOUT_SECONDS, "an HTTP API waits at most 30 s for its integration"),
    "api_memory_mb": _FUNCTION_MEMORY,
    "api_throttle_rate_limit": _between(1, 10_000, "requests per second; API Gateway's default account quota"),
    "api_throttle_burst_limit": _between(1, 5_000, "requests at once; API Gateway's default account quota"),
    "log_retention_days": _one_of(*LOG_RETENTION_DAYS),
    "iterator_age_alarm_seconds": _between(1, 7 * 24 * 3600),
    "queue_age_alarm_seconds": _between(0, SQS_MAX_RETENTION_DAYS * 24 * 3600, "0 derives it"),
    "alarm_email": Rule(
        "an email address (name@example.com), or nothing for no subscription",
        lambda email: email == "" or (len(email) <= EMAIL_MAX and EMAIL.fullmatch(email) is not None),
    ),
}
"""The rule of every field (a test holds every field to having one)."""


def context_key(field_name: str) -> str:
    """A field's context key: its name in camelCase (``ingest_batch_size`` -> ``ingestBatchSize``)."""
    first, *rest = field_name.split("_")
    return first + "".join(word.capitalize() for word in rest)


def _whole_number(raw: object) -> int | None:
    """``"100"`` (a ``-c`` value) and ``100`` (cdk.json's) are 100; ``"abc"``, ``"1.5"``, ``1.5`` and
    ``true`` are none."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():  # JSON has numbers only; 100.0 is 100
        return int(raw)
    if isinstance(raw, str) and WHOLE_NUMBER.fullmatch(raw.strip()):
        return int(raw)
    return None


def _refused(given: str, allowed: str) -> str:
    return f"context value {given} is not allowed: {allowed}"


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
    # the read API (an HTTP API with IAM auth; its query function reads the digest table only)
    api_timeout_seconds: int = 10
    api_memory_mb: int = 256
    api_throttle_rate_limit: int = 50  # the stage's steady requests per second (each one Query)
    api_throttle_burst_limit: int = 100
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
    def api_integration_timeout_seconds(self) -> int:
        """How long API Gateway waits for the query function: its timeout and a second more."""
        return self.api_timeout_seconds + 1

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
    def from_context(cls, get: Callable[[str], Any], keys: Iterable[str] = ()) -> Settings:
        """``get`` is ``node.try_get_context``; context keys are the camelCase field names. ``keys``
        are all the keys the context holds (app.py reads them from what the CDK CLI hands the app),
        checked for misspellings of ours. Every problem found is refused at once (``SettingsError``)."""
        problems = unknown_key_problems(keys)
        values: dict[str, Any] = {}
        unreadable: set[str] = set()
        for field in fields(cls):
            key = context_key(field.name)
            raw = get(key)
            if raw is None:
                continue
            value = _whole_number(raw) if field.type == "int" else raw if isinstance(raw, str) else None
            if value is None:
                problems.append(_refused(f"{key}={raw!r}", f"{key} takes {RULES[field.name].allowed}"))
                unreadable.add(field.name)
                continue
            values[field.name] = value
        settings = cls(**values)
        problems += settings._problems(skip=unreadable)
        if problems:
            raise SettingsError(problems)
        return settings

    def validate(self) -> None:
        """``SettingsError`` naming every value out of its range and every combination AWS refuses."""
        problems = self._problems()
        if problems:
            raise SettingsError(problems)

    def _problems(self, skip: Iterable[str] = ()) -> list[str]:
        """One line per problem; the fields in ``skip`` were unreadable (their defaults stand in), so
        neither they nor a combination involving them is judged."""
        skipped = set(skip)
        problems = []
        for name, rule in RULES.items():
            value = getattr(self, name)
            if name not in skipped and not rule.ok(value):
                hint = rule.hint(value) if rule.hint else ""
                problems.append(
                    _refused(f"{context_key(name)}={value!r}", f"{context_key(name)} takes {rule.allowed}{hint}")
                )
        bad = skipped | {name for name, rule in RULES.items() if not rule.ok(getattr(self, name))}
        for names, ok, allowed in self._combinations():
            if not ok and not bad.intersection(names):
                given = " with ".join(f"{context_key(n)}={getattr(self, n)!r}" for n in names)
                problems.append(_refused(given, allowed))
        return problems

    def _combinations(self) -> list[tuple[tuple[str, ...], bool, str]]:
        """What AWS (or the pipeline's sense) refuses of values each in range: the fields involved,
        whether this combination passes, and what is allowed."""
        visibility = self.visibility_timeout_seconds
        retention = self.queue_retention_days * 24 * 3600
        return [
            (
                ("delivery_mode", "queue_type"),
                not (self.fifo and self.delivery_mode == "at-least-once"),
                "queueType=fifo counts exactly once by sequence number: leave deliveryMode exactly-once",
            ),
            (
                # CloudFormation names a FIFO queue <stack>-<logical id>-<suffix>.fifo and does not
                # shorten it to SQS's 80 characters (aws-cdk#11041): the logical ids here take 49
                ("stack_name", "queue_type"),
                not (self.fifo and len(self.stack_name) > FIFO_STACK_NAME_MAX),
                f"queueType=fifo needs a stackName of at most {FIFO_STACK_NAME_MAX} characters "
                "(CloudFormation's generated FIFO queue names must stay within SQS's 80)",
            ),
            (
                ("ingest_batch_size", "ingest_batching_window_seconds"),
                self.fifo or self.ingest_batch_size <= 10 or self.ingest_batching_window_seconds >= 1,
                "Lambda takes more than 10 messages a batch from a standard queue only with a batching window: "
                "ingestBatchingWindowSeconds of at least 1, or ingestBatchSize of at most 10",
            ),
            (
                # cannot happen within the ranges above (6 x 900 s + 300 s), checked all the same
                ("ingest_timeout_seconds", "ingest_batching_window_seconds"),
                visibility <= SQS_MAX_VISIBILITY_TIMEOUT_SECONDS,
                f"the ingest queue's visibility timeout (6 x ingestTimeoutSeconds + the batching window = "
                f"{visibility} s) must stay within SQS's {SQS_MAX_VISIBILITY_TIMEOUT_SECONDS} s (12 h)",
            ),
            (
                ("max_receive_count", "queue_retention_days"),
                self.queue_age_floor_seconds < retention,
                f"a message failing every receive stays maxReceiveCount x the visibility timeout "
                f"({self.max_receive_count} x {visibility} s = {self.queue_age_floor_seconds} s) in the queue, "
                f"which must be less than the queue's retention ({retention} s), or it expires before it "
                "reaches the dead-letter queue: lower maxReceiveCount or ingestTimeoutSeconds, or raise "
                "queueRetentionDays",
            ),
            (
                ("queue_age_alarm_seconds",),
                self.queue_age_alarm_seconds == 0
                or self.queue_age_floor_seconds < self.queue_age_alarm_seconds < retention,
                f"queueAgeAlarmSeconds takes 0 (derived: {max(1800, self.queue_age_floor_seconds + 300)} s), or more "
                f"than maxReceiveCount x the visibility timeout ({self.queue_age_floor_seconds} s: one message's "
                f"retries alone would fire it) and less than the queue's retention ({retention} s: no message "
                "grows older)",
            ),
            (
                ("iterator_age_alarm_seconds", "summary_max_record_age_hours"),
                self.iterator_age_alarm_seconds < self.summary_max_record_age_hours * 3600,
                f"iteratorAgeAlarmSeconds must be less than summaryMaxRecordAgeHours "
                f"({self.summary_max_record_age_hours * 3600} s): Lambda gives stream records up at that age, "
                "so the alarm would never fire",
            ),
        ]


def unknown_key_problems(keys: Iterable[str]) -> list[str]:
    """An unknown key that looks like one of ours (equal but for case, or close by
    ``difflib.get_close_matches``) is a misspelling that would deploy the default: refused with
    the nearest name. CDK's own keys and unrelated ones pass."""
    known = {context_key(field.name) for field in fields(Settings)}
    by_lower = {key.lower(): key for key in known}
    problems = []
    for key in dict.fromkeys(keys):
        if key in known or key.startswith(CDK_KEY_PREFIXES):
            continue
        close = difflib.get_close_matches(key.lower(), by_lower, n=1, cutoff=0.8)
        if close:
            problems.append(f"unknown context key {key!r}: did you mean {by_lower[close[0]]!r}?")
    return problems
