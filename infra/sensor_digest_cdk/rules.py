"""The rules of the pipeline's props: how what each one takes is stated (``Rule``, the builders
``between``, ``one_of``, ``physical_name`` and ``variable``, and the rules several fields share; each
field of ``PipelineShape`` declares its own, and ``RULES`` has them by name), the limits of AWS they
come from, and how a refusal is worded (one line naming the key as its caller wrote it, the value
given and what the key allows). The ranges of the props the ingest function reads from its
environment come from that environment's declaration (``sensor_digest.environment``), so the
construct and the runtime cannot drift apart.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import Field, dataclass, fields
from typing import TYPE_CHECKING, Any

from sensor_digest import zones
from sensor_digest.dead_letter_format import DEAD_LETTER_OVERHEAD_BYTES, SQS_MAX_MESSAGE_BYTES
from sensor_digest.environment import Whole
from sensor_digest.messages import control_character
from sensor_digest_cdk import workable

if TYPE_CHECKING:
    from sensor_digest_cdk.shape import PipelineShape

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


RULE = "rule"  # where a field of PipelineShape keeps its Rule (its metadata)


class ShapeError(ValueError):
    """A shape that cannot be built: ``problems`` holds one line per problem, each naming the key,
    the value given and what the key allows."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


@dataclass(frozen=True)
class Rule:
    """What one key takes: ``allowed`` as an error states it, ``ok`` the test of a parsed value,
    ``hint`` (optional) a suggestion for a refused one, ``refuses`` values it refuses (the tests
    try each, so an option built with a builder below needs no test of its own range)."""

    allowed: str
    ok: Callable[[Any], bool]
    hint: Callable[[Any], str] | None = None
    refuses: tuple[object, ...] = ()


def between(low: int, high: int, why: str = "") -> Rule:
    allowed = f"a whole number from {low} to {high}" + (f" ({why})" if why else "")
    return Rule(allowed, lambda value: low <= value <= high, refuses=(low - 1, high + 1))


def variable(variable: Whole, why: str = "") -> Rule:
    """The range of an environment variable the prop sets (``environment.py``)."""
    return between(variable.low, variable.high, why)


def one_of(*choices: object) -> Rule:
    *first, last = map(str, choices)
    return Rule(f"{', '.join(first)} or {last}", lambda value: value in choices, refuses=(f"not-{last}",))


def physical_name(pattern: re.Pattern[str], allowed: str) -> Rule:
    return Rule(
        f"nothing (a generated name) or {allowed}",
        lambda name: name == "" or bool(pattern.fullmatch(name)),
        refuses=("a name!",),
    )


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


FUNCTION_MEMORY = between(128, 10_240, "Lambda's memory sizes, in MB")
FUNCTION_TIMEOUT = between(1, LAMBDA_MAX_TIMEOUT_SECONDS, "Lambda's longest timeout")
RETENTION_DAYS = between(1, SQS_MAX_RETENTION_DAYS, "SQS keeps a message at most 14 days")
BATCHING_WINDOW = between(0, 300, "Lambda's longest batching window")
EVENT_SOURCE_CONCURRENCY = between(2, 1000, "the SQS event source's maximum concurrency")
CAPACITY = between(1, 40_000, "DynamoDB's default quota per table; with billing=provisioned")
TABLE = physical_name(TABLE_NAME, "3 to 255 letters, digits, '_', '-' and '.' (DynamoDB's table names)")
DEAD_LETTER_MESSAGE_BYTES = between(
    1024 + DEAD_LETTER_OVERHEAD_BYTES,
    SQS_MAX_MESSAGE_BYTES,
    "SQS's largest message; the ingest queue keeps room for a rejected body's reason and origin",
)
# the functions load zones from the tzdata the asset ships (lambda_asset.py), nothing else
TIME_ZONE = Rule(
    f"an IANA time zone of tzdata {zones.TZDATA_VERSION}, the zone data the functions ship "
    "(UTC, Europe/Berlin, America/New_York, ...)",
    zones.is_known,
    _zone_hint,
)
EMAIL_ADDRESS = Rule(
    "an email address (name@example.com), or nothing for no subscription",
    lambda email: email == "" or (len(email) <= EMAIL_MAX and EMAIL.fullmatch(email) is not None),
)
IOT_TOPIC = Rule(
    "nothing (no IoT rule) or an MQTT topic filter of at most 256 bytes and 7 slashes, '+' and '#' each a "
    "whole level ('#' the last), no quote, backslash or control character, not $aws/rules/...",
    iot_topic_ok,
)
TRUE_OR_FALSE = Rule("true or false", lambda value: isinstance(value, bool))
PRINCIPAL_ARNS = Rule(
    "IAM role or user ARNs (arn:aws:iam::123456789012:role/name), comma-separated in context",
    lambda arns: all(IAM_PRINCIPAL_ARN.fullmatch(arn) for arn in arns),
)

