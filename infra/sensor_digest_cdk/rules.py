"""The vocabulary of the pipeline's props: how what each one takes is stated (``Rule``, the builders
``between``, ``one_of`` and ``physical_name``, and the rules several fields share), the
limits of AWS and of the functions they come from, and how a refusal is worded (one line naming the
key as its caller wrote it, the value given and what the key allows). It knows no prop: each field of
``Tunables`` declares its own rule (``tunables.option``), and ``workable.py`` holds the combinations.

- **The functions' own margins.** Ingest keeps ``DEADLINE_MARGIN_SECONDS`` (3 s) before Lambda's
  timeout for its answer and its logs: no dead letter is sent and no group written past it. A
  timeout within that margin never counts a message (every one is listed until SQS moves it to the
  dead-letter queue, without a reason), so the ingest timeout must leave it ``INGEST_MIN_WORK_SECONDS``
  at least (``INGEST_MIN_TIMEOUT_SECONDS``). The summary and the query function keep no margin of
  their own (the summary's single-item writes take no deadline, the query function answers one
  ``Query``): any timeout from 1 s lets them work. A DynamoDB stream keeps its records 24 hours
  (``STREAM_RETENTION_HOURS``), so no record grows older.
- **FIFO queue names.** CloudFormation names a FIFO queue ``<stack>-<logical id>-<13 characters>.fifo``
  and does not shorten it to SQS's 80 characters (aws-cdk#11041): ``fifo_queue_name_length`` is the
  one statement of it, which the construct checks at synth for its queues and the app at its context
  for the stack name (``FIFO_STACK_NAME_MAX``, from the app's longest queue id).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sensor_digest import zones
from sensor_digest.characters import control_character
from sensor_digest.config import DEADLINE_MARGIN_SECONDS
from sensor_digest.dead_letter_format import DEAD_LETTER_OVERHEAD_BYTES, SQS_MAX_MESSAGE_BYTES
from sensor_digest.reading_names import MAX_READINGS, READING_NAME

POWERTOOLS_LAYER_ACCOUNT = "017000801446"
# Powertools for AWS Lambda (Python) 3.31.1, as pinned in requirements.txt; Powertools numbers its
# layer versions alike for every Python, so 36 is 3.31.1 for python313 as it was for python314
POWERTOOLS_LAYER_VERSION = 36
LAMBDA_PYTHON = "python313"  # lambda_function.RUNTIME; `make test-unit-py313` runs the unit tier on it
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
STREAM_RETENTION_HOURS = 24
"""How long a DynamoDB stream keeps a record."""
INGEST_MIN_WORK_SECONDS = 2
"""The least time ingest must have to count in, after its margin: a batch's lookups and its first
transactions, each a few tens of milliseconds, with a retry of a contended one."""
INGEST_MIN_TIMEOUT_SECONDS = math.ceil(DEADLINE_MARGIN_SECONDS) + INGEST_MIN_WORK_SECONDS
INGEST_TIMEOUT_WHY = (
    f"ingest keeps {DEADLINE_MARGIN_SECONDS:g} s before its timeout free for its answer and logs and needs "
    f"{INGEST_MIN_WORK_SECONDS} s more to count; Lambda's longest timeout is 900 s"
)

SQS_QUEUE_NAME_MAX = 80
FIFO_GENERATED_NAME_OVERHEAD = 21  # "-", "-", 13 characters of CloudFormation's and ".fifo"; one spare
APP_LONGEST_FIFO_QUEUE_ID = "IngestDeadLetterQueueE8016E9B"
"""The longest logical id of the app stack's FIFO queues (its pipeline is ``Default``; a test holds
it to the synthesized template)."""


def fifo_queue_name_length(stack_name: str, logical_id: str) -> int:
    """How long the name CloudFormation generates for a FIFO queue of ``logical_id`` in stack
    ``stack_name`` is: it must stay within ``SQS_QUEUE_NAME_MAX``."""
    return len(stack_name) + len(logical_id) + FIFO_GENERATED_NAME_OVERHEAD


FIFO_STACK_NAME_MAX = SQS_QUEUE_NAME_MAX - fifo_queue_name_length("", APP_LONGEST_FIFO_QUEUE_ID)
"""The app's longest stack name with ``queueType=fifo`` (30)."""


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
MESSAGE_FIELDS = ("sensor_id", "timestamp", "count", "event_id", "readings")
"""The message's own fields (docs/contract.md): never a payload field the IoT rule maps into ``readings``."""
IOT_SQL_KEYWORDS = frozenset(
    [
        "select",
        "from",
        "where",
        "as",
        "and",
        "or",
        "not",
        "case",
        "when",
        "then",
        "else",
        "end",
        "true",
        "false",
        "null",
        "undefined",
        "in",
        "is",
        "like",
        "between",
        "set",
        "distinct",
        "all",
        "any",
        "some",
        "exists",
        "by",
        "order",
        "group",
        "having",
        "limit",
        "union",
        "join",
        "on",
        "with",
        "values",
        "insert",
        "update",
        "delete",
        "into",
        "",
    ]
)
"""Words of AWS IoT's SQL (in any case): the rule's SQL names a mapped field bare, so a field so named
would read as the keyword, and IoT would refuse the rule at deploy; refused at synth instead."""


