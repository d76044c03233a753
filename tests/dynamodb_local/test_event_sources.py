"""The local event sources' semantics: the SQS side on the in-process broker (no engine needed),
the stream side on DynamoDB Local's real stream."""

from __future__ import annotations

import time
from typing import Any

import boto3
import pytest

from sensor_digest_tools.aws.sqs_broker import ENDPOINT, LocalSqsBroker
from sensor_digest_tools.aws.stream_reader import StreamReader
from sensor_digest_tools.lambda_runtime.sqs_event_source import SqsEventSource
from sensor_digest_tools.lambda_runtime.stream_event_source import StreamEventSource
from tests.support.tables import Tables


@pytest.fixture
def broker_sqs() -> tuple[LocalSqsBroker, Any]:
    broker = LocalSqsBroker()
    session = boto3.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1")
    broker.install(session)
    return broker, session.client("sqs", endpoint_url=ENDPOINT)


class Recorder:
    """A handler that records each batch and fails the message bodies it is told to."""

    def __init__(self, fail_bodies: set[str] = frozenset(), fail_times: int = 10**9, raise_once: bool = False) -> None:
        self.batches: list[list[dict[str, Any]]] = []
        self.fail_bodies = set(fail_bodies)
        self.fail_times = fail_times
        self.raise_once = raise_once

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        self.batches.append(event["Records"])
        if self.raise_once:
            self.raise_once = False
            raise RuntimeError("crash")
        failures = [
            {"itemIdentifier": r["messageId"]}
            for r in event["Records"]
            if r["body"] in self.fail_bodies and self.fail_times > 0
        ]
        if failures:
            self.fail_times -= 1
        return {"batchItemFailures": failures}


def drain(source: SqsEventSource, seconds: float = 5) -> None:
    deadline = time.monotonic() + seconds
    while source.in_queue() and time.monotonic() < deadline:
        if source.poll_once() == 0:
            time.sleep(0.02)


def make_source(broker: LocalSqsBroker, sqs: Any, handler: Any, **kw: Any) -> tuple[SqsEventSource, str, str]:
    dlq = broker.create_queue("dlq")
    url = broker.create_queue("q", visibility_timeout=0.1, dead_letter_url=dlq, max_receive_count=3)
    return SqsEventSource(sqs=sqs, queue_url=url, handler=handler, batching_window=0.01, **kw), url, dlq


def send(sqs: Any, url: str, bodies: list[str]) -> None:
    for body in bodies:
        sqs.send_message(QueueUrl=url, MessageBody=body)


def test_batches_are_cut_by_size(broker_sqs: Any) -> None:
    broker, sqs = broker_sqs
    handler = Recorder()
    source, url, _ = make_source(broker, sqs, handler, batch_size=10)
    send(sqs, url, [f"m{i}" for i in range(25)])

    drain(source)

    assert [len(b) for b in handler.batches] == [10, 10, 5]
    assert handler.batches[0][0]["eventSource"] == "aws:sqs"


def test_listed_failures_are_redelivered_after_the_visibility_timeout(broker_sqs: Any) -> None:
    broker, sqs = broker_sqs
    handler = Recorder(fail_bodies={"bad"}, fail_times=1)
    source, url, dlq = make_source(broker, sqs, handler)
    send(sqs, url, ["ok", "bad"])

    drain(source)

    deliveries = [(r["body"], r["attributes"]["ApproximateReceiveCount"]) for b in handler.batches for r in b]
    assert deliveries == [("ok", "1"), ("bad", "1"), ("bad", "2")]
    assert broker.counts(dlq) == (0, 0)


def test_a_message_failing_max_receive_count_times_lands_in_the_dead_letter_queue(broker_sqs: Any) -> None:
    broker, sqs = broker_sqs
    handler = Recorder(fail_bodies={"bad"})
    source, url, dlq = make_source(broker, sqs, handler)
    send(sqs, url, ["bad", "ok"])

    drain(source)

    assert sum(r["body"] == "bad" for b in handler.batches for r in b) == 3
    assert broker.counts(dlq) == (1, 0)
    assert broker.counts(url) == (0, 0)


