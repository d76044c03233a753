"""The pipeline's one deployment shape: every tunable, the figures derived from them, and their rules.

``PipelineShape`` is CDK-free (it imports no ``aws_cdk``): the construct ``SensorDigestPipeline``
takes it as its props, the app reads it from context (``AppSettings.from_context``), and the local
pipeline and the benchmark run on it, so nothing about the event sources (batch size, window,
concurrency, visibility timeout, receive count, message sizes, marker lifetime, alarm floors) is
derived anywhere else.

A shape is valid by construction: ``PipelineShape(...)`` checks every value against its rule
(``RULES``, one per field) and the combinations AWS refuses, and raises ``ShapeError`` with one line
per problem. The lines name the keys as the caller wrote them: ``queue_type`` for the construct's
props (``PipelineShape.from_props``), ``queueType`` for context (``AppSettings.from_context``, which
also checks each value's type, since a ``-c key=value`` arrives as text, and refuses misspelt keys
with the nearest name).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import Field, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from sensor_digest import zones
from sensor_digest.dead_letter_format import DEAD_LETTER_OVERHEAD_BYTES, SQS_MAX_MESSAGE_BYTES, source_queue_max_bytes
from sensor_digest.messages import control_character
from sensor_digest_cdk import workable

if TYPE_CHECKING:
    from typing import Unpack

POWERTOOLS_LAYER_ACCOUNT = "017000801446"
# Powertools for AWS Lambda (Python) 3.31.1, as pinned in requirements.txt; Powertools numbers its
# layer versions alike for every Python, so 36 is 3.31.1 for python313 as it was for python314
POWERTOOLS_LAYER_VERSION = 36
LAMBDA_PYTHON = "python313"  # lambda_function.RUNTIME; `make test-unit-py313` runs the unit tier on it
FIFO_STACK_NAME_MAX = 30
STACK_NAME_MAX = 128  # CloudFormation's limit
STACK_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*")  # CloudFormation's (and CDK's) rule for stack names
TABLE_NAME_MIN = 3  # DynamoDB's shortest table name; the app names the digest table after the stack
TABLE_NAME = re.compile(r"[A-Za-z0-9_.-]{3,255}")  # DynamoDB's rule for table names
DASHBOARD_NAME = re.compile(r"[A-Za-z0-9_-]{1,255}")  # CloudWatch's rule for dashboard names
IOT_RULE_NAME = re.compile(r"[A-Za-z0-9_]{1,128}")  # AWS IoT's rule for rule names
IAM_PRINCIPAL_ARN = re.compile(r"arn:aws[a-z-]*:iam::[0-9]{12}:(role|user)/[\w+=,.@/-]{1,512}")
SHOWN_MAX = 120  # the longest value a refusal repeats whole
MAX_DIGITS = 30  # a context number longer than this is past every rule's range (and int() refuses 4,300+)
LAMBDA_MAX_TIMEOUT_SECONDS = 900
FIFO_MAX_BATCH = 10  # Lambda's largest batch from a FIFO queue (which also allows no batching window)
API_MAX_TIMEOUT_SECONDS = 29  # the function's; API Gateway's HTTP API waits at most 30 s (one more)
SQS_MAX_VISIBILITY_TIMEOUT_SECONDS = 12 * 3600
SQS_MAX_RETENTION_DAYS = 14
LOG_RETENTION_DAYS = (7, 14, 30, 90, 365)  # the retentions lambda_function.RETENTION maps
EMAIL = re.compile(r"[^@\s]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")  # its shape, no more
EMAIL_MAX = 254
# AWS IoT: a topic (filter) is at most 256 bytes of UTF-8 with at most 7 slashes (8 levels).
IOT_TOPIC_MAX_BYTES = 256
IOT_TOPIC_MAX_SLASHES = 7
# Context keys of CDK itself (feature flags, the CLI's own settings): never ours, never checked.
CDK_KEY_PREFIXES = ("@aws-cdk", "aws:cdk:", "aws-cdk:", "cdk-", "cdk:")
WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")
BOOLEANS = {"true": True, "false": False}

QueueTypeName = Literal["standard", "fifo"]
DeliveryModeName = Literal["exactly-once", "at-least-once"]
LedgerName = Literal["compact", "per-message"]
BillingName = Literal["on-demand", "provisioned"]
RemovalName = Literal["retain", "destroy"]
UnknownSensorsName = Literal["accept", "reject"]


class ShapeError(ValueError):
    """A shape that cannot be built: ``problems`` holds one line per problem, each naming the key,
    the value given and what the key allows."""

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


def _name(pattern: re.Pattern[str], allowed: str) -> Rule:
    return Rule(f"nothing (a generated name) or {allowed}", lambda name: name == "" or bool(pattern.fullmatch(name)))


def _zone_hint(name: str) -> str:
    for prefix in ("posix/", "right/"):  # a machine's copies of the zones (right/: with leap seconds)
        if name.startswith(prefix) and zones.is_known(name[len(prefix) :]):
            return f"; use {name[len(prefix) :]!r}"
    return ""


def iot_topic_ok(topic: str) -> bool:
    """An MQTT topic filter AWS IoT takes in a rule's ``FROM``, and that the rule's SQL can quote:
        levels split by ``/``, ``+`` only as a whole level, ``#`` only as the whole last level; at most
        256 bytes of UTF-8 and 7 slashes; no quote, backslash, control character (C0, DEL, C1) or lone
    surrogate (the message schema's rule for ``event_id``, ``messages.control_character``; the SQL string
        literal takes it as it is); not a Basic Ingest topic (``$aws/rules/...`` is how devices address
        the rule, never what it selects)."""
    if topic == "":
        return True  # no IoT rule
    if len(topic.encode("utf-8", "surrogatepass")) > IOT_TOPIC_MAX_BYTES or topic.count("/") > IOT_TOPIC_MAX_SLASHES:
        return False
    if any(ch in "'\\\"" for ch in topic) or control_character(topic) or topic.startswith("$aws/rules/"):
        return False
    levels = topic.split("/")
    for i, level in enumerate(levels):
        if ("+" in level and level != "+") or ("#" in level and (level != "#" or i != len(levels) - 1)):
            return False
    return True


_FUNCTION_MEMORY = _between(128, 10_240, "Lambda's memory sizes, in MB")
_FUNCTION_TIMEOUT = _between(1, LAMBDA_MAX_TIMEOUT_SECONDS, "Lambda's longest timeout")
_RETENTION_DAYS = _between(1, SQS_MAX_RETENTION_DAYS, "SQS keeps a message at most 14 days")
_BATCHING_WINDOW = _between(0, 300, "Lambda's longest batching window")
_EVENT_SOURCE_CONCURRENCY = _between(2, 1000, "the SQS event source's maximum concurrency")
_CAPACITY = _between(1, 40_000, "DynamoDB's default quota per table; with billing=provisioned")
_TABLE_NAME = _name(TABLE_NAME, "3 to 255 letters, digits, '_', '-' and '.' (DynamoDB's table names)")

RULES: dict[str, Rule] = {
    "table_name": _TABLE_NAME,
    "ledger_table_name": _TABLE_NAME,
    "dashboard_name": _name(DASHBOARD_NAME, "1 to 255 letters, digits, '_' and '-' (CloudWatch's dashboard names)"),
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
    "ingest_timeout_seconds": _between(
        workable.INGEST_MIN_TIMEOUT_SECONDS, LAMBDA_MAX_TIMEOUT_SECONDS, workable.INGEST_TIMEOUT_WHY
    ),
    "ingest_memory_mb": _FUNCTION_MEMORY,
    "ingest_batch_size": _between(1, 10_000, "Lambda's limit for a standard queue"),
    "ingest_batching_window_seconds": _BATCHING_WINDOW,
    "ingest_max_concurrency": _EVENT_SOURCE_CONCURRENCY,
    "ingest_max_workers": _between(1, 64, "the ingest function's INGEST_MAX_WORKERS"),
    "fifo_batch_size": _between(1, FIFO_MAX_BATCH, "Lambda's limit for FIFO queues"),
    "fifo_max_concurrency": _EVENT_SOURCE_CONCURRENCY,
    "delivery_mode": _one_of("exactly-once", "at-least-once"),
    "ledger_mode": _one_of("compact", "per-message"),
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
    "summary_max_record_age_hours": _between(
        1, workable.STREAM_RETENTION_HOURS, "a DynamoDB stream keeps its records 24 hours: none grows older"
    ),
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
    "iot_topic": Rule(
        "nothing (no IoT rule) or an MQTT topic filter of at most 256 bytes and 7 slashes, '+' and '#' each a "
        "whole level ('#' the last), no quote, backslash or control character, not $aws/rules/...",
        iot_topic_ok,
    ),
    "iot_rule_name": _name(IOT_RULE_NAME, "1 to 128 letters, digits and '_' (AWS IoT's rule names)"),
    "restrict_producers": Rule("true or false", lambda value: isinstance(value, bool)),
    # silence (sensor_digest/silence/): the default threshold; 0 deploys no scheduled check
    "silence_hours": _between(0, 720, "hours; 0: no default threshold and no scheduled silence check"),
    "producer_arns": Rule(
        "IAM role or user ARNs (arn:aws:iam::123456789012:role/name), comma-separated in context",
        lambda arns: all(IAM_PRINCIPAL_ARN.fullmatch(arn) for arn in arns),
    ),
}
"""The rule of every field (a test holds every field to having one)."""

NAME_FIELDS = ("table_name", "ledger_table_name", "dashboard_name")
"""Physical names: generated unless given. The app derives them from ``stackName``; no context key."""

MODE_FIELDS = ("queue_type", "billing")
"""The fields that choose a mode, and with it which other fields apply (``workable.not_applying``)."""


def _int(raw: object) -> int | None:
    """``"100"`` (a ``-c`` value) and ``100`` (cdk.json's) are 100; ``"abc"``, ``"1.5"``, ``1.5`` and
    ``true`` are none."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():  # JSON has numbers only; 100.0 is 100
        return int(raw)
    if isinstance(raw, str) and WHOLE_NUMBER.fullmatch(raw.strip()) and len(raw.strip()) <= MAX_DIGITS:
        return int(raw)  # longer than any limit here (and than Python's int parsing allows): none
    return None


def _bool(raw: object) -> bool | None:
    """``true``/``false`` as JSON or as text (any case)."""
    if isinstance(raw, bool):
        return raw
    return BOOLEANS.get(raw.strip().lower()) if isinstance(raw, str) else None


def _strings(raw: object) -> tuple[str, ...] | None:
    """A JSON list of strings, or text with the items separated by commas."""
    if isinstance(raw, str):
        return tuple(item.strip() for item in raw.split(",") if item.strip())
    if isinstance(raw, list | tuple) and all(isinstance(item, str) for item in raw):
        return tuple(raw)
    return None


def _text(raw: object) -> str | None:
    return raw if isinstance(raw, str) else None


def _is_text(value: object) -> bool:
    return isinstance(value, str)


# How a value of each field type is read from context (text or JSON) and from props (Python).
_CONTEXT_READERS: dict[str, Callable[[object], Any]] = {"int": _int, "bool": _bool, "tuple[str, ...]": _strings}
_PROP_TYPES: dict[str, Callable[[object], bool]] = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "tuple[str, ...]": lambda v: isinstance(v, list | tuple) and all(isinstance(i, str) for i in v),
}


