"""Contention as DynamoDB shows it: transactions on one hot sensor-day from concurrent invocations.

DynamoDB Local serializes concurrent transactions on an item where DynamoDB cancels them with
``TransactionConflict``; the conflict emulator (``sensor_digest_tools.instruments.conflicts``) restores
that on the session the ingest service uses. Engine: DynamoDB Local.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sensor_digest import ingest
from sensor_digest.config import IngestSettings
from sensor_digest.ingest import BatchReport, InboundMessage
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.instruments.conflicts import ConflictEmulator
from tests.support.sqs import DeadLetters
from tests.support.tables import Tables, day_counts

INVOCATIONS = 8


def hot_batches() -> tuple[list[list[InboundMessage]], Counter[tuple[int, str]]]:
    """Each invocation's batch of 40: half on sensor 1's day, the rest on 20 sensors of its own."""
    truth: Counter[tuple[int, str]] = Counter()
    batches = []
    for b in range(INVOCATIONS):
        batch = []
        for i in range(40):
            sensor = 1 if i % 2 == 0 else 1000 * (b + 1) + i
            body = {"sensor_id": sensor, "timestamp": "2024-05-01T10:00:00Z", "event_id": f"{b}-{i}"}
            batch.append(InboundMessage(message_id=f"{b}-{i}", body=json.dumps(body)))
            truth[(sensor, "2024-05-01")] += 1
        batches.append(batch)
    return batches, truth


def run_concurrently(
    service: ingest.IngestService, batches: list[list[InboundMessage]], deadline: Any
) -> list[BatchReport]:
    barrier = threading.Barrier(len(batches))
    reports: list[BatchReport] = []

    def invoke(batch: list[InboundMessage]) -> None:
        barrier.wait()
        reports.append(service.process(batch, deadline() if deadline else None))

    threads = [threading.Thread(target=invoke, args=(b,)) for b in batches]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return reports


@pytest.fixture
def contended(
    engine_endpoint: str, tables: Tables, dead_letters: DeadLetters
) -> tuple[ingest.IngestService, ConflictEmulator]:
    session = LocalSession({"dynamodb": engine_endpoint})
    emulator = ConflictEmulator()
    emulator.install(session)
    settings = IngestSettings(
        table_name=tables.table, ledger_table_name=tables.ledger, dlq_url=dead_letters.url, timezone=ZoneInfo("UTC")
    )
    return ingest.build_service(settings, session), emulator


def test_without_retries_a_hot_sensor_day_conflicts_and_lists_its_messages(
    ddb: Any, tables: Tables, contended: Any
) -> None:
    # The emulator's proof: no deadline, so no retry inside the invocation
    service, emulator = contended
    batches, _ = hot_batches()

    reports = run_concurrently(service, batches, deadline=None)

    assert emulator.conflicts > 0
    failed = sum(r.failed for r in reports)
    assert failed > 0  # these would wait out the visibility timeout
    assert all(i.startswith(r.failed_ids[0].split("-")[0]) for r in reports for i in r.failed_ids)
    counted = day_counts(ddb, tables.table).get((1, "2024-05-01"), 0)
    assert counted + failed == INVOCATIONS * 20  # only the hot day's groups failed, and none was lost


def test_with_time_left_conflicts_are_retried_and_every_message_counts_in_its_invocation(
    ddb: Any, tables: Tables, contended: Any
) -> None:
    service, emulator = contended
    batches, truth = hot_batches()

    reports = run_concurrently(service, batches, deadline=lambda: time.monotonic() + 25)

    assert emulator.conflicts > 0
    # every conflict deferred its group to the end of the batch or was retried there
    assert sum(r.retries + r.deferred for r in reports) >= emulator.transaction_conflicts
    assert sum(r.deferred for r in reports) > 0
    assert [r.failed_ids for r in reports] == [[]] * INVOCATIONS  # no message waits for SQS
    assert day_counts(ddb, tables.table) == dict(truth)


def test_a_write_to_an_item_a_transaction_holds_is_rejected_as_dynamodb_does(
    engine_endpoint: str, tables: Tables, ddb: Any
) -> None:
    # Given a transaction on sensor 5's day held in flight (after the emulator saw it, before it is sent)
    session = LocalSession({"dynamodb": engine_endpoint})
    emulator = ConflictEmulator()
    emulator.install(session)
    release, sent = threading.Event(), threading.Event()

    def hold(**_: Any) -> None:
        sent.set()
        release.wait(10)

    session.events.register("before-send.dynamodb.TransactWriteItems", hold)
    client = session.client("dynamodb")
    key = {"SensorId": {"N": "5"}, "Date": {"S": "2024-05-01"}}
    put = {"Put": {"TableName": tables.table, "Item": {**key, "DataCount": {"N": "1"}}}}
    holder = threading.Thread(target=lambda: client.transact_write_items(TransactItems=[put]))
    holder.start()
    assert sent.wait(10)

    # When other writes touch that item, and another item, meanwhile
    update = {
        "TableName": tables.table,
        "UpdateExpression": "ADD DataCount :n",
        "ExpressionAttributeValues": {":n": {"N": "1"}},
    }
    with pytest.raises(client.exceptions.TransactionConflictException):
        client.update_item(Key=key, **update)
    with pytest.raises(client.exceptions.TransactionCanceledException) as cancelled:
        client.transact_write_items(TransactItems=[put])
    client.update_item(Key={**key, "Date": {"S": "2024-05-02"}}, **update)  # another item: no conflict
    release.set()
    holder.join()

    # Then they were refused with DynamoDB's errors, nothing of them written; once it is done, writes go through
    assert [r["Code"] for r in cancelled.value.response["CancellationReasons"]] == ["TransactionConflict"]
    client.update_item(Key=key, **update)
    assert day_counts(ddb, tables.table) == {(5, "2024-05-01"): 2, (5, "2024-05-02"): 1}
    assert emulator.conflicts == 2