def iot_readings_ok(names: tuple[str, ...]) -> bool:
    """Payload fields the IoT rule maps into ``readings``: at most ``MAX_READINGS``, none twice, each a
    reading name by the message schema's rule (``messages.READING_NAME``: letters, digits and ``_``,
    which the rule's SQL writes as they are), none of the message's own fields, none an IoT SQL keyword."""
    return (
        len(names) <= MAX_READINGS
        and len(set(names)) == len(names)
        and all(
            READING_NAME.fullmatch(name) and name not in MESSAGE_FIELDS and name.lower() not in IOT_SQL_KEYWORDS
            for name in names
        )
    )


IOT_READINGS = Rule(
    f"nothing (the payload as it is) or at most {MAX_READINGS} names of the payload's fields to map into readings, "
    "each 1 to 32 ASCII letters, digits or '_', a letter first (a reading's name), none twice, none of the "
    f"message's own fields ({', '.join(MESSAGE_FIELDS)}), none a word of IoT's SQL (from, case, true, ...); "
    "comma-separated in context",
    iot_readings_ok,
    refuses=("1st", "temp-c", "t,t", "count", "From", ",".join(f"r{i}" for i in range(MAX_READINGS + 1))),
)
TRUE_OR_FALSE = Rule("true or false", lambda value: isinstance(value, bool))
PRINCIPAL_ARNS = Rule(
    "IAM role or user ARNs (arn:aws:iam::123456789012:role/name), comma-separated in context",
    lambda arns: all(IAM_PRINCIPAL_ARN.fullmatch(arn) for arn in arns),
)

NAME_FIELDS = ("table_name", "ledger_table_name", "dashboard_name")
"""Physical names: generated unless given. The app derives them from ``stackName``; no context key."""

MODE_FIELDS = ("queue_type", "billing", "import_enabled")
"""The fields that choose a mode, and with it which other fields apply (``workable.not_applying``)."""


def context_key(field_name: str) -> str:
    """A field's context key: its name in camelCase (``ingest_batch_size`` -> ``ingestBatchSize``)."""
    first, *rest = field_name.split("_")
    return first + "".join(word.capitalize() for word in rest)


def prop_key(field_name: str) -> str:
    """A field's construct prop: its own name."""
    return field_name


def refused(what: str, key: Callable[[str], str], name: str, given: object, rule: Rule) -> str:
    """The refusal of ``given`` for field ``name`` (named by ``key``), which takes what ``rule`` allows."""
    text = repr(shown(given, key))
    if len(text) > SHOWN_MAX:  # one line stays readable: a 5,000-digit value is shown by its ends
        text = f"{text[: SHOWN_MAX // 2]}...({len(text)} characters)...{text[-8:]}"
    return f"{what} {key(name)}={text} is not allowed: {key(name)} takes {rule.allowed}"


def shown(value: object, key: Callable[[str], str]) -> object:
    """A value as its key's caller gave it: in context, a list of ARNs as its comma-separated text."""
    return ",".join(value) if key is context_key and isinstance(value, tuple) else value


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
