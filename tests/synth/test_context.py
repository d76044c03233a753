"""The stack's settings (context keys): derived values, and bad context refused at synth with one
line per problem naming the key, the value and what is allowed: every key's type and range, the
combinations AWS refuses, misspelt keys. In-process through ``AppSettings.from_context``, and as a
deployer meets it: ``cdk synth -c ...`` in a process of its own."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match

from sensor_digest.ingest.service import DEADLINE_MARGIN_SECONDS
from sensor_digest_cdk.context import CONTEXT_FIELDS, STACK_NAME_RULE, AppSettings
from sensor_digest_cdk.lambda_function import RETENTION
from sensor_digest_cdk.rules import INGEST_MIN_TIMEOUT_SECONDS, LOG_RETENTION_DAYS, NAME_FIELDS, Rule, context_key
from sensor_digest_cdk.shape import PipelineShape, ShapeError
from sensor_digest_cdk.tunables import RULES
from tests.support.templates import DAY, ROOT, cdk_synth, error_lines

KEYS = {context_key(name): name for name in (*CONTEXT_FIELDS, "stack_name")}
ALL_RULES = {**RULES, "stack_name": STACK_NAME_RULE}


def setting(settings: AppSettings, name: str) -> object:
    """A field's value: the stack's name, or a field of its pipeline's shape."""
    return settings.stack_name if name == "stack_name" else getattr(settings.shape, name)


def refusals(context: dict[str, object]) -> list[str]:
    """The problems ``context`` is refused with (none: it is accepted)."""
    try:
        AppSettings.from_context(context.get, context)
    except ShapeError as error:
        assert str(error) == "\n".join(error.problems)
        return error.problems
    return []


def test_a_digest_timezone_the_functions_cannot_load_is_refused_at_synth(synth_with: Callable[..., Any]) -> None:
    # posix/Asia/Tokyo loads on a machine with /usr/share/zoneinfo, never from the tzdata the asset ships
    [problem] = refusals({"digestTimezone": "posix/Asia/Tokyo"})
    assert "digestTimezone='posix/Asia/Tokyo' is not allowed: digestTimezone takes an IANA time zone" in problem
    assert problem.endswith("; use 'Asia/Tokyo'")
    _, template = synth_with(digestTimezone="Asia/Tokyo")
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {"Environment": {"Variables": Match.object_like({"DIGEST_TIMEZONE": "Asia/Tokyo"})}},
    )


def test_an_ingest_timeout_within_ingests_own_margin_is_refused_with_the_reason() -> None:
    # ingest keeps DEADLINE_MARGIN_SECONDS free before its timeout: a timeout within it never counts
    assert INGEST_MIN_TIMEOUT_SECONDS >= DEADLINE_MARGIN_SECONDS + 2
    for seconds in range(1, INGEST_MIN_TIMEOUT_SECONDS):
        [problem] = refusals({"ingestTimeoutSeconds": seconds})
        assert problem == (
            f"context value ingestTimeoutSeconds={seconds} is not allowed: ingestTimeoutSeconds takes a whole "
            f"number from {INGEST_MIN_TIMEOUT_SECONDS} to 900 (ingest keeps 3 s before its timeout free for its "
            "answer and logs and needs 2 s more to count; Lambda's longest timeout is 900 s)"
        )
    assert refusals({"ingestTimeoutSeconds": INGEST_MIN_TIMEOUT_SECONDS}) == []
    with pytest.raises(ShapeError, match="ingest_timeout_seconds=3 is not allowed"):
        PipelineShape(ingest_timeout_seconds=3)


