"""Scenario 2: four processes run the ingest handler at once on overlapping batches (DynamoDB Local)."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
from collections import Counter
from typing import Any

from sensor_digest_tools.lambda_runtime.events import QueuedMessage, sqs_record
from tests.support.hours import hour_counts, hour_truth, hours_match_counts
from tests.support.tables import Tables, day_counts, identities
from tests.support.workers import run_handler_on_batches


def test_four_processes_on_overlapping_batches_of_the_same_sensor_days_count_exactly(
    ddb: Any, tables: Tables, engine_endpoint: str
) -> None:
    # Given 2,000 messages over only 4 sensors and 2 days, and every process delivering all of them
    rng = random.Random(21)
    truth: Counter[tuple[int, str]] = Counter()
    records, queued = [], []
    for i in range(2000):
        sensor, day, count = rng.randrange(4), rng.choice(["2024-05-01", "2024-05-02"]), rng.randint(1, 3)
        body = {"sensor_id": sensor, "timestamp": f"{day}T10:00:00Z", "count": count, "event_id": f"c-{i}"}
        queued.append(QueuedMessage(body=json.dumps(body)))
        records.append(sqs_record(queued[-1]))
        truth[(sensor, day)] += count
    env = {
        "AWS_ENDPOINT_URL_DYNAMODB": engine_endpoint,
        "TABLE_NAME": tables.table,
        "LEDGER_TABLE_NAME": tables.ledger,
        "DLQ_URL": "https://sqs.us-east-1.amazonaws.com/000000000000/unused",
        "AWS_ACCESS_KEY_ID": os.environ["AWS_ACCESS_KEY_ID"],
        "AWS_SECRET_ACCESS_KEY": os.environ["AWS_SECRET_ACCESS_KEY"],
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "ERROR",
    }
    work = []
    for p in range(4):
        mine = list(records)
        random.Random(p).shuffle(mine)
        work.append((env, [mine[i : i + 100] for i in range(0, len(mine), 100)]))

    # When four processes run the handler at the same time
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        results = pool.starmap(run_handler_on_batches, work)

    # Then every count is exact (each message was delivered four times) and each has one identity
    assert day_counts(ddb, tables.table) == dict(truth)
    assert hour_counts(ddb, tables.table) == dict(hour_truth(queued))
    assert hours_match_counts(ddb, tables.table) == []
    assert identities(ddb, tables) == 2000
    assert len(results) == 4
