"""A report's life through the dead-letter queue and back: the queue with the stack's
``maxReceiveCount`` and its dead-letter queue on the in-process broker, with a clock a test moves on
by days, drained by the local SQS event source into the real ingest service (DynamoDB Local behind
it, the fault layer in its client), and the three redrives an operator has."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from sensor_digest import ingest
from sensor_digest.config import IngestSettings
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.aws.sqs_broker import ENDPOINT, LocalSqsBroker
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from sensor_digest_tools.lambda_runtime.sqs_event_source import SqsEventSource
from sensor_digest_tools.ops.dlq import redrive, stamp
from tests.support.faults import WRITE_OPERATIONS, FaultySession, Rule, touches_sensor
from tests.support.tables import Tables

MAY_1_10H = datetime(2024, 5, 1, 10, tzinfo=UTC).timestamp()
DAY = 86_400


class Pipeline:
    """A queue with the stack's ``maxReceiveCount`` (5) and its dead-letter queue on the broker,
    drained by the SQS event source into the real ingest service; ``now`` is the broker's clock."""

    def __init__(self, tables: Tables, endpoint: str, *, rule: Rule | None = None, **settings: Any) -> None:
        self.now = MAY_1_10H
        self.broker = LocalSqsBroker(clock=lambda: self.now)
        session = LocalSession({"dynamodb": endpoint, "sqs": ENDPOINT})
        self.broker.install(session)
        self.sqs = session.client("sqs")
        self.dlq = self.broker.create_queue("dlq")
        self.queue = self.broker.create_queue(
            "q", visibility_timeout=0.05, dead_letter_url=self.dlq, max_receive_count=5
        )
        faulty = FaultySession(
            inner=session, rule=rule or (lambda op, kw: None), operations=(*WRITE_OPERATIONS, "batch_get_item")
        )
        options = {"profile_cache_seconds": 0, **settings}
        service = ingest.build_service(
            IngestSettings(
                table_name=tables.table,
                ledger_table_name=tables.ledger,
                dlq_url=self.dlq,
                timezone=ZoneInfo("UTC"),
                **options,
            ),
            faulty,
        )
        self.source = SqsEventSource(
            sqs=self.sqs, queue_url=self.queue, handler=lambda_handler(service), batching_window=0.01
        )

    def send(self, body: dict[str, Any], attributes: dict[str, Any] | None = None) -> str:
        """One report to the queue, with the producer's own message ``attributes`` if given."""
        extra = {"MessageAttributes": attributes} if attributes else {}
        return str(self.sqs.send_message(QueueUrl=self.queue, MessageBody=json.dumps(body), **extra)["MessageId"])

    def drain(self, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while self.source.in_queue():
            assert time.monotonic() < deadline, "the queue did not drain"
            if self.source.poll_once() == 0:
                time.sleep(0.02)

    def sqs_own_redrive(self) -> None:
        """The console's "Start DLQ redrive": SQS moves every message back to its source queue."""
        arn = self.sqs.get_queue_attributes(QueueUrl=self.dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self.sqs.start_message_move_task(SourceArn=arn)

    def project_redrive(self) -> None:
        report = redrive(self.sqs, self.dlq, self.queue)
        assert report.left == []

    def stamped_then_sqs_own_redrive(self) -> None:
        stamp(self.sqs, self.dlq)
        self.sqs_own_redrive()


REDRIVES: dict[str, Callable[[Pipeline], None]] = {
    "sensor-digest dlq redrive": Pipeline.project_redrive,
    "dlq stamp, then SQS's own redrive": Pipeline.stamped_then_sqs_own_redrive,
}
"""The two redrives that keep a report's origin: this project's, and ``dlq stamp`` before SQS's own."""


class LostAnswerOutage:
    """A fault rule (``FaultySession``'s): while ``on``, the next write of ``sensor`` commits but its
    answer is lost, and every later call for it fails, the ledger's marker lookup included (the
    profiles' read need not), for as long as the outage lasts."""

    def __init__(self, ledger: str, sensor: int) -> None:
        self.ledger, self.sensor = ledger, sensor
        self.on = False
        self.committed = False

    def __call__(self, operation: str, kwargs: dict[str, Any]) -> str | None:
        if not self.on:
            return None
        if operation == "batch_get_item":
            return "throttle" if self.ledger in kwargs["RequestItems"] else None
        if touches_sensor(kwargs, self.sensor) and not self.committed:
            self.committed = True
            return "timeout_after"
        return "throttle"


def answer_lost_into_the_dead_letter_queue(tables: Tables, endpoint: str) -> tuple[Pipeline, LostAnswerOutage, str]:
    """Sensor 8's day under way (its report ``earlier`` counted), then an outage (``LostAnswerOutage``) in
    which its next report, of 3 without event_id or timestamp, commits but loses its answer and fails
    every later receive into the dead-letter queue: the pipeline, the outage (still on) and that report's
    message id."""
    outage = LostAnswerOutage(tables.ledger, sensor=8)
    pipeline = Pipeline(tables, endpoint, rule=outage)
    pipeline.send({"sensor_id": 8, "event_id": "earlier"})  # the day under way: its next write is the count's
    pipeline.drain()
    outage.on = True
    original = pipeline.send({"sensor_id": 8, "count": 3})  # no event_id, no timestamp: its SQS id and send time
    pipeline.drain()
    return pipeline, outage, original