def latest_redelivery(shape: PipelineShape) -> int:
    """How long after its first send a message can come back to ingest through one trip to the
    dead-letter queue, ``dlq stamp`` and SQS's own redrive each at the latest moment SQS allows:
    a standard message keeps its first enqueue time when SQS moves it to the dead-letter queue (it
    expires there by it), a FIFO message's restarts; the copy ``dlq stamp`` writes and the message
    a redrive sends are new messages, whose retention starts again."""
    queue, dead = shape.queue_retention_days * DAY, shape.dead_letter_retention_days * DAY
    last_in_dead_letters = queue + dead if shape.fifo else dead
    stamped = last_in_dead_letters + dead
    return max(queue, stamped + queue)


@pytest.mark.parametrize("queue_type", ["standard", "fifo"])
@pytest.mark.parametrize(("queue_days", "dead_days"), [(14, 14), (4, 14), (14, 1), (1, 1)])
def test_a_marker_outlives_a_stamped_letter_redriven_by_sqs_at_the_latest_moment(
    queue_type: str, queue_days: int, dead_days: int
) -> None:
    shape = PipelineShape(
        queue_type=queue_type,  # type: ignore[arg-type]
        queue_retention_days=queue_days,
        dead_letter_retention_days=dead_days,
    )
    assert shape.marker_ttl_seconds > latest_redelivery(shape)
    assert shape.marker_ttl_seconds <= latest_redelivery(shape) + DAY  # and a day of margin, no more
    assert PipelineShape().marker_ttl_seconds == 43 * DAY


def test_bad_context_is_refused_with_the_reason() -> None:
    with pytest.raises(ShapeError, match="maxReceiveCount=3 is not allowed: maxReceiveCount takes a whole number"):
        AppSettings.from_context({"maxReceiveCount": "3"}.get)
    with pytest.raises(ShapeError, match="billing='free' is not allowed: billing takes on-demand or provisioned"):
        AppSettings.from_context({"billing": "free"}.get)


# -- every key checked ---------------------------------------------------------------------------


def test_every_setting_has_a_rule_and_the_defaults_pass_it() -> None:
    assert all(isinstance(RULES[f.name], Rule) and RULES[f.name].allowed for f in fields(PipelineShape))
    assert all(RULES[f.name].ok(f.default) for f in fields(PipelineShape))
    assert PipelineShape().problems() == []
    assert set(CONTEXT_FIELDS) == set(RULES) - set(NAME_FIELDS)  # the names follow stackName
    assert context_key("ingest_batch_size") == "ingestBatchSize"
    assert context_key("stack_name") == "stackName"


def test_the_log_retentions_allowed_are_the_ones_the_functions_map() -> None:
    assert set(LOG_RETENTION_DAYS) == set(RETENTION)


# One value out of range (or of the wrong kind) for every key, as cdk.json would give it (JSON types).
BAD_VALUES: list[tuple[str, object]] = [
    ("stackName", "my_stack"),
    ("stackName", "7Digest"),
    ("stackName", "SD"),
    ("stackName", "S" * 129),
    ("billing", "free"),
    ("readCapacity", 0),
    ("writeCapacity", 40_001),
    ("removal", "keep"),
    ("queueType", "FIFO"),
    ("queueRetentionDays", 0),
    ("queueRetentionDays", 15),
    ("deadLetterRetentionDays", 30),
    ("maxReceiveCount", 1001),
    ("deadLetterMaxMessageBytes", 1024),
    ("deadLetterMaxMessageBytes", 2_000_000),
    ("ingestTimeoutSeconds", 0),
    ("ingestTimeoutSeconds", 4),
    ("ingestTimeoutSeconds", 1000),
    ("ingestMemoryMb", 64),
    ("ingestMemoryMb", 10_241),
    ("ingestBatchSize", 0),
    ("ingestBatchSize", 10_001),
    ("ingestBatchingWindowSeconds", 301),
    ("ingestMaxConcurrency", 1),
    ("ingestMaxWorkers", 65),
    ("fifoBatchSize", 11),
    ("fifoMaxConcurrency", 1001),
    ("deliveryMode", "exactly_once"),
    ("ledgerMode", "per_message"),
    ("digestTimezone", "Mars/Base"),
    ("unknownSensors", "drop"),
    ("profileCacheSeconds", 3601),
    ("summaryTimeoutSeconds", 901),
    ("summaryMemoryMb", 127),
    ("summaryBatchSize", 10_001),
    ("summaryBatchingWindowSeconds", 301),
    ("summaryRetryAttempts", -1),
    ("summaryMaxRecordAgeHours", 169),
    ("summaryMaxRecordAgeHours", 25),
    ("apiTimeoutSeconds", 30),
    ("apiMemoryMb", 127),
    ("apiThrottleRateLimit", 0),
    ("apiThrottleBurstLimit", 5001),
    ("logRetentionDays", 60),
    ("iteratorAgeAlarmSeconds", 0),
    ("queueAgeAlarmSeconds", -1),
    ("silenceHours", 721),
    ("silenceHours", -1),
    ("alarmEmail", "not-an-email"),
    ("alarmEmail", "me@localhost"),
    ("alarmEmail", "me@example.com "),
    ("iotTopic", "sensors/#/reports"),
    ("restrictProducers", "yes"),
    ("importEnabled", "yes"),
    ("producerArns", "arn:aws:iam::123456789012:group/ops"),
    ("iotRuleName", "sensor-digest"),
]


