"""Scenario 7 in ordered mode: the model-based test of ``test_model.py`` on a FIFO queue.

Hypothesis sends reports, receives batches as SQS FIFO hands them to Lambda (each sensor one
message group; a batch takes a run from the head of each group it touches, in order; whatever is
not deleted stays at the head of its group), loses deletes, and injects throttling, timeouts after
a commit and crashes into the real ingest handler on DynamoDB Local. The response must keep each
group's order, and the day counts must stay between what was acknowledged and that plus what is
in doubt; once everything is delivered without faults they must be exact.

The queue can be replaced, as CloudFormation replaces it: producers move to a new queue whose
sequence numbers start lower, and both queues deliver until the old one is empty.

SQS moves a message that was received ``MAX_RECEIVES`` times without a delete to the dead-letter
queue (its group goes on without it), and an operator redrives the dead-letter queue as
``sensor-digest dlq redrive`` does: each message sent again to the current queue, with a new
message id and sequence number, its origin stamped as attributes. Counted or not before, each
report must end counted once, but for the case ordered mode cannot know (docs/ordered-mode.md,
"What it promises"): a message that may have been counted before (a delivery lost a write's answer, or it was
acknowledged and its delete lost) and that SQS then moved away without ingest ever seeing it
counted again may count once more after its redrive. The model allows exactly that, message by
message; a message listed behind a failed one (a group's tail) must stay exact.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from sensor_digest.config import QueueType
from sensor_digest.dead_letter_format import SOURCE_ID_ATTRIBUTE, SOURCE_SENT_ATTRIBUTE
from sensor_digest_tools.lambda_runtime.events import FIFO_QUEUE_ARN, FakeContext, QueuedMessage, sqs_event
from tests.support.faults import Crash
from tests.support.fifo import FIRST_SEQUENCE, Sequencer
from tests.support.hours import hours_match_counts
from tests.support.model import SCRIPT, ModelMachine, fault_rule, model_counts, run_machine
from tests.support.tables import day_counts

FAULTS = ("throttle", "timeout_after", "crash")
MAX_RECEIVES = 5  # the stack's maxReceiveCount


class FifoMachine(ModelMachine):
    fault = fault_rule(FAULTS)

    @initialize()
    def fresh_tables(self) -> None:
        self.start("Fifo", queue_type=QueueType.FIFO)  # the sent and acknowledged reports by message id
        self.sequencer = Sequencer()
        self.current = FIFO_QUEUE_ARN
        self.queues: dict[str, list[QueuedMessage]] = {self.current: []}  # each in send order
        self.dead: list[QueuedMessage] = []  # what SQS moved to the dead-letter queue
        self.origin: dict[str, str] = {}  # a redriven copy's id -> the message id it was sent as
        self.answer_lost: set[str] = set()  # sent ids in a delivery that lost a write's answer
        self.moved: set[str] = set()  # sent ids SQS moved to the dead-letter queue

    @rule(n=st.integers(1, 12), seed=st.integers(0, 2**16))
    def send(self, n: int, seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(n):
            sensor, day, count = rng.randrange(3), rng.choice(["2024-05-01", "2024-05-02"]), rng.randint(1, 3)
            message = self.sequencer.message(sensor, day, count)
            self.sent[message.message_id] = (sensor, day, count)
            self.queues[self.current].append(message)

    @precondition(lambda self: len(self.queues) < 3)
    @rule()
    def replace_queue(self) -> None:
        # a new queue numbers from below the old one's numbers; the old one keeps delivering
        self.current = f"{FIFO_QUEUE_ARN[: -len('.fifo')]}-{len(self.queues)}.fifo"
        self.queues[self.current] = []
        self.sequencer = Sequencer(start=FIRST_SEQUENCE - 10**6 * len(self.queues))

    @precondition(lambda self: self.dead)
    @rule()
    def redrive(self) -> None:
        for message in self.dead:
            copy = QueuedMessage(
                body=message.body,
                group_id=message.group_id,
                deduplication_id=f"redrive-{message.message_id}",
                sequence_number=self.sequencer.message(0).sequence_number,
                attributes={
                    SOURCE_ID_ATTRIBUTE: {"DataType": "String", "StringValue": self._original(message.message_id)},
                    SOURCE_SENT_ATTRIBUTE: {"DataType": "Number", "StringValue": str(message.sent_timestamp_ms)},
                },
            )
            self.origin[copy.message_id] = self._original(message.message_id)
            self.queues[self.current].append(copy)
        self.dead.clear()

    def _original(self, message_id: str) -> str:
        return self.origin.get(message_id, message_id)

    def _move_exhausted(self) -> None:
        """SQS: a message received MAX_RECEIVES times and still there goes to the dead-letter queue."""
        for queue in self.queues.values():
            for message in [m for m in queue if m.receive_count >= MAX_RECEIVES]:
                queue.remove(message)
                self.dead.append(message)
                self.moved.add(self._original(message.message_id))

    @precondition(lambda self: any(self.queues.values()))
    @rule(size=st.integers(1, 10), seed=st.integers(0, 2**16), lose_deletes=st.booleans())
    def receive(self, size: int, seed: int, lose_deletes: bool) -> None:
        self._move_exhausted()
        if not any(self.queues.values()):
            return
        rng = random.Random(seed)
        arn = rng.choice(sorted(arn for arn, queue in self.queues.items() if queue))
        queue = self.queues[arn]
        groups = {m.group_id for m in queue}
        chosen = set(rng.sample(sorted(groups), rng.randint(1, len(groups))))
        batch = [m for m in queue if m.group_id in chosen][:size]  # a head run of each chosen group
        self._deliver(arn, batch, lose_deletes)

    def _deliver(self, arn: str, batch: list[QueuedMessage], lose_deletes: bool = False) -> None:
        for message in batch:
            message.receive_count += 1
        scripted = list(SCRIPT.queue)
        try:
            response = self.ingest(sqs_event(batch, arn), FakeContext())
        except Crash:
            self.answer_lost.update(self._original(m.message_id) for m in batch)
            return  # nothing deleted: the whole batch comes back after the visibility timeout
        finally:
            used = scripted[: len(scripted) - len(SCRIPT.queue)]
            if "timeout_after" in used:  # some write of this delivery may have committed unseen
                self.answer_lost.update(self._original(m.message_id) for m in batch)
        failed = [f["itemIdentifier"] for f in response["batchItemFailures"]]
        self._assert_group_order_kept(batch, set(failed))
        for message in batch:
            if message.message_id in failed:
                continue
            self.acked.add(self._original(message.message_id))
            if not lose_deletes:
                self.queues[arn].remove(message)

    @staticmethod
    def _assert_group_order_kept(batch: list[QueuedMessage], failed: set[str]) -> None:
        blocked: set[str | None] = set()
        for message in batch:
            if message.group_id in blocked:
                assert message.message_id in failed, "a later message of a listed group was not listed"
            if message.message_id in failed:
                blocked.add(message.group_id)

    def settle(self) -> None:
        self._move_exhausted()
        self.redrive()  # the operator redrives whatever SQS set aside
        for _ in range(200):  # SQS keeps delivering until every message is deleted
            waiting = [(arn, queue) for arn, queue in self.queues.items() if queue]
            if not waiting:
                break
            arn, queue = waiting[0]
            self._deliver(arn, queue[:10])
        assert not any(self.queues.values()) and not self.dead
        exact = model_counts(self.sent, set(self.sent))
        unknowable = model_counts(self.sent, self.moved & (self.answer_lost | self.acked))
        counts = day_counts(self.ddb, self.table)
        for key in set(counts) | set(exact):
            assert exact[key] <= counts.get(key, 0) <= exact[key] + unknowable[key], (key, counts.get(key), exact[key])
        assert hours_match_counts(self.ddb, self.table) == []  # the hours travel with every count


def test_fifo_counts_always_agree_with_the_model(machine_context: None) -> None:
    run_machine(FifoMachine, examples=15, steps=20)


def test_the_machine_catches_a_response_that_breaks_group_order() -> None:
    # the order check itself: a later message of a listed group left unlisted must be caught
    seq = Sequencer()
    first, second = seq.message(1), seq.message(1)
    with pytest.raises(AssertionError, match="later message of a listed group"):
        FifoMachine._assert_group_order_kept([first, second], {first.message_id})
    FifoMachine._assert_group_order_kept([first, second], {first.message_id, second.message_id})
    assert json.loads(first.body)["sensor_id"] == 1