def test_a_lost_delete_delivers_the_message_again(broker_sqs: Any) -> None:
    broker, sqs = broker_sqs
    handler = Recorder()
    source, url, _ = make_source(broker, sqs, handler, duplicate_rate=1.0)
    send(sqs, url, ["a", "b"])

    drain(source)

    counts = [(r["body"], r["attributes"]["ApproximateReceiveCount"]) for b in handler.batches for r in b]
    assert sorted(counts) == [("a", "1"), ("a", "2"), ("b", "1"), ("b", "2")]
    assert source.stats.duplicates_injected == 2


def test_a_handler_that_raises_gets_the_whole_batch_again(broker_sqs: Any) -> None:
    broker, sqs = broker_sqs
    handler = Recorder(raise_once=True)
    source, url, _ = make_source(broker, sqs, handler)
    send(sqs, url, ["a", "b"])

    drain(source)

    assert [[r["body"] for r in b] for b in handler.batches] == [["a", "b"], ["a", "b"]]
    assert source.stats.handler_errors == 1


class StreamRecorder:
    def __init__(self, fail_at: int | None = None, failures: int = 1) -> None:
        self.batches: list[list[dict[str, Any]]] = []
        self.fail_at = fail_at
        self.failures = failures

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        records = event["Records"]
        self.batches.append(records)
        if self.fail_at is not None and self.failures > 0 and len(records) > self.fail_at:
            self.failures -= 1
            return {"batchItemFailures": [{"itemIdentifier": records[self.fail_at]["dynamodb"]["SequenceNumber"]}]}
        return {"batchItemFailures": []}


def put_day(ddb: Any, table: str, sensor: int, day: str, n: int) -> None:
    ddb.put_item(TableName=table, Item={"SensorId": {"N": str(sensor)}, "Date": {"S": day}, "DataCount": {"N": str(n)}})


def test_the_stream_side_applies_the_stacks_filter(ddb: Any, engine_endpoint: str, tables: Tables) -> None:
    put_day(ddb, tables.table, 1, "2024-05-01", 3)
    ddb.put_item(
        TableName=tables.table,
        Item={"SensorId": {"N": "1"}, "Date": {"S": "SUMMARY"}, "DailyCounts": {"M": {"2024-05-01": {"N": "3"}}}},
    )
    ddb.delete_item(TableName=tables.table, Key={"SensorId": {"N": "1"}, "Date": {"S": "2024-05-01"}})
    handler = StreamRecorder()
    source = StreamEventSource(reader=StreamReader(engine_endpoint, tables.table), handler=handler)

    source.poll_once()

    seen = [(r["eventName"], r["dynamodb"]["Keys"]["Date"]["S"]) for b in handler.batches for r in b]
    assert seen == [("INSERT", "2024-05-01")]
    assert source.stats.records_filtered_out == 2
    assert handler.batches[0][0]["eventSourceARN"] == source.reader.stream_arn


def test_the_stream_side_checkpoints_at_the_first_reported_failure(
    ddb: Any, engine_endpoint: str, tables: Tables
) -> None:
    for sensor in range(5):
        put_day(ddb, tables.table, sensor, "2024-05-01", 1)
    handler = StreamRecorder(fail_at=2)
    source = StreamEventSource(reader=StreamReader(engine_endpoint, tables.table), handler=handler, retry_delay=0)

    source.poll_once()

    sensors = [[int(r["dynamodb"]["Keys"]["SensorId"]["N"]) for r in b] for b in handler.batches]
    assert sensors == [[0, 1, 2, 3, 4], [2, 3, 4]]
    assert source.stats.retries == 1


def test_a_batch_that_keeps_failing_goes_to_the_on_failure_destination(
    ddb: Any, engine_endpoint: str, tables: Tables
) -> None:
    put_day(ddb, tables.table, 1, "2024-05-01", 1)
    handler = StreamRecorder(fail_at=0, failures=100)
    source = StreamEventSource(
        reader=StreamReader(engine_endpoint, tables.table), handler=handler, max_retries=2, retry_delay=0
    )

    source.poll_once()

    assert len(handler.batches) == 3  # the first try and two retries
    assert source.stats.sent_to_on_failure == 1
    assert source.pending == 0