# and the values each key's rule says it refuses (a rule built by rules.between, one_of, ...)
REFUSED = BAD_VALUES + [(key, value) for key, name in KEYS.items() for value in ALL_RULES[name].refuses]


def test_every_key_has_a_bad_value_here_or_from_its_rule() -> None:
    assert {key for key, _ in REFUSED} == set(KEYS)


@pytest.mark.parametrize(("key", "value"), REFUSED, ids=[f"{k}={v!r}"[:40] for k, v in REFUSED])
def test_a_value_out_of_its_range_is_refused_naming_key_value_and_what_is_allowed(key: str, value: object) -> None:
    [problem] = refusals({key: value})
    assert problem.startswith(
        f"context value {key}={value!r} is not allowed: {key} takes {ALL_RULES[KEYS[key]].allowed}"
    )
    assert "\n" not in problem


GOOD_VALUES: list[tuple[str, object]] = [
    ("stackName", "SensorDigest-Dev2"),
    ("stackName", "Sdg"),
    ("stackName", "S" * 128),
    ("alarmEmail", "ops+alerts@example.co.uk"),
    ("alarmEmail", ""),
    ("ingestTimeoutSeconds", 900),
    ("maxReceiveCount", 1000),
    ("logRetentionDays", 365),
    ("queueAgeAlarmSeconds", 0),
    ("summaryRetryAttempts", 0),
    ("apiTimeoutSeconds", 29),
    ("apiThrottleBurstLimit", 5000),
    ("digestTimezone", "America/Argentina/Buenos_Aires"),
]


@pytest.mark.parametrize(("key", "value"), GOOD_VALUES, ids=[f"{k}={v!r}"[:40] for k, v in GOOD_VALUES])
def test_a_value_at_the_edge_of_its_range_is_taken(key: str, value: object) -> None:
    assert refusals({key: value}) == []
    assert setting(AppSettings.from_context({key: value}.get), KEYS[key]) == value


@pytest.mark.parametrize("raw", ["100", " 100", "+100", 100, 100.0])
def test_a_whole_number_comes_as_text_from_the_command_line_or_as_a_json_number(raw: object) -> None:
    assert AppSettings.from_context({"ingestBatchSize": raw}.get).shape.ingest_batch_size == 100


def test_a_number_too_long_for_any_range_is_refused_in_one_readable_line() -> None:
    [problem] = refusals({"ingestBatchSize": "1" * 5000})
    assert problem == (
        f"context value ingestBatchSize='{'1' * 59}...(5002 characters)...{'1' * 7}' is not allowed: "
        "ingestBatchSize takes a whole number from 1 to 10000 (Lambda's limit for a standard queue)"
    )


