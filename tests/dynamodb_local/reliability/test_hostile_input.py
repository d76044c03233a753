"""Scenario 4: hostile input through the real ingest handler (DynamoDB Local; the DLQ is moto's SQS).

Each message is counted or rejected into the dead-letter queue with its reason; the handler never
raises and lists nothing; the counts of the well-formed messages around it do not change.
"""

from __future__ import annotations

import json
from typing import Any
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sensor_digest.errors import RejectedMessage
from sensor_digest.messages import read_pending
from sensor_digest_tools.lambda_runtime.events import FakeContext, QueuedMessage, sqs_event
from tests.support.hostile import HOSTILE_BODY
from tests.support.sqs import DeadLetters
from tests.support.tables import Tables, day_counts, recorded

EXPRESSION_SYNTAX = [
    "#a",
    ":v",
    ")",
    "attribute_exists(x)",
    "SET #c = :n",
    "MSG#1#x",
    "' OR 1=1 --",
    "\u200b",
    "日本語",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**70), 2**70),
    st.text(max_size=20),
    st.sampled_from(EXPRESSION_SYNTAX),
)
VALUES = st.recursive(
    SCALARS, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3), max_leaves=8
)
HOSTILE_SENSOR = st.one_of(st.integers(1000, 2**53 - 1), st.integers(2**53, 2**64), VALUES)


def identity_of(message: QueuedMessage) -> tuple[int, str, str] | None:
    """The sensor, day and event id a valid message is counted under (``None`` for one the schema
    rejects)."""
    try:
        sent = str(message.sent_timestamp_ms)
        pending = read_pending(message_id=message.message_id, body=message.body, sent_timestamp=sent)
        parsed = pending.in_zone(ZoneInfo("UTC"))
    except RejectedMessage:
        return None
    return parsed.sensor_id, parsed.day, parsed.event_id


def body_text(fields: dict[str, Any]) -> str:
    return json.dumps(fields, allow_nan=True)  # NaN/Infinity on purpose: the parser must refuse them


HOSTILE = st.one_of(
    st.fixed_dictionaries(
        {"sensor_id": HOSTILE_SENSOR},
        optional={
            "timestamp": VALUES | st.text(max_size=30),
            "count": VALUES,
            "event_id": VALUES | st.sampled_from(EXPRESSION_SYNTAX),
        },
    ).map(lambda fields: ("fields", fields)),
    st.text(max_size=200).map(lambda text: ("raw", text)),  # not JSON, or JSON that is not an object
    st.integers(1, 4000).map(lambda depth: ("raw", '{"sensor_id": 1000, "x": ' + "[" * depth + "]" * depth + "}")),
    st.integers(1000, 1100).map(lambda s: ("raw", json.dumps({"sensor_id": s, "pad": "x" * 250_000}))),  # 250 KB
    HOSTILE_BODY.map(lambda text: ("raw", text)),  # huge numbers, edge timestamps, deep nesting
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(hostile=st.lists(HOSTILE, min_size=1, max_size=6))
def test_hostile_messages_are_counted_or_kept_and_never_disturb_the_others(
    ddb: Any, tables: Tables, ingest_handler: Any, dead_letters: DeadLetters, hostile: list[tuple[str, Any]]
) -> None:
    before_counts = day_counts(ddb, tables.table)
    good = [
        QueuedMessage(body=json.dumps({"sensor_id": s, "timestamp": "2024-05-01T09:00:00Z", "count": 2}))
        for s in (1, 2, 3)
    ]
    bad = [QueuedMessage(body=body_text(value) if kind == "fields" else value) for kind, value in hostile]

    response = ingest_handler(sqs_event(good[:2] + bad + good[2:]), FakeContext())

    kept = dead_letters.drain()
    after = day_counts(ddb, tables.table)
    assert response == {"batchItemFailures": []}
    for sensor in (1, 2, 3):  # the well-formed messages counted exactly, whatever came between them
        assert after[(sensor, "2024-05-01")] == before_counts.get((sensor, "2024-05-01"), 0) + 2
    assert all(k.error for k in kept)  # every kept message says why
    kept_ids = {k.source_message_id for k in kept}
    assert kept_ids <= {m.message_id for m in bad}
    for message in bad:  # each hostile message ended in exactly one place: kept, or counted (now or before)
        identity = identity_of(message)
        counted = identity is not None and recorded(ddb, tables, *identity)
        assert (message.message_id in kept_ids) != counted, message.body[:200]


def test_a_timestamp_past_float_range_is_kept_with_its_reason_and_the_batch_counts(
    ddb: Any, tables: Tables, ingest_handler: Any, dead_letters: DeadLetters
) -> None:
    # The 431-byte message that once made the handler raise, so that Lambda retried the whole batch
    # until every valid message of it sat in the dead-letter queue uncounted and without a reason.
    hostile = QueuedMessage(body=json.dumps({"sensor_id": 5, "timestamp": 2**1100}))
    good = [QueuedMessage(body=json.dumps({"sensor_id": 6, "timestamp": "2024-05-01T09:00:00Z"})) for _ in range(3)]

    response = ingest_handler(sqs_event([good[0], hostile, *good[1:]]), FakeContext())

    assert response == {"batchItemFailures": []}
    assert day_counts(ddb, tables.table)[(6, "2024-05-01")] == 3
    [kept] = dead_letters.drain()
    assert kept.source_message_id == hostile.message_id
    assert "timestamp" in kept.error
    assert "out of range" in kept.error
