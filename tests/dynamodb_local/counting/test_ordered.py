"""Ordered mode (``QUEUE_TYPE=fifo``) on DynamoDB Local; the FIFO dead-letter queue is moto's SQS.

Every redelivery SQS and Lambda make on a FIFO queue (a whole batch again, the listed tail of a
batch, a retried group merged with its later messages, a write that committed but timed out) must
leave the counts exact, with one conditional write per sensor-day; the ledger keeps only the
markers of counted messages listed behind a failed one, so that a redrive counts them once.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sensor_digest.dead_letter_format import SOURCE_ID_ATTRIBUTE, SOURCE_SENT_ATTRIBUTE
from sensor_digest.store import schema
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.lambda_runtime.events import FIFO_QUEUE_ARN
from sensor_digest_tools.ops.sequences import migrate_sequences
from tests.support.fifo import Sequencer, fifo_handler
from tests.support.messages import FakeContext, QueuedMessage, sqs_event
from tests.support.sqs import DeadLetters
from tests.support.tables import Tables, day_counts, scan_all

DAY, NEXT_DAY = "2024-05-01", "2024-05-02"


class WriteFaults:
    """Faults the next ``times`` writes of one sensor's day item (any day when ``day`` is None),
    and counts every write call by operation."""

    def __init__(self, kind: str = "throttle", sensor: int | None = None, day: str | None = None, times: int = 0):
        self.kind, self.sensor, self.day, self.times = kind, sensor, day, times
        self.calls: dict[str, int] = {}

    def __call__(self, operation: str, kwargs: dict[str, Any]) -> str | None:
        self.calls[operation] = self.calls.get(operation, 0) + 1
        key = kwargs.get("Key") or kwargs.get("Item") or {}
        hit = key.get(schema.SENSOR_ID, {}).get("N") == str(self.sensor) and self.day in (None, key[schema.DATE]["S"])
        if hit and self.times:
            self.times -= 1
            return self.kind
        return None


@pytest.fixture
def faults() -> WriteFaults:
    return WriteFaults()


@pytest.fixture
def handler(tables: Tables, fifo_dlq: DeadLetters, session: LocalSession, faults: WriteFaults) -> Any:
    return fifo_handler(tables, session, fifo_dlq.url, faults)


def listed(handler: Any, batch: list[QueuedMessage]) -> list[QueuedMessage]:
    """Deliver ``batch``; the messages the response lists, in batch order."""
    failed = [f["itemIdentifier"] for f in handler(sqs_event(batch), FakeContext())["batchItemFailures"]]
    by_id = {m.message_id: m for m in batch}
    return [by_id[mid] for mid in failed]


def test_a_whole_batch_delivered_again_counts_nothing_more_and_no_marker_is_written(
    handler: Any, ddb: Any, tables: Tables
) -> None:
    seq = Sequencer()
    batch = [seq.message(1, count=2), seq.message(2), seq.message(1, count=3), seq.message(1, NEXT_DAY, count=4)]

    assert listed(handler, batch) == []
    assert listed(handler, batch) == []  # a lost delete: SQS delivers the batch again

    assert day_counts(ddb, tables.table) == {(1, DAY): 5, (2, DAY): 1, (1, NEXT_DAY): 4}
    assert scan_all(ddb, tables.ledger) == []
    item = next(i for i in scan_all(ddb, tables.table) if i["SensorId"]["N"] == "1" and i["Date"]["S"] == DAY)
    assert item[schema.applied_sequence_name(FIFO_QUEUE_ARN)]["S"] == str(batch[2].sequence_number).zfill(39)
    assert schema.APPLIED_SEQUENCE not in item and schema.SEQUENCE_SOURCE not in item


def test_a_sensor_day_costs_one_conditional_write_per_batch(handler: Any, faults: WriteFaults) -> None:
    seq = Sequencer()
    assert listed(handler, [seq.message(3)]) == []  # the day item now exists
    faults.calls.clear()

    assert listed(handler, [seq.message(3, count=n) for n in range(1, 11)]) == []

    assert faults.calls == {"update_item": 1}


def test_the_first_write_of_a_day_is_the_insert_when_the_lookup_found_no_item(
    handler: Any, faults: WriteFaults, ddb: Any, tables: Tables
) -> None:
    seq = Sequencer()

    assert listed(handler, [seq.message(4, count=2), seq.message(4, count=5)]) == []

    assert faults.calls == {"put_item": 1}
    assert day_counts(ddb, tables.table) == {(4, DAY): 7}


def test_sequence_numbers_compare_as_numbers_across_a_change_of_digit_count(
    handler: Any, ddb: Any, tables: Tables
) -> None:
    # 99999999999999999999 (20 digits), then 100000000000000000000 (21): unpadded strings would
    # order them the other way round and drop the second as already applied
    seq = Sequencer(start=10**20 - 1)
    first, second = seq.message(5), seq.message(5, count=2)

    assert listed(handler, [first]) == []
    assert listed(handler, [second]) == []
    assert listed(handler, [first, second]) == []  # both again: nothing more

    assert day_counts(ddb, tables.table) == {(5, DAY): 3}


def test_two_days_of_one_sensor_with_one_days_write_failing_list_the_sensors_tail_only(
    handler: Any, faults: WriteFaults, ddb: Any, tables: Tables
) -> None:
    # Given sensor 1's messages on two days, interleaved with sensor 2's, and day B's write throttled
    seq = Sequencer()
    m1, other, m2, m3, m4 = (
        seq.message(1, DAY, 1),
        seq.message(2, DAY, 10),
        seq.message(1, NEXT_DAY, 2),
        seq.message(1, DAY, 4),
        seq.message(1, NEXT_DAY, 8),
    )
    faults.sensor, faults.day, faults.times = 1, NEXT_DAY, 1

    # When the batch is delivered: the failed day's first message and everything after it of
    # sensor 1 are listed (m3 was written with day A, but must wait behind m2 all the same)
    assert listed(handler, [m1, other, m2, m3, m4]) == [m2, m3, m4]
    assert day_counts(ddb, tables.table) == {(1, DAY): 5, (2, DAY): 10}

    # Then the listed tail comes back: m3 is found applied, m2 and m4 are counted
    assert listed(handler, [m2, m3, m4]) == []
    assert day_counts(ddb, tables.table) == {(1, DAY): 5, (1, NEXT_DAY): 10, (2, DAY): 10}


def test_a_failed_group_retried_together_with_later_messages_is_counted_once(
    handler: Any, faults: WriteFaults, ddb: Any, tables: Tables
) -> None:
    seq = Sequencer()
    m1, m2 = seq.message(6, count=1), seq.message(6, count=2)
    faults.sensor, faults.times = 6, 1  # the group's one write is throttled
    assert listed(handler, [m1, m2]) == [m1, m2]
    assert day_counts(ddb, tables.table) == {}

    later = [seq.message(6, count=4), seq.message(6, count=8)]
    assert listed(handler, [m1, m2, *later]) == []  # SQS hands the retried group over with what followed

    assert day_counts(ddb, tables.table) == {(6, DAY): 15}


def test_a_write_that_committed_but_timed_out_is_not_counted_again(
    handler: Any, faults: WriteFaults, ddb: Any, tables: Tables
) -> None:
    seq = Sequencer()
    m1, m2, n1 = seq.message(7, count=1), seq.message(7, count=2), seq.message(8, count=5)
    faults.kind, faults.sensor, faults.times = "timeout_after", 7, 1

    assert listed(handler, [m1, n1, m2]) == [m1, m2]
    assert day_counts(ddb, tables.table) == {(7, DAY): 3, (8, DAY): 5}  # it did commit

    assert listed(handler, [m1, m2, seq.message(7, count=4)]) == []
    assert day_counts(ddb, tables.table) == {(7, DAY): 7, (8, DAY): 5}


def test_a_listed_message_holds_back_the_rest_of_its_group_before_any_write(
    tables: Tables, session: LocalSession, ddb: Any
) -> None:
    # Given a dead-letter queue that refuses (it does not exist): a rejected message is listed
    faults = WriteFaults()
    handler = fifo_handler(tables, session, "http://127.0.0.1:9/000000000000/missing.fifo", faults)
    seq = Sequencer()
    first, poison, after, other = seq.message(9), seq.message(9), seq.message(9, count=5), seq.message(10)
    poison.body = "not json"

    assert listed(handler, [first, poison, after, other]) == [poison, after]

    assert day_counts(ddb, tables.table) == {(9, DAY): 1, (10, DAY): 1}  # `after` was not written


def test_a_message_whose_group_is_not_its_sensor_goes_to_the_fifo_dead_letter_queue(
    handler: Any, fifo_dlq: DeadLetters, ddb: Any, tables: Tables
) -> None:
    seq = Sequencer()
    stray, fine = seq.message(11, group="12"), seq.message(12)
    unnumbered = seq.message(13)
    unnumbered.sequence_number = None

    assert listed(handler, [stray, fine, unnumbered]) == []

    assert day_counts(ddb, tables.table) == {(12, DAY): 1}
    got = fifo_dlq.client.receive_message(
        QueueUrl=fifo_dlq.url, MaxNumberOfMessages=10, AttributeNames=["All"], MessageAttributeNames=["All"]
    )["Messages"]
    kept = {m["Attributes"]["MessageGroupId"]: m for m in got}
    assert set(kept) == {"12", "13"}
    assert "MessageGroupId '12' is not the sensor id 11" in kept["12"]["MessageAttributes"]["error"]["StringValue"]
    assert "SequenceNumber" in kept["13"]["MessageAttributes"]["error"]["StringValue"]
    assert kept["12"]["Body"] == stray.body
    assert kept["12"]["Attributes"]["MessageDeduplicationId"] == stray.message_id


def test_a_rejected_message_delivered_again_is_kept_once(handler: Any, fifo_dlq: DeadLetters) -> None:
    poison = Sequencer().message(14)
    poison.body = json.dumps({"sensor_id": 14, "count": 0})

    assert listed(handler, [poison]) == []
    assert listed(handler, [poison]) == []  # redelivered: the same deduplication id

    assert [d.source_message_id for d in fifo_dlq.drain()] == [poison.message_id]


@pytest.mark.parametrize(("number", "ok"), [(2**128 - 1, True), (2**128, False)])
def test_a_sequence_number_has_up_to_128_bits(
    handler: Any, fifo_dlq: DeadLetters, ddb: Any, tables: Tables, number: int, ok: bool
) -> None:
    message = Sequencer().message(15)
    message.sequence_number = str(number)

    assert listed(handler, [message]) == []

    assert day_counts(ddb, tables.table) == ({(15, DAY): 1} if ok else {})
    assert [bool(d.error and "128 bits" in d.error) for d in fifo_dlq.drain()] == ([] if ok else [True])


def test_a_day_counted_by_the_ledger_or_from_another_queue_takes_the_fifo_count(
    handler: Any, ddb: Any, tables: Tables
) -> None:
    # a day item written before the switch to FIFO (no sequence), and one from an older FIFO
    # queue whose numbers are higher than the new queue's
    ddb.put_item(TableName=tables.table, Item=schema.day_item(16, DAY, 10))
    old = schema.day_item(17, DAY, 20)
    old[schema.applied_sequence_name("arn:aws:sqs:us-east-1:000000000000:Old.fifo")] = {
        "S": schema.sequence_text(10**30)
    }
    ddb.put_item(TableName=tables.table, Item=old)
    seq = Sequencer()

    assert listed(handler, [seq.message(16, count=1), seq.message(17, count=2)]) == []

    assert day_counts(ddb, tables.table) == {(16, DAY): 11, (17, DAY): 22}


OLD_QUEUE = "arn:aws:sqs:us-east-1:000000000000:SensorDigest-IngestQueue-OLD.fifo"
NEW_QUEUE = "arn:aws:sqs:us-east-1:000000000000:SensorDigest-IngestQueue-NEW.fifo"


def deliver_from(handler: Any, queue_arn: str, batch: list[QueuedMessage]) -> list[str]:
    return [f["itemIdentifier"] for f in handler(sqs_event(batch, queue_arn), FakeContext())["batchItemFailures"]]


def test_while_a_replaced_queue_and_its_successor_both_deliver_every_message_counts_once(
    handler: Any, ddb: Any, tables: Tables
) -> None:
    # CloudFormation replaces the FIFO queue: for a while both deliver. The old queue's last batch
    # committed but its delete was lost; the new queue then writes the same day; the old batch
    # comes back. Each queue's numbers are compared only with that queue's own.
    old, new = Sequencer(start=10**25), Sequencer(start=5)
    old_batch = [old.message(30, count=1) for _ in range(10)]
    assert deliver_from(handler, OLD_QUEUE, old_batch) == []
    assert deliver_from(handler, NEW_QUEUE, [new.message(30, count=1)]) == []

    assert deliver_from(handler, OLD_QUEUE, old_batch) == []  # the late redelivery
    assert deliver_from(handler, OLD_QUEUE, old_batch[7:]) == []  # and a listed tail of it

    assert day_counts(ddb, tables.table) == {(30, DAY): 11}
    later_old, later_new = old.message(30, count=2), new.message(30, count=3)  # both still deliver new reports
    assert deliver_from(handler, OLD_QUEUE, [later_old]) == []
    assert deliver_from(handler, NEW_QUEUE, [later_new]) == []
    assert deliver_from(handler, NEW_QUEUE, [later_new]) == []
    assert day_counts(ddb, tables.table) == {(30, DAY): 16}
    [item] = [i for i in scan_all(ddb, tables.table) if i[schema.SENSOR_ID]["N"] == "30"]
    assert schema.applied_sequence_of_item(item, OLD_QUEUE) == int(later_old.sequence_number or 0)
    assert schema.applied_sequence_of_item(item, NEW_QUEUE) == int(later_new.sequence_number or 0)


def test_the_single_pair_of_the_first_release_migrated_still_holds_back_what_it_applied(
    handler: Any, ddb: Any, tables: Tables
) -> None:
    # a day item written before the per-queue numbers: AppliedSequence and SequenceSource, migrated
    # before the upgrade (sensor-digest migrate sequences)
    seq = Sequencer(start=100)
    applied = [seq.message(31, count=1) for _ in range(3)]
    item = schema.day_item(31, DAY, 3)
    item[schema.APPLIED_SEQUENCE] = {"S": schema.sequence_text(int(applied[-1].sequence_number or 0))}
    item[schema.SEQUENCE_SOURCE] = {"S": OLD_QUEUE}
    ddb.put_item(TableName=tables.table, Item=item)
    assert migrate_sequences(ddb, tables.table).raised == 1
    fresh = seq.message(31, count=5)

    assert deliver_from(handler, OLD_QUEUE, [*applied, fresh]) == []  # redelivered after the upgrade
    assert deliver_from(handler, OLD_QUEUE, [*applied, fresh]) == []
    assert deliver_from(handler, NEW_QUEUE, [Sequencer(start=1).message(31, count=7)]) == []

    assert day_counts(ddb, tables.table) == {(31, DAY): 3 + 5 + 7}


def test_aws_documented_fifo_sample_event_is_read(handler: Any, fifo_dlq: DeadLetters) -> None:
    # The FIFO example event of https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html, as
    # published: its body is not a sensor report, so it is rejected into the FIFO DLQ, in its group.
    event = {
        "Records": [
            {
                "messageId": "11d6ee51-4cc7-4302-9e22-7cd8afdaadf5",
                "receiptHandle": "AQEBBX8nesZEXmkhsmZeyIE8iQAMig7qw...",
                "body": "Test message.",
                "attributes": {
                    "ApproximateReceiveCount": "1",
                    "SentTimestamp": "1573251510774",
                    "SequenceNumber": "18849496460467696128",
                    "MessageGroupId": "1",
                    "SenderId": "AIDAIO23YVJENQZJOL4VO",
                    "MessageDeduplicationId": "1",
                    "ApproximateFirstReceiveTimestamp": "1573251510774",
                },
                "messageAttributes": {},
                "md5OfBody": "e4e68fb7bd0e697a0ae8f1bb342846b3",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-2:123456789012:fifo.fifo",
                "awsRegion": "us-east-2",
            }
        ]
    }

    assert handler(event, FakeContext()) == {"batchItemFailures": []}

    [kept] = fifo_dlq.drain()
    assert kept.body == "Test message."
    assert kept.error is not None and "not valid JSON" in kept.error


SEQUENCE_TEXT = st.one_of(
    st.none(),
    st.text(max_size=45),
    st.from_regex(r"[0-9]{1,45}", fullmatch=True),
    st.integers(2**128 - 2, 2**128 + 1).map(str),
    st.sampled_from(["-1", " 12", "12 ", "1e5", "\u0661\u0662", "0x10", ""]),
)
GROUP_TEXT = st.one_of(st.none(), st.just("21"), st.sampled_from(["021", "21 ", "", "x", "٢١"]), st.text(max_size=20))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(attributes=st.lists(st.tuples(SEQUENCE_TEXT, GROUP_TEXT), min_size=1, max_size=8))
def test_hostile_fifo_attributes_end_counted_or_kept_with_a_reason_never_listed(
    handler: Any, fifo_dlq: DeadLetters, attributes: list[tuple[str | None, str | None]]
) -> None:
    # hypothesis writes the record attributes a broken or hostile source could send
    batch, expected_rejects = [], set()
    for number, group in attributes:
        message = Sequencer().message(21)
        message.sequence_number, message.group_id = number, group
        batch.append(message)
        valid_number = number is not None and number.isascii() and number.isdigit() and int(number) < 2**128
        if not valid_number or group != "21":
            expected_rejects.add(message.message_id)

    assert listed(handler, batch) == []

    kept = fifo_dlq.drain()
    assert {d.source_message_id for d in kept} == expected_rejects
    assert all(d.error for d in kept)


def test_two_groups_whose_messages_carry_the_same_sequence_number_are_two_reports(
    handler: Any, ddb: Any, tables: Tables
) -> None:
    # SQS promises numbers that grow within a group, not numbers that differ across groups
    a = QueuedMessage(body=json.dumps({"sensor_id": 40, "timestamp": f"{DAY}T01:00:00Z"}), group_id="40")
    b = QueuedMessage(body=json.dumps({"sensor_id": 41, "timestamp": f"{DAY}T01:00:00Z"}), group_id="41")
    a.sequence_number = b.sequence_number = "18889000000000000100"

    assert listed(handler, [a, b]) == []
    assert day_counts(ddb, tables.table) == {(40, DAY): 1, (41, DAY): 1}


def redriven(message: QueuedMessage, sequence: Sequencer) -> QueuedMessage:
    """``message`` as `dlq redrive` sends it back: a new message id and sequence number, its origin
    (id and send time) stamped as attributes."""
    return QueuedMessage(
        body=message.body,
        group_id=message.group_id,
        deduplication_id=f"redrive-{message.message_id}",
        sequence_number=str(int(sequence.message(0).sequence_number or 0)),
        attributes={
            SOURCE_ID_ATTRIBUTE: {"DataType": "String", "StringValue": message.message_id},
            SOURCE_SENT_ATTRIBUTE: {"DataType": "Number", "StringValue": str(message.sent_timestamp_ms)},
        },
    )


def test_a_counted_message_listed_behind_a_failed_one_counts_once_after_a_redrive_from_the_dead_letter_queue(
    handler: Any, faults: WriteFaults, ddb: Any, tables: Tables
) -> None:
    # Given sensor 50's first message on day B failing every time, its later message on day A counted
    seq = Sequencer()
    first, later, fresh = seq.message(50, NEXT_DAY, 2), seq.message(50, DAY, 3), seq.message(50, DAY, 7)
    faults.sensor, faults.day, faults.times = 50, NEXT_DAY, 5

    # When the batch is delivered maxReceiveCount times: `later` is counted the first time and listed
    # (behind `first`) every time, then SQS moves both to the dead-letter queue
    for _ in range(5):
        assert listed(handler, [first, later]) == [first, later]
    assert day_counts(ddb, tables.table) == {(50, DAY): 3}
    markers = {i["pk"]["S"] for i in scan_all(ddb, tables.ledger)}
    assert markers == {f"FIFO#50#{later.message_id}"}  # the counted tail is remembered, the failed one not

    # Then an operator redrives both (new ids and sequence numbers), with a fresh report after them
    assert listed(handler, [redriven(first, seq), redriven(later, seq), fresh]) == []
    assert day_counts(ddb, tables.table) == {(50, DAY): 3 + 7, (50, NEXT_DAY): 2}


def test_a_redriven_message_that_never_counted_counts_and_leaves_no_marker(
    handler: Any, ddb: Any, tables: Tables
) -> None:
    seq = Sequencer()
    assert listed(handler, [seq.message(51, DAY, 1)]) == []

    never_counted = seq.message(51, DAY, 4)  # rejected, or failed every time, before any write
    assert listed(handler, [redriven(never_counted, seq)]) == []
    assert day_counts(ddb, tables.table) == {(51, DAY): 5}
    assert scan_all(ddb, tables.ledger) == []


def test_a_counted_message_whose_deletes_are_lost_until_sqs_moves_it_counts_once_after_a_redrive(
    handler: Any, ddb: Any, tables: Tables
) -> None:
    # Given a message counted at its first receive, then received again and again (every delete
    # lost) until SQS moves it to the dead-letter queue after maxReceiveCount (5) receives
    seq = Sequencer()
    message = seq.message(52, DAY, 6)
    for _ in range(5):
        message.receive_count += 1
        assert listed(handler, [message]) == []  # counted, then found applied: each time "done"
    assert day_counts(ddb, tables.table) == {(52, DAY): 6}
    # the receives that found it counted again left its marker (the second on)
    assert {i["pk"]["S"] for i in scan_all(ddb, tables.ledger)} == {f"FIFO#52#{message.message_id}"}

    # When an operator redrives it
    assert listed(handler, [redriven(message, seq)]) == []

    # Then it is found counted
    assert day_counts(ddb, tables.table) == {(52, DAY): 6}


def test_a_first_receive_that_ends_well_writes_no_marker_and_a_second_one_does(
    handler: Any, ddb: Any, tables: Tables
) -> None:
    seq = Sequencer()
    batch = [seq.message(53, DAY), seq.message(53, DAY), seq.message(54, NEXT_DAY)]
    for message in batch:
        message.receive_count = 1

    assert listed(handler, batch) == []
    assert scan_all(ddb, tables.ledger) == []  # nothing failed: nothing to remember

    for message in batch:
        message.receive_count = 2
    assert listed(handler, batch) == []  # a lost delete: found applied, and it may be lost again
    assert {i["pk"]["S"] for i in scan_all(ddb, tables.ledger)} == {
        f"FIFO#{json.loads(m.body)['sensor_id']}#{m.message_id}" for m in batch
    }
    assert day_counts(ddb, tables.table) == {(53, DAY): 2, (54, NEXT_DAY): 1}


def test_a_redriven_message_waits_when_its_marker_cannot_be_looked_up(
    tables: Tables, fifo_dlq: DeadLetters, session: LocalSession, ddb: Any
) -> None:
    # Given a counted message whose marker exists, redriven while reads of the ledger are throttled
    def ledger_reads_throttled(operation: str, kwargs: dict[str, Any]) -> str | None:
        return "throttle" if operation == "batch_get_item" and tables.ledger in kwargs["RequestItems"] else None

    plain = fifo_handler(tables, session, fifo_dlq.url)
    throttled = fifo_handler(tables, session, fifo_dlq.url, ledger_reads_throttled, reads=True)
    seq = Sequencer()
    message = seq.message(55, DAY, 9)
    message.receive_count = 2
    assert listed(plain, [message]) == []  # counted, found again: its marker written
    copy, fresh = redriven(message, seq), seq.message(56, DAY, 1)

    # When the copy arrives: it is listed, not counted (nothing else could tell it was counted);
    # a message of another sensor in the batch, never redriven, is counted all the same
    assert listed(throttled, [copy, fresh]) == [copy]
    assert day_counts(ddb, tables.table) == {(55, DAY): 9, (56, DAY): 1}

    # Then, the ledger answering again, the copy is found counted
    assert listed(plain, [copy]) == []
    assert day_counts(ddb, tables.table) == {(55, DAY): 9, (56, DAY): 1}


def test_a_failed_marker_lookup_holds_back_every_message_of_the_redriven_ones_sensor(
    tables: Tables, fifo_dlq: DeadLetters, session: LocalSession, ddb: Any
) -> None:
    # Given a never-counted dead letter X of sensor 57 redriven, and a fresh report Y of the same
    # sensor and day after it in the batch, while the ledger's lookup is throttled once
    throttles = [1]

    def throttled_once(operation: str, kwargs: dict[str, Any]) -> str | None:
        if operation == "batch_get_item" and tables.ledger in kwargs["RequestItems"] and throttles:
            return "throttle" if throttles.pop() else None
        return None

    handler = fifo_handler(tables, session, fifo_dlq.url, throttled_once, reads=True)
    seq = Sequencer()
    x = redriven(seq.message(57, DAY, 2), seq)
    y = seq.message(57, DAY, 3)

    # When the batch comes, and again
    assert listed(handler, [x, y]) == [x, y]  # Y is not written ahead of X
    assert day_counts(ddb, tables.table) == {}
    for message in (x, y):
        message.receive_count += 1
    assert listed(handler, [x, y]) == []

    # Then both count, once
    assert day_counts(ddb, tables.table) == {(57, DAY): 5}


def test_a_counted_message_found_again_is_remembered_even_when_the_batch_is_cut_short(
    tables: Tables, fifo_dlq: DeadLetters, session: LocalSession, ddb: Any
) -> None:
    # Given sensor 58's A (day 1) whose write hangs on every receive, and B (day 2) counted at its
    # first receive: on the second, B is found counted while A still hangs and the answer is cut short
    release = threading.Event()

    def hang_day_one(operation: str, kwargs: dict[str, Any]) -> str | None:
        key = kwargs.get("Key") or kwargs.get("Item") or {}
        if key.get("Date", {}).get("S") == DAY:
            release.wait()
        return None

    handler = fifo_handler(tables, session, fifo_dlq.url, hang_day_one)
    seq = Sequencer()
    a, b = seq.message(58, DAY, 1), seq.message(58, NEXT_DAY, 4)
    try:
        for receive in (1, 2):
            a.receive_count = b.receive_count = receive
            failed = handler(sqs_event([a, b]), FakeContext(timeout_ms=3_500))["batchItemFailures"]
            assert [f["itemIdentifier"] for f in failed] == [a.message_id, b.message_id]
        # the marker was written by B's own group, not at the end of the batch (which never came)
        deadline = time.monotonic() + 60
        while f"FIFO#58#{b.message_id}" not in {i["pk"]["S"] for i in scan_all(ddb, tables.ledger)}:
            assert time.monotonic() < deadline, "B's marker was never written"
            time.sleep(0.1)
    finally:
        release.set()
    # the hung writes end (on Lambda, in a later invocation of the container, long before SQS moves
    # the messages away after their fifth receive): A counted once, and found counted the second time
    deadline = time.monotonic() + 60
    while f"FIFO#58#{a.message_id}" not in {i["pk"]["S"] for i in scan_all(ddb, tables.ledger)}:
        assert time.monotonic() < deadline, "A's late writes never ended"
        time.sleep(0.1)

    # Then after SQS moves both away and an operator redrives them, B counts once and A once
    assert listed(handler, [redriven(a, seq), redriven(b, seq)]) == []
    assert day_counts(ddb, tables.table) == {(58, DAY): 1, (58, NEXT_DAY): 4}