@pytest.mark.parametrize("raw", ["abc", "1.5", "", "1e3", "1_000", "0x10", 1.5, True, [100]])
def test_what_is_no_whole_number_is_refused_with_no_traceback(raw: object) -> None:
    [problem] = refusals({"ingestBatchSize": raw})
    assert problem == (
        f"context value ingestBatchSize={raw!r} is not allowed: "
        "ingestBatchSize takes a whole number from 1 to 10000 (Lambda's limit for a standard queue)"
    )


@pytest.mark.parametrize("raw", [True, 1, ["retain"], {"policy": "retain"}])
def test_a_text_setting_takes_text_only(raw: object) -> None:
    [problem] = refusals({"removal": raw})
    assert problem == f"context value removal={raw!r} is not allowed: removal takes retain or destroy"


# -- combinations AWS refuses --------------------------------------------------------------------


COMBINATIONS = [
    (
        {"deliveryMode": "at-least-once", "queueType": "fifo"},
        "deliveryMode='at-least-once' with queueType='fifo' is not allowed: queueType=fifo counts exactly once",
    ),
    (
        {"stackName": "S" * 31, "queueType": "fifo"},
        f"stackName={'S' * 31!r} with queueType='fifo' is not allowed: queueType=fifo needs a stackName of at most 30",
    ),
    (
        {"ingestBatchingWindowSeconds": 0},
        "ingestBatchSize=1000 with ingestBatchingWindowSeconds=0 is not allowed: Lambda takes more than 10 messages",
    ),
    (
        {"queueRetentionDays": 1, "maxReceiveCount": 500},
        "maxReceiveCount=500 with queueRetentionDays=1 is not allowed: a message failing every receive stays "
        "maxReceiveCount x the visibility timeout (500 x 200 s = 100000 s)",
    ),
    (
        {"queueAgeAlarmSeconds": 600},
        "queueAgeAlarmSeconds=600 is not allowed: queueAgeAlarmSeconds takes 0 (derived: 1800 s), or more than",
    ),
    (
        {"queueAgeAlarmSeconds": 14 * DAY, "queueRetentionDays": 14},
        "queueAgeAlarmSeconds=1209600 is not allowed",
    ),
    (  # found in review: a derived stall alarm above the retention that could never fire
        {"ingestTimeoutSeconds": 894, "maxReceiveCount": 16, "queueRetentionDays": 1, "deadLetterRetentionDays": 2},
        "maxReceiveCount=16 with ingestTimeoutSeconds=894 with queueRetentionDays=1 is not allowed: the derived "
        "stall alarm",
    ),
    (
        {"restrictProducers": "true"},  # the app has no grant_send to admit a sender later
        "restrictProducers=true admits no sender: give producerArns (role or user ARNs) or iotTopic too",
    ),
    (
        {"iteratorAgeAlarmSeconds": 90_000},
        "iteratorAgeAlarmSeconds=90000 with summaryMaxRecordAgeHours=24 is not allowed",
    ),
    (
        {"deadLetterRetentionDays": 1, "maxReceiveCount": 500},
        "deadLetterRetentionDays=1 with maxReceiveCount=500 is not allowed: a message failing every receive is "
        "maxReceiveCount x the visibility timeout (100000 s) old when SQS moves it to the dead-letter queue",
    ),
    (
        {"queueType": "fifo", "ingestBatchSize": 5},
        "ingestBatchSize=5 does not apply: queueType='fifo' reads its queue with fifoBatchSize and fifoMaxConcurrency",
    ),
    (
        {"queueType": "fifo", "ingestBatchingWindowSeconds": 5},
        "ingestBatchingWindowSeconds=5 does not apply: queueType='fifo' reads its queue",
    ),
    (
        {"queueType": "fifo", "ingestMaxConcurrency": 50},
        "ingestMaxConcurrency=50 does not apply: queueType='fifo' reads its queue",
    ),
    (
        {"fifoBatchSize": 5},
        "fifoBatchSize=5 does not apply: fifoBatchSize and fifoMaxConcurrency apply with queueType='fifo' only",
    ),
    (
        {"readCapacity": 7, "billing": "on-demand"},
        "readCapacity=7 does not apply: capacity applies with billing='provisioned' only",
    ),
]


