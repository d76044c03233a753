"""Scenario 7: a model-based test. Hypothesis drives deliveries, duplicates, faults, crashes and
stream replays against the real handlers on DynamoDB Local; the invariant is table == model.

While a message is unacknowledged (listed as failed, or its invocation crashed), its write may or
may not have committed (a timeout after a commit, a crash after k groups), so the invariant
bounds each count between what was acknowledged and that plus what is in doubt; once everything
is redelivered without faults, the table must equal the model exactly, and the summaries the
day items.
"""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from sensor_digest import summary
from sensor_digest.config import SummarySettings
from sensor_digest.stream_filter import matches_filter
from sensor_digest_tools.aws.stream_reader import StreamReader
from sensor_digest_tools.lambda_runtime.events import FakeContext, QueuedMessage, sqs_event, stream_event
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from tests.support.faults import Crash
from tests.support.hours import hours_match_counts
from tests.support.model import CONTEXT, ModelMachine, fault_rule, model_counts, run_machine
from tests.support.tables import by_sensor, day_counts, summaries

FAULTS = ("throttle", "timeout_after", "conflict", "crash")


class PipelineMachine(ModelMachine):
    fault = fault_rule(FAULTS)

    @initialize()
    def fresh_tables(self) -> None:
        self.start("Model")  # the sent and acknowledged reports by event id
        self.summary = lambda_handler(summary.build_service(SummarySettings(table_name=self.table), CONTEXT["session"]))
        self.reader = StreamReader(CONTEXT["endpoint"], self.table)
        self.records: list[dict[str, Any]] = []
        self.messages: list[QueuedMessage] = []
        self.pending: list[QueuedMessage] = []
        self.rng = random.Random(0)

    def _event_id(self, message: QueuedMessage) -> str:
        return str(json.loads(message.body)["event_id"])

    def _deliver(self, batch: list[QueuedMessage]) -> None:
        if not batch:
            return
        try:
            response = self.ingest(sqs_event(batch), FakeContext())
        except Crash:
            self.pending += batch
            return
        failed = {f["itemIdentifier"] for f in response["batchItemFailures"]}
        for message in batch:
            if message.message_id in failed:
                self.pending.append(message)
            else:
                self.acked.add(self._event_id(message))

    @rule(n=st.integers(1, 12), seed=st.integers(0, 2**16))
    def deliver_new(self, n: int, seed: int) -> None:
        rng = random.Random(seed)
        batch = []
        for _ in range(n):
            event_id = f"m{len(self.sent)}"
            sensor, day, count = rng.randrange(3), rng.choice(["2024-05-01", "2024-05-02"]), rng.randint(1, 3)
            self.sent[event_id] = (sensor, day, count)
            message = QueuedMessage(
                body=json.dumps(
                    {"sensor_id": sensor, "timestamp": f"{day}T06:00:00Z", "count": count, "event_id": event_id}
                )
            )
            self.messages.append(message)
            batch.append(message)
        self._deliver(batch)

    @precondition(lambda self: self.pending)
    @rule()
    def redeliver_failures(self) -> None:
        batch, self.pending = self.pending, []
        self._deliver(batch)

    @precondition(lambda self: self.messages)
    @rule(k=st.integers(1, 10), seed=st.integers(0, 2**16))
    def duplicate(self, k: int, seed: int) -> None:
        rng = random.Random(seed)
        self._deliver([rng.choice(self.messages) for _ in range(k)])

    @rule(seed=st.integers(0, 2**16))
    def replay_stream(self, seed: int) -> None:
        self.records += [r for r in self.reader.poll() if matches_filter(r)]
        if not self.records:
            return
        rng = random.Random(seed)
        schedule = [rng.choice(self.records) for _ in range(rng.randint(1, 2 * len(self.records)))]
        for start in range(0, len(schedule), 25):
            response = self.summary(stream_event(schedule[start : start + 25], "arn:stream"), FakeContext())
            assert response == {"batchItemFailures": []}
        assert self._summaries_never_ahead()

    def _summaries_never_ahead(self) -> bool:
        counts = day_counts(self.ddb, self.table)
        current = summaries(self.ddb, self.table)
        return all(n <= counts.get((s, d), 0) for s, days in current.items() for d, n in days.items())

    def settle(self) -> None:
        for _ in range(20):  # redeliver until nothing is in doubt
            if not self.pending:
                break
            self.redeliver_failures()
        assert not self.pending
        assert day_counts(self.ddb, self.table) == dict(model_counts(self.sent, set(self.sent)))
        assert hours_match_counts(self.ddb, self.table) == []  # every hour exact: they sum to the exact counts
        self.records += [r for r in self.reader.poll() if matches_filter(r)]
        for start in range(0, len(self.records), 50):
            self.summary(stream_event(self.records[start : start + 50], "arn:stream"), FakeContext())
        assert summaries(self.ddb, self.table) == by_sensor(day_counts(self.ddb, self.table))


def test_the_tables_always_agree_with_the_model(machine_context: None) -> None:
    run_machine(PipelineMachine, examples=12, steps=15)
