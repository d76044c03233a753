"""Scenario 6: messages that failed maxReceiveCount times land in the dead-letter queue; redriving
them later counts each exactly once. SQS: the in-process broker with the local SQS event source;
DynamoDB: DynamoDB Local; the ingest handler is the real one, with the fault layer in its client."""

from __future__ import annotations

import json
import time
from typing import Any
from zoneinfo import ZoneInfo

from sensor_digest import ingest
from sensor_digest.config import IngestSettings
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.aws.sqs_broker import ENDPOINT, LocalSqsBroker
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from sensor_digest_tools.lambda_runtime.sqs_event_source import SqsEventSource
from sensor_digest_tools.ops.dlq import redrive
from tests.support.faults import FaultySession, touches_sensor
from tests.support.hours import hour_counts, hours_match_counts
from tests.support.tables import Tables, day_counts, identities


def test_messages_that_exhausted_their_receives_are_counted_once_when_redriven(
    ddb: Any, tables: Tables, engine_endpoint: str
) -> None:
    # Given a queue with redrive after 3 receives, and writes for sensor 7 throttled, for sensor 8
    # committed but answered with a timeout (the ambiguous case), for as long as the outage lasts
    broker = LocalSqsBroker()
    session = LocalSession({"dynamodb": engine_endpoint, "sqs": ENDPOINT})
    broker.install(session)
    sqs = session.client("sqs")
    dlq = broker.create_queue("dlq")
    queue = broker.create_queue("q", visibility_timeout=0.05, dead_letter_url=dlq, max_receive_count=3)
    outage = {"on": False}

    def rule(operation: str, kwargs: dict[str, Any]) -> str | None:
        if not outage["on"]:
            return None
        if touches_sensor(kwargs, 7):
            return "throttle"
        return "timeout_after" if touches_sensor(kwargs, 8) else None

    settings = IngestSettings(
        table_name=tables.table, ledger_table_name=tables.ledger, dlq_url=dlq, timezone=ZoneInfo("UTC")
    )
    service = ingest.build_service(settings, FaultySession(inner=session, rule=rule))
    source = SqsEventSource(sqs=sqs, queue_url=queue, handler=lambda_handler(service), batching_window=0.01)

    def drain(seconds: float = 20) -> None:
        deadline = time.monotonic() + seconds
        while source.in_queue() and time.monotonic() < deadline:
            if source.poll_once() == 0:
                time.sleep(0.02)

    # sensor 8's day item exists before the outage, so its updates commit and then time out
    sqs.send_message(QueueUrl=queue, MessageBody=json.dumps({"sensor_id": 8, "timestamp": "2024-05-01T01:00:00Z"}))
    drain()
    outage["on"] = True
    for sensor in (6, 7, 8):
        for i in range(5):
            body = {"sensor_id": sensor, "timestamp": "2024-05-01T12:00:00Z", "count": 1, "event_id": f"e{i}"}
            sqs.send_message(QueueUrl=queue, MessageBody=json.dumps(body))

    # When the outage outlasts maxReceiveCount
    drain()
    in_dead_letters = broker.counts(dlq)[0]
    during = day_counts(ddb, tables.table)

    # and the dead letters are redriven once it is over
    outage["on"] = False
    redriven = redrive(sqs, dlq, queue, limit=100).moved
    drain()

    # Then sensor 7's five throttled messages went to the DLQ, and after the redrive each counts
    # exactly once. Sensor 8's writes committed but their answers timed out: on their first
    # redelivery the marker lookup found them counted, so they were acknowledged at once and never
    # became dead letters, though writes kept timing out (the lookup reads; the outage hit writes)
    assert in_dead_letters == 5 and redriven == 5
    assert during == {(6, "2024-05-01"): 5, (8, "2024-05-01"): 6}  # sensor 8 committed, unacknowledged
    assert day_counts(ddb, tables.table) == {(6, "2024-05-01"): 5, (7, "2024-05-01"): 5, (8, "2024-05-01"): 6}
    assert identities(ddb, tables) == 16
    day = "2024-05-01"
    hours = {(6, day, "12"): 5, (7, day, "12"): 5, (8, day, "01"): 1, (8, day, "12"): 5}
    assert hour_counts(ddb, tables.table) == hours
    assert hours_match_counts(ddb, tables.table) == []
    assert broker.counts(dlq) == (0, 0)