@pytest.mark.parametrize(("context", "expected"), COMBINATIONS, ids=[e.split(" ")[0] for _, e in COMBINATIONS])
def test_values_each_in_range_that_aws_refuses_together_are_refused(context: dict[str, object], expected: str) -> None:
    [problem] = refusals(context)
    assert problem.startswith(f"context value {expected}")


def test_combinations_aws_takes_are_taken() -> None:
    assert refusals({"ingestBatchingWindowSeconds": 0, "ingestBatchSize": 10}) == []
    assert refusals({"ingestBatchingWindowSeconds": 0, "queueType": "fifo"}) == []  # FIFO has no window
    assert refusals({"queueType": "fifo", "fifoBatchSize": 5, "fifoMaxConcurrency": 20}) == []
    assert refusals({"queueType": "fifo", "ingestBatchSize": 10}) == []  # what FIFO does anyway
    assert refusals({"billing": "provisioned", "readCapacity": 7, "writeCapacity": 9}) == []
    assert refusals({"deadLetterRetentionDays": 1}) == []  # 1,000 s of retries fit a day
    assert refusals({"deadLetterRetentionDays": 1, "maxReceiveCount": 500, "queueType": "fifo"}) == []  # restarts
    assert refusals({"queueType": "fifo", "stackName": "S" * 30}) == []
    assert refusals({"stackName": "S" * 31}) == []  # a standard queue's name is shortened
    assert refusals({"ingestTimeoutSeconds": 900, "ingestBatchingWindowSeconds": 300}) == []  # 5,700 s < 12 h
    shape = PipelineShape(ingest_timeout_seconds=900, ingest_batching_window_seconds=300)
    assert shape.visibility_timeout_seconds == 5700


def test_several_bad_values_are_each_named_on_a_line_of_their_own() -> None:
    problems = refusals(
        {"ingestBatchSize": "abc", "stackName": "my_stack", "deadLetterRetentionDays": "30", "alarmEmail": "x"}
    )
    assert len(problems) == 4
    for key, value in [("ingestBatchSize", "'abc'"), ("stackName", "'my_stack'"), ("deadLetterRetentionDays", "30")]:
        assert sum(f"{key}={value}" in p for p in problems) == 1, problems
    assert all("\n" not in p for p in problems)


# -- keys ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "nearest"),
    [
        ("queuetype", "queueType"),
        ("ingestbatchsize", "ingestBatchSize"),
        ("alarmemail", "alarmEmail"),
        ("STACKNAME", "stackName"),
        ("ingestBatchSise", "ingestBatchSize"),
        ("alarmMail", "alarmEmail"),
        ("deadLetterRetentionDay", "deadLetterRetentionDays"),
    ],
)
def test_a_misspelt_key_is_refused_with_the_nearest_name(key: str, nearest: str) -> None:
    assert refusals({key: "fifo"}) == [f"unknown context key {key!r}: did you mean {nearest!r}?"]


@pytest.mark.parametrize(
    "key",
    [
        "@aws-cdk/core:checkSecretUsage",
        "@aws-cdk/aws-lambda:recognizeLayerVersion",
        "aws:cdk:enable-path-metadata",
        "aws:cdk:bundling-stacks",
        "cdk-stack-name",
        "availability-zones:account=123456789012:region=us-east-1",
        "team",
        "stack",
        "myOwnTag",
    ],
)
def test_keys_of_cdk_and_unrelated_keys_pass(key: str) -> None:
    assert refusals({key: "x"}) == []


def test_the_context_cdk_json_sets_passes() -> None:
    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    assert AppSettings.from_context(context.get, context) == AppSettings()