RULES: dict[str, Rule] = {}
"""The rule of every field of ``PipelineShape``, by name: each field declares its own
(``shape.option``), and ``shape.py`` fills this from them once the class is defined."""

NAME_FIELDS = ("table_name", "ledger_table_name", "dashboard_name")
"""Physical names: generated unless given. The app derives them from ``stackName``; no context key."""

MODE_FIELDS = ("queue_type", "billing")
"""The fields that choose a mode, and with it which other fields apply (``workable.not_applying``)."""


def is_text(value: object) -> bool:
    return isinstance(value, str)


# How a value of each field type is checked in props (Python).
PROP_TYPES: dict[str, Callable[[object], bool]] = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "tuple[str, ...]": lambda v: isinstance(v, list | tuple) and all(isinstance(i, str) for i in v),
}


def acceptable(f: Field[Any], value: object) -> bool:
    """Whether ``value`` is of field ``f``'s type and passes its rule."""
    return PROP_TYPES.get(str(f.type), is_text)(value) and f.metadata[RULE].ok(value)


def context_key(field_name: str) -> str:
    """A field's context key: its name in camelCase (``ingest_batch_size`` -> ``ingestBatchSize``)."""
    first, *rest = field_name.split("_")
    return first + "".join(word.capitalize() for word in rest)


def prop_key(field_name: str) -> str:
    """A field's construct prop: its own name."""
    return field_name


def refused(what: str, key: Callable[[str], str], name: str, given: object) -> str:
    text = repr(shown(given, key))
    if len(text) > SHOWN_MAX:  # one line stays readable: a 5,000-digit value is shown by its ends
        text = f"{text[: SHOWN_MAX // 2]}...({len(text)} characters)...{text[-8:]}"
    return f"{what} {key(name)}={text} is not allowed: {key(name)} takes {RULES[name].allowed}"


def shown(value: object, key: Callable[[str], str]) -> object:
    """A value as its key's caller gave it: in context, a list of ARNs as its comma-separated text."""
    return ",".join(value) if key is context_key and isinstance(value, tuple) else value


def combinations(self: PipelineShape, key: Callable[[str], str]) -> list[tuple[tuple[str, ...], bool, str]]:
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
            f"{k('queue_type')}=fifo counts exactly once by sequence number: leave {k('delivery_mode')} exactly-once",
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
            ("max_receive_count", "ingest_timeout_seconds", "queue_retention_days"),
            self.queue_age_alarm_seconds != 0 or floor >= retention or max(1800, floor + 300) < retention,
            f"the derived stall alarm ({k('max_receive_count')} x the visibility timeout + 300 s, at least "
            f"1800 s: {max(1800, floor + 300)} s) must be less than the queue's retention ({retention} s), or "
            f"no message grows old enough to fire it: raise {k('queue_retention_days')} or lower "
            f"{k('max_receive_count')} or {k('ingest_timeout_seconds')}",
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


def problems(shape: PipelineShape, key: Callable[[str], str], skip: Iterable[str], what: str) -> list[str]:
    """One line per problem, keys named by ``key``: a value of the wrong type or out of its range,
    a combination AWS refuses. The fields in ``skip`` were unreadable (their defaults stand in),
    so neither they nor a combination involving them is judged."""
    bad = set(skip)
    found: list[str] = []
    types = {f.name: str(f.type) for f in fields(shape)}
    for name, rule in RULES.items():
        value = getattr(shape, name)
        if name in bad:
            continue
        if not PROP_TYPES.get(types[name], is_text)(value):
            found.append(refused(what, key, name, value))
            bad.add(name)
        elif not rule.ok(value):
            hint = rule.hint(value) if rule.hint else ""
            found.append(refused(what, key, name, value) + hint)
            bad.add(name)
    for names, ok, allowed in combinations(shape, key):
        if not ok and not bad.intersection(names):
            given = " with ".join(f"{key(n)}={shown(getattr(shape, n), key)!r}" for n in names)
            found.append(f"{what} {given} is not allowed: {allowed}")
    return found


def unknown_key_problems(
    given: Mapping[str, object],
    known: Iterable[str],
    key: Callable[[str], str],
    what: str,
    *,
    strict: bool,
    ignored: tuple[str, ...] = (),
) -> list[str]:
    """An unknown key that looks like one of ours (equal but for case, or close by
    ``difflib.get_close_matches``) is a misspelling that would deploy the default: refused with the
    nearest name. With ``strict`` (props) any other unknown key is refused too; in context, CDK's own
    keys (``ignored`` prefixes) and unrelated ones pass."""
    by_lower = {key(name).lower(): key(name) for name in known}
    problems = []
    for name in given:
        if name in by_lower.values() or name.startswith(ignored):
            continue
        close = difflib.get_close_matches(name.lower(), by_lower, n=1, cutoff=0.8)
        if close:
            problems.append(f"unknown {what} {name!r}: did you mean {by_lower[close[0]]!r}?")
        elif strict:
            problems.append(f"unknown {what} {name!r}: no prop of SensorDigestPipeline has that name")
    return problems
