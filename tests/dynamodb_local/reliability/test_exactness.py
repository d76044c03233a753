"""Scenarios 1 and 5 of the reliability suite, on DynamoDB Local (the DLQ is moto's SQS).

1. 4,000 messages over 20 sensors x 4 days, 10% delivered more than once, 2% of write calls faulted
   (throttle before, timeout after a commit, TransactionConflict, crash), redelivered until drained:
   exact. The same scenario at-least-once must overcount: proof that the check can see the bug.
   About 50 reports a sensor-day, as at the 20,000 messages over 100 sensors it ran with before:
   each sensor-day's identities overflow its day item into ledger pages. The test asserts that
   every ingredient happened (duplicates, each fault kind, crashed invocations, listed failures
   redelivered, ledger pages), so the smaller run cannot pass by not meeting them.
5. A batch of 100 with 10 poison messages: 90 counted, 10 kept, 0 failures.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from sensor_digest import ingest
from sensor_digest.config import DeliveryMode, IngestSettings
from sensor_digest_tools.lambda_runtime.events import FakeContext, QueuedMessage, sqs_event
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from tests.support.delivery import deliver_until_drained
from tests.support.faults import FaultPlan
from tests.support.hours import hour_counts, hour_truth, hours_match_counts, readings_read, readings_truth
from tests.support.sqs import DeadLetters
from tests.support.tables import Tables, day_counts, identities, ledger_pages, scan_all

DAYS = ["2024-05-01", "2024-05-02", "2024-05-03", "2024-05-04"]


MESSAGES, SENSORS = 4_000, 20  # ~50 reports a sensor-day: past the day item's DAY_IDS, into pages


def scenario(
    n: int, seed: int, sensors: int = SENSORS
) -> tuple[list[QueuedMessage], list[QueuedMessage], Counter[tuple[int, str]]]:
    rng = random.Random(seed)
    messages, truth = [], Counter()
    for i in range(n):
        sensor, day, count = rng.randrange(sensors), rng.choice(DAYS), rng.randint(1, 4)
        body = {
            "sensor_id": sensor,
            "timestamp": f"{day}T{rng.randrange(24):02d}:00:00Z",
            "count": count,
            "event_id": f"r-{i}",
            "readings": {"t": rng.randrange(-5_000_000, 5_000_000) / 1000},  # a reading, exact in decimal
        }
        messages.append(QueuedMessage(body=json.dumps(body)))
        truth[(sensor, day)] += count
    deliveries = list(messages)
    deliveries += [m for m in rng.sample(messages, k=n // 10) for _ in range(rng.randint(1, 2))]  # 10% again
    rng.shuffle(deliveries)
    return messages, deliveries, truth


@pytest.mark.fresh_engine
def test_messages_with_duplicates_and_faults_are_counted_exactly(
    ddb: Any, tables: Tables, ingest_handler: Any, faults: FaultPlan, capsys: pytest.CaptureFixture[str]
) -> None:
    messages, deliveries, truth = scenario(MESSAGES, seed=11)
    faults.rate = 0.02

    seen = deliver_until_drained(ingest_handler, deliveries)

    counts = day_counts(ddb, tables.table)
    lost = sum(max(0, truth[k] - counts.get(k, 0)) for k in truth)
    double = sum(max(0, counts.get(k, 0) - truth[k]) for k in counts)
    kept = identities(ddb, tables)
    pages = ledger_pages(ddb, tables)
    with capsys.disabled():
        print(
            f"\nreliability: {len(messages)} messages, {len(deliveries) - len(messages)} duplicate deliveries, "
            f"{sum(faults.injected.values())} faults injected {dict(faults.injected)}, {seen.crashes} crashed "
            f"invocations, {seen.failures_listed} failures redelivered, {pages} ledger pages; "
            f"lost {lost}, double-counted {double}"
        )
    # the run met every ingredient of the claim: none of them can have been skipped by its size
    assert len(deliveries) - len(messages) > 0  # duplicate deliveries
    assert all(faults.injected[k] > 0 for k in ("throttle", "timeout_after", "conflict", "crash"))
    assert seen.crashes > 0 and seen.failures_listed > 0  # whole batches and listed records redelivered
    assert pages > 0  # identities past the day item, in ledger pages
    assert (lost, double) == (0, 0)
    assert counts == dict(truth)
    assert hour_counts(ddb, tables.table) == dict(hour_truth(messages))  # every hour exact too
    assert hours_match_counts(ddb, tables.table) == []
    assert readings_read(ddb, tables.table) == readings_truth(messages)  # every reading's statistics exact
    assert kept == len(messages)  # one identity per counted report


@pytest.mark.fresh_engine
def test_the_same_scenario_at_least_once_overcounts(
    ddb: Any, tables: Tables, ingest_settings: IngestSettings, ingest_session: Any, faults: FaultPlan
) -> None:
    settings = replace(ingest_settings, delivery_mode=DeliveryMode.AT_LEAST_ONCE)
    handler = lambda_handler(ingest.build_service(settings, ingest_session))
    messages, deliveries, truth = scenario(MESSAGES, seed=11)
    faults.rate = 0.02

    deliver_until_drained(handler, deliveries)

    # the causes of an overcount occurred: duplicates, and writes committed whose answer was lost
    assert len(deliveries) > len(messages) and faults.injected["timeout_after"] > 0
    counts = day_counts(ddb, tables.table)
    assert sum(counts.values()) > sum(truth.values())  # duplicates and ambiguous timeouts counted twice
    assert all(counts.get(k, 0) >= n for k, n in truth.items())  # but never an undercount
    assert scan_all(ddb, tables.ledger) == []


def test_a_batch_of_100_with_10_poison_counts_90_and_keeps_10(
    ddb: Any, tables: Tables, ingest_handler: Any, dlq: DeadLetters
) -> None:
    rng = random.Random(5)
    poison_bodies = [
        '{"sensor_id": "1"}',
        "{",
        '{"sensor_id": 1, "count": 0}',
        "[]",
        '{"sensor_id": 1.5}',
        '{"sensor_id": 1, "timestamp": "noon"}',
        "null",
        '{"sensor_id": 1, "event_id": ""}',
        '{"sensor_id": false}',
        '{"count": 2}',
    ]
    good = [
        QueuedMessage(body=json.dumps({"sensor_id": i % 7, "timestamp": "2024-05-01T08:00:00Z"})) for i in range(90)
    ]
    poison = [QueuedMessage(body=b) for b in poison_bodies]
    batch = good + poison
    rng.shuffle(batch)

    response = ingest_handler(sqs_event(batch), FakeContext())

    kept = dlq.drain()
    assert response == {"batchItemFailures": []}
    assert sum(day_counts(ddb, tables.table).values()) == 90
    assert sorted(k.source_message_id for k in kept) == sorted(m.message_id for m in poison)
    assert all(k.error for k in kept)