# -- as a deployer meets it: `cdk synth -c ...` --------------------------------------------------


SYNTH_REFUSALS = [
    (["ingestBatchSize=abc"], ["ingestBatchSize='abc' is not allowed: ingestBatchSize takes a whole number"]),
    (["stackName=my_stack"], ["stackName='my_stack' is not allowed: stackName takes 3 to 128 letters"]),
    (["deliveryMode=at-least-once", "queueType=fifo"], ["deliveryMode='at-least-once' with queueType='fifo'"]),
    (["deadLetterRetentionDays=30"], ["deadLetterRetentionDays=30 is not allowed: deadLetterRetentionDays takes"]),
    (["digestTimezone=Mars/Base"], ["digestTimezone='Mars/Base' is not allowed: digestTimezone takes an IANA"]),
    (["alarmEmail=not-an-email"], ["alarmEmail='not-an-email' is not allowed: alarmEmail takes an email address"]),
    (["ingestTimeoutSeconds=1000"], ["ingestTimeoutSeconds=1000 is not allowed: ingestTimeoutSeconds takes"]),
    (["ingestBatchingWindowSeconds=0"], ["ingestBatchSize=1000 with ingestBatchingWindowSeconds=0"]),
    (
        ["queuetype=fifo", "ingestbatchsize=100", "alarmemail=me@example.com", "team=ops"],
        [
            "unknown context key 'queuetype': did you mean 'queueType'?",
            "unknown context key 'ingestbatchsize': did you mean 'ingestBatchSize'?",
            "unknown context key 'alarmemail': did you mean 'alarmEmail'?",
        ],
    ),
]


@pytest.mark.parametrize(("options", "expected"), SYNTH_REFUSALS, ids=[" ".join(o)[:40] for o, _ in SYNTH_REFUSALS])
def test_cdk_synth_refuses_bad_context_in_one_line_each_without_a_traceback(
    options: list[str], expected: list[str], tmp_path: Path
) -> None:
    result = cdk_synth(*[arg for option in options for arg in ("-c", option)], output=tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "Traceback" not in output
    assert "jsii" not in output
    lines = error_lines(result)
    assert len(lines) == len(expected), output
    for line, wanted in zip(lines, expected, strict=True):
        assert wanted in line, output
    assert not (tmp_path / "SensorDigest.template.json").exists()


def test_cdk_synth_names_every_bad_value_at_once(tmp_path: Path) -> None:
    options = ["ingestBatchSize=abc", "stackName=my_stack", "deadLetterRetentionDays=30", "alarmEmail=x", "queuetype=x"]
    result = cdk_synth(*[arg for option in options for arg in ("-c", option)], output=tmp_path)
    lines = error_lines(result)
    assert result.returncode != 0
    assert len(lines) == 5, result.stderr
    for key in ("ingestBatchSize='abc'", "stackName='my_stack'", "deadLetterRetentionDays=30", "alarmEmail='x'"):
        assert sum(key in line for line in lines) == 1, lines
    assert "'queuetype': did you mean 'queueType'?" in lines[0]


def test_cdk_synth_takes_good_context_from_the_command_line(tmp_path: Path) -> None:
    options = ["queueType=fifo", "alarmEmail=me@example.com", "stackName=SensorDigestFifo", "team=ops"]
    result = cdk_synth(*[arg for option in options for arg in ("-c", option)], output=tmp_path)
    assert result.returncode == 0, result.stderr
    assert error_lines(result) == []
    template = json.loads((tmp_path / "SensorDigestFifo.template.json").read_text())
    resources = template["Resources"].values()
    assert {r["Properties"].get("FifoQueue") for r in resources if r["Type"] == "AWS::SQS::Queue"} == {True, None}
    [subscription] = [r for r in resources if r["Type"] == "AWS::SNS::Subscription"]
    assert subscription["Properties"]["Endpoint"] == "me@example.com"