def _acceptable(f: Field[Any], value: object) -> bool:
    """Whether ``value`` is of field ``f``'s type and passes its rule."""
    return _PROP_TYPES.get(str(f.type), _is_text)(value) and RULES[f.name].ok(value)


def context_key(field_name: str) -> str:
    """A field's context key: its name in camelCase (``ingest_batch_size`` -> ``ingestBatchSize``)."""
    first, *rest = field_name.split("_")
    return first + "".join(word.capitalize() for word in rest)


def prop_key(field_name: str) -> str:
    """A field's construct prop: its own name."""
    return field_name


def _refused(what: str, key: Callable[[str], str], name: str, given: object) -> str:
    shown = repr(_shown(given, key))
    if len(shown) > SHOWN_MAX:  # one line stays readable: a 5,000-digit value is shown by its ends
        shown = f"{shown[: SHOWN_MAX // 2]}...({len(shown)} characters)...{shown[-8:]}"
    return f"{what} {key(name)}={shown} is not allowed: {key(name)} takes {RULES[name].allowed}"


def _shown(value: object, key: Callable[[str], str]) -> object:
    """A value as its key's caller gave it: in context, a list of ARNs as its comma-separated text."""
    return ",".join(value) if key is context_key and isinstance(value, tuple) else value


@dataclass(frozen=True)
class PipelineShape:
    """The props of ``SensorDigestPipeline``: today's defaults, every value checked on construction."""

    # names: generated by CloudFormation unless given (two pipelines in one stack never collide)
    table_name: str = ""
    ledger_table_name: str = ""
    dashboard_name: str = ""
    # storage
    billing: BillingName = "on-demand"
    read_capacity: int = 5
    write_capacity: int = 5
    removal: RemovalName = "retain"  # or "destroy" (a dev stack: tables, queues and logs go with the stack)
    # queue
    queue_type: QueueTypeName = "standard"  # or "fifo": ordered mode, a message group per sensor, no ledger
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
    # ordered mode (queue_type fifo): Lambda takes at most 10 messages a batch from a FIFO queue and
    # allows no batching window; a sensor is one message group, so no two invocations ever write
    # one sensor's day items at once, and more of them at a time cost nothing in conflicts
    fifo_batch_size: int = 10
    fifo_max_concurrency: int = 10
    delivery_mode: DeliveryModeName = "exactly-once"
    # how exactly-once ingest on a standard queue remembers what it counted: identities in the day
    # item and ledger pages, or a marker per message (the strict identity rule across days; the
    # first step of a rollback to a version before the compact ledger)
    ledger_mode: LedgerName = "compact"
    digest_timezone: str = "UTC"
    unknown_sensors: UnknownSensorsName = "accept"  # or "reject": reports of unregistered sensors go to the DLQ
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
    # producers: an AWS IoT topic rule to the ingest queue, and who may send to it
    iot_topic: str = ""  # an MQTT topic filter; nothing: no rule
    iot_rule_name: str = ""  # nothing: generated (Basic Ingest devices need it: the IotRuleName output)
    restrict_producers: bool = False  # True: the queue policy denies SendMessage to all but the granted
    producer_arns: tuple[str, ...] = field(default=())  # IAM roles or users allowed to send (with restrict)
    # silence: a sensor with no report for this many hours is silent (its profile may say otherwise);
    # 0: no default, and no scheduled check, metric or alarm (silence_check.py)
    silence_hours: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.producer_arns, list):  # a list given for the tuple
            object.__setattr__(self, "producer_arns", tuple(self.producer_arns))
        problems = self.problems(prop_key)
        if problems:
            raise ShapeError(problems)

    # -- derived, in one place -------------------------------------------------------------

    @property
    def fifo(self) -> bool:
        return self.queue_type == "fifo"

    @property
    def event_batch_size(self) -> int:
        """The ingest event source's batch size: ``ingest_batch_size``, or ``fifo_batch_size`` on FIFO."""
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
    def ingest_max_message_bytes(self) -> int:
        """The ingest queue's ``MaximumMessageSize``: a rejected body is re-sent to the dead-letter
        queue with an ``error`` attribute and its origin's two (each clipped to a fixed size,
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
        """The stall alarm's threshold: ``queue_age_alarm_seconds`` if set, else the retry floor plus
        five minutes, and never under 30 minutes (1,800 s with the default settings)."""
        return self.queue_age_alarm_seconds or max(1800, self.queue_age_floor_seconds + 300)

    @property
    def marker_ttl_seconds(self) -> int:
        """A marker must outlive every redelivery of its message through one trip to the dead-letter
        queue, ``dlq stamp`` and SQS's own redrive included: the message's time in the ingest queue,
        then in the dead-letter queue (SQS keeps a standard message's first enqueue time when it moves
        it there, and a FIFO queue's restarts it: the queue's retention counts once more on FIFO), then
        again in the dead-letter queue as the new message ``dlq stamp`` writes, then in the ingest queue
        as the new message a redrive sends (both restart retention), plus a day: Q + 2D + 1 days, or
        2Q + 2D + 1 on FIFO (43 and 57 at the defaults)."""
        queue_days = self.queue_retention_days * (2 if self.fifo else 1)
        return (queue_days + 2 * self.dead_letter_retention_days + 1) * 24 * 3600

    @property
    def api_integration_timeout_seconds(self) -> int:
        """How long API Gateway waits for the query function: its timeout and a second more."""
        return self.api_timeout_seconds + 1

    @property
    def destroy(self) -> bool:
        return self.removal == "destroy"

    @property
    def powertools_layer_arn(self) -> str:
        return (
            f"arn:${{AWS::Partition}}:lambda:${{AWS::Region}}:{POWERTOOLS_LAYER_ACCOUNT}:layer:"
            f"AWSLambdaPowertoolsPythonV3-{LAMBDA_PYTHON}-arm64:{POWERTOOLS_LAYER_VERSION}"
        )

    def ingest_environment(self, *, table: str, ledger: str, dlq_url: str) -> dict[str, str]:
        """The ingest function's environment (the contract's variables and the tunables it reads):
        the construct deploys it, the local pipeline reads it as the function does."""
        return {
            "TABLE_NAME": table,
            "LEDGER_TABLE_NAME": ledger,
            "DLQ_URL": dlq_url,
            "DIGEST_TIMEZONE": self.digest_timezone,
            "DELIVERY_MODE": self.delivery_mode,
            "MARKER_TTL_SECONDS": str(self.marker_ttl_seconds),
            "INGEST_MAX_WORKERS": str(self.ingest_max_workers),
            "UNKNOWN_SENSORS": self.unknown_sensors,
            "PROFILE_CACHE_SECONDS": str(self.profile_cache_seconds),
            "MAX_RECEIVE_COUNT": str(self.max_receive_count),
            "QUEUE_TYPE": self.queue_type,
            "LEDGER_MODE": self.ledger_mode,
        }

    @property
    def iot_rule_sql(self) -> str:
        """The IoT rule's statement: every field of a report published on ``iot_topic`` (the filter
        is quoted as it is: ``iot_topic_ok`` admits no character that could end the literal)."""
        return f"SELECT * FROM '{self.iot_topic}'"  # noqa: S608 - the filter can hold no quote (iot_topic_ok)

    # -- building one ----------------------------------------------------------------------

    @classmethod
    def from_props(cls, **props: Unpack[PipelineProps]) -> PipelineShape:
        """The construct's keyword props, each checked for its type and rule: ``ShapeError`` names
        every problem in snake_case, an unknown prop with the nearest name."""
        known = {f.name for f in fields(cls)}
        problems = _unknown_key_problems(props, known, prop_key, "prop", strict=True)
        values = {name: value for name, value in props.items() if name in known}
        return cls._built(values, set(), problems, prop_key, "prop")

    @classmethod
    def from_context(cls, get: Callable[[str], Any], keys: Iterable[str] = ()) -> PipelineShape:
        """The shape that context keys (``queueType``, ...; see ``AppSettings.from_context``) set, the
        physical names generated: ``ShapeError`` names every problem in camelCase."""
        problems, values, unreadable = read_context(get, keys)
        return cls._built(values, unreadable, problems, context_key, "context value")

    @classmethod
    def _built(
        cls, values: dict[str, Any], unreadable: set[str], problems: list[str], key: Callable[[str], str], what: str
    ) -> PipelineShape:
        """The shape of ``values`` (the unreadable ones left at their defaults), or ``ShapeError``
        with ``problems`` and every rule and combination the readable values break, in the caller's
        words (``key``, ``what``)."""
        unchecked = cls.__new__(cls)
        for f in fields(cls):
            value = values.get(f.name, f.default)
            object.__setattr__(unchecked, f.name, tuple(value) if isinstance(value, list) else value)
        problems = problems + unchecked.problems(key, skip=unreadable, what=what)
        ok = {f.name for f in fields(cls) if f.name not in unreadable and _acceptable(f, getattr(unchecked, f.name))}
        if ok.issuperset(MODE_FIELDS):  # the mode is known: say what of the values given it does not use
            given = [name for name in values if name in ok]
            problems += workable.given_not_applying(unchecked, given, key, what)
        if problems:
            raise ShapeError(problems)
        return cls(**{f.name: getattr(unchecked, f.name) for f in fields(cls)})

    def problems(self, key: Callable[[str], str] = prop_key, skip: Iterable[str] = (), what: str = "prop") -> list[str]:
        """One line per problem, keys named by ``key``: a value of the wrong type or out of its range,
        a combination AWS refuses. The fields in ``skip`` were unreadable (their defaults stand in),
        so neither they nor a combination involving them is judged."""
        bad = set(skip)
        problems = []
        types = {f.name: str(f.type) for f in fields(self)}
        for name, rule in RULES.items():
            value = getattr(self, name)
            if name in bad:
                continue
            if not _PROP_TYPES.get(types[name], _is_text)(value):
                problems.append(_refused(what, key, name, value))
                bad.add(name)
            elif not rule.ok(value):
                hint = rule.hint(value) if rule.hint else ""
                problems.append(_refused(what, key, name, value) + hint)
                bad.add(name)
        for names, ok, allowed in self._combinations(key):
            if not ok and not bad.intersection(names):
                given = " with ".join(f"{key(n)}={_shown(getattr(self, n), key)!r}" for n in names)
                problems.append(f"{what} {given} is not allowed: {allowed}")
        return problems

    def _combinations(self, key: Callable[[str], str]) -> list[tuple[tuple[str, ...], bool, str]]:
        """What AWS (or the pipeline's sense) refuses of values each in range: the fields involved,
        whether this combination passes, and what is allowed (keys named by ``key``)."""
        k = key
        visibility = self.visibility_timeout_seconds
        retention = self.queue_retention_days * 24 * 3600
        floor = self.queue_age_floor_seconds
        return [
            (
                ("delivery_mode", "queue_type"),
                not (self.fifo and self.delivery_mode == "at-least-once"),
                f"{k('queue_type')}=fifo counts exactly once by sequence number: leave {k('delivery_mode')} "
                "exactly-once",
            ),
            (
                ("iot_topic", "queue_type"),
                not (self.fifo and self.iot_topic),
                f"AWS IoT's SQS action cannot send to a FIFO queue: {k('iot_topic')} needs {k('queue_type')}=standard",
            ),
            (
                ("iot_rule_name",),
                not self.iot_rule_name or bool(self.iot_topic),
                f"{k('iot_rule_name')} names the rule {k('iot_topic')} adds: give {k('iot_topic')} too",
            ),
            (
                ("producer_arns", "restrict_producers"),
                not self.producer_arns or self.restrict_producers,
                f"{k('producer_arns')} are the only senders the queue admits with {k('restrict_producers')}=true: "
                f"set {k('restrict_producers')} too",
            ),
            (
                ("ingest_batch_size", "ingest_batching_window_seconds"),
                self.fifo or self.ingest_batch_size <= 10 or self.ingest_batching_window_seconds >= 1,
                "Lambda takes more than 10 messages a batch from a standard queue only with a batching window: "
                f"{k('ingest_batching_window_seconds')} of at least 1, or {k('ingest_batch_size')} of at most 10",
            ),
            (
                # cannot happen within the ranges above (6 x 900 s + 300 s), checked all the same
                ("ingest_timeout_seconds", "ingest_batching_window_seconds"),
                visibility <= SQS_MAX_VISIBILITY_TIMEOUT_SECONDS,
                f"the ingest queue's visibility timeout (6 x {k('ingest_timeout_seconds')} + the batching window = "
                f"{visibility} s) must stay within SQS's {SQS_MAX_VISIBILITY_TIMEOUT_SECONDS} s (12 h)",
            ),
            (
                ("max_receive_count", "queue_retention_days"),
                floor < retention,
                f"a message failing every receive stays {k('max_receive_count')} x the visibility timeout "
                f"({self.max_receive_count} x {visibility} s = {floor} s) in the queue, "
                f"which must be less than the queue's retention ({retention} s), or it expires before it "
                f"reaches the dead-letter queue: lower {k('max_receive_count')} or {k('ingest_timeout_seconds')}, "
                f"or raise {k('queue_retention_days')}",
            ),
            (
                ("queue_age_alarm_seconds",),
                self.queue_age_alarm_seconds == 0 or floor < self.queue_age_alarm_seconds < retention,
                f"{k('queue_age_alarm_seconds')} takes 0 (derived: {max(1800, floor + 300)} s), or more "
                f"than {k('max_receive_count')} x the visibility timeout ({floor} s: one message's "
                f"retries alone would fire it) and less than the queue's retention ({retention} s: no message "
                "grows older)",
            ),
            (
                ("iterator_age_alarm_seconds", "summary_max_record_age_hours"),
                self.iterator_age_alarm_seconds < self.summary_max_record_age_hours * 3600,
                f"{k('iterator_age_alarm_seconds')} must be less than {k('summary_max_record_age_hours')} "
                f"({self.summary_max_record_age_hours * 3600} s): Lambda gives stream records up at that age, "
                "so the alarm would never fire",
            ),
            *workable.combinations(self, k),
        ]


class PipelineProps(TypedDict, total=False):
    """The keyword props of ``SensorDigestPipeline`` (every field of ``PipelineShape``; a test holds
    the two to the same names and types)."""

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
    log_retention_days: int
    iterator_age_alarm_seconds: int
    queue_age_alarm_seconds: int
    alarm_email: str
    api_timeout_seconds: int
    api_memory_mb: int
    api_throttle_rate_limit: int
    api_throttle_burst_limit: int
    iot_topic: str
    iot_rule_name: str
    restrict_producers: bool
    producer_arns: tuple[str, ...]
    silence_hours: int


# -- the app's context ---------------------------------------------------------------------------

CONTEXT_FIELDS = tuple(f.name for f in fields(PipelineShape) if f.name not in NAME_FIELDS)
"""The shape's fields a context key sets (``queueType``, ...): all but the physical names."""

STACK_NAME_RULE = Rule(
    f"{TABLE_NAME_MIN} to {STACK_NAME_MAX} letters, digits and hyphens, starting with a letter "
    "(CloudFormation's stack names; the tables are named after it)",
    lambda name: TABLE_NAME_MIN <= len(name) <= STACK_NAME_MAX and STACK_NAME.fullmatch(name) is not None,
)


@dataclass(frozen=True)
class AppSettings:
    """What app.py builds: the stack's name, and the shape of its one pipeline, whose tables and
    dashboard keep the names they have always had (``<stackName>``, ``<stackName>Ledger``,
    ``<stackName>-pipeline``)."""

    stack_name: str = "SensorDigest"
    shape: PipelineShape = field(default_factory=lambda: AppSettings.named("SensorDigest", PipelineShape()))

    @staticmethod
    def named(stack_name: str, shape: PipelineShape) -> PipelineShape:
        """``shape`` with the app's fixed names, derived from the stack's."""
        return replace(
            shape,
            table_name=stack_name,
            ledger_table_name=f"{stack_name}Ledger",
            dashboard_name=f"{stack_name}-pipeline",
        )

    @classmethod
    def from_context(cls, get: Callable[[str], Any], keys: Iterable[str] = ()) -> AppSettings:
        """``get`` is ``node.try_get_context``; context keys are the camelCase field names plus
        ``stackName``. ``keys`` are all the keys the context holds (app.py reads them from what the
        CDK CLI hands the app), checked for misspellings of ours. Every problem found is refused at
        once (``ShapeError``), one line each."""
        problems, values, unreadable = read_context(get, keys)
        stack_name = get("stackName")
        if stack_name is None:
            stack_name = cls.stack_name
        if not isinstance(stack_name, str) or not STACK_NAME_RULE.ok(stack_name):
            problems.append(
                f"context value stackName={stack_name!r} is not allowed: stackName takes {STACK_NAME_RULE.allowed}"
            )
            stack_name = cls.stack_name
            unreadable.add("stack_name")
        elif values.get("queue_type") == "fifo" and len(stack_name) > FIFO_STACK_NAME_MAX:
            # CloudFormation names a FIFO queue <stack>-<logical id>-<suffix>.fifo and does not
            # shorten it to SQS's 80 characters (aws-cdk#11041): this stack's logical ids take 49
            problems.append(
                f"context value stackName={stack_name!r} with queueType='fifo' is not allowed: queueType=fifo "
                f"needs a stackName of at most {FIFO_STACK_NAME_MAX} characters (CloudFormation's generated FIFO "
                "queue names must stay within SQS's 80)"
            )
        if values.get("restrict_producers") and not values.get("producer_arns") and not values.get("iot_topic"):
            # the construct's users may grant_send later; the app has no later: refused here, in one line
            problems.append(
                "context value restrictProducers=true admits no sender: give producerArns (role or user ARNs) "
                "or iotTopic too"
            )
        values.update(
            table_name=stack_name, ledger_table_name=f"{stack_name}Ledger", dashboard_name=f"{stack_name}-pipeline"
        )
        shape = PipelineShape._built(values, unreadable, problems, context_key, "context value")
        return cls(stack_name=stack_name, shape=shape)


def read_context(get: Callable[[str], Any], keys: Iterable[str]) -> tuple[list[str], dict[str, Any], set[str]]:
    """The shape's values the context sets, read by type: the problems found (misspelt keys, values
    of the wrong kind), the values read, and the fields whose value could not be read."""
    known = {context_key(name): name for name in CONTEXT_FIELDS} | {"stackName": "stack_name"}
    problems = _unknown_key_problems(dict.fromkeys(keys), known, lambda k: k, "context key", strict=False)
    types = {f.name: str(f.type) for f in fields(PipelineShape)}
    values: dict[str, Any] = {}
    unreadable: set[str] = set()
    for name in CONTEXT_FIELDS:
        raw = get(context_key(name))
        if raw is None:
            continue
        value = _CONTEXT_READERS.get(types[name], _text)(raw)
        if value is None:
            problems.append(_refused("context value", context_key, name, raw))
            unreadable.add(name)
            continue
        values[name] = value
    return problems, values, unreadable


def _unknown_key_problems(
    given: Mapping[str, object], known: Iterable[str], key: Callable[[str], str], what: str, *, strict: bool
) -> list[str]:
    """An unknown key that looks like one of ours (equal but for case, or close by
    ``difflib.get_close_matches``) is a misspelling that would deploy the default: refused with the
    nearest name. With ``strict`` (props) any other unknown key is refused too; in context, CDK's own
    keys and unrelated ones pass."""
    by_lower = {key(name).lower(): key(name) for name in known}
    problems = []
    for name in given:
        if name in by_lower.values() or name.startswith(CDK_KEY_PREFIXES):
            continue
        close = difflib.get_close_matches(name.lower(), by_lower, n=1, cutoff=0.8)
        if close:
            problems.append(f"unknown {what} {name!r}: did you mean {by_lower[close[0]]!r}?")
        elif strict:
            problems.append(f"unknown {what} {name!r}: no prop of SensorDigestPipeline has that name")
    return problems
