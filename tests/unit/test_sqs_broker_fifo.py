"""The in-process SQS broker's FIFO queues, through a real boto3 client (no network)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from sensor_digest_tools.aws import sqs_queues
from sensor_digest_tools.aws.sqs_broker import LocalSqsBroker
from sensor_digest_tools.ops.dlq import list_dead_letters, redrive
from tests.support.sqs import receive
from tests.unit.conftest import Ticks


@pytest.fixture
def fifo(broker: LocalSqsBroker) -> tuple[str, str]:
    dlq = broker.create_queue("dlq.fifo", fifo=True)
    url = broker.create_queue("q.fifo", visibility_timeout=0.2, dead_letter_url=dlq, max_receive_count=2, fifo=True)
    return url, dlq


def send(sqs: Any, url: str, body: str, group: str, dedup: str | None = None) -> dict[str, Any]:
    response: dict[str, Any] = sqs.send_message(
        QueueUrl=url, MessageBody=body, MessageGroupId=group, MessageDeduplicationId=dedup or body
    )
    return response


def bodies(messages: list[dict[str, Any]]) -> list[str]:
    return [m["Body"] for m in messages]


def test_a_receive_takes_one_groups_run_in_order_before_the_next_group(sqs: Any, fifo: Any) -> None:
    url, _ = fifo
    for body, group in [("a1", "a"), ("b1", "b"), ("a2", "a"), ("b2", "b"), ("a3", "a")]:
        send(sqs, url, body, group)

    assert bodies(receive(sqs, url, 4)) == ["a1", "a2", "a3", "b1"]
    assert receive(sqs, url) == []  # both groups have a message in flight: b2 waits behind b1


def test_a_message_in_flight_holds_back_its_group_until_deleted_or_visible_again(
    sqs: Any, fifo: Any, ticks: Ticks
) -> None:
    url, _ = fifo
    for body in ("a1", "a2"):
        send(sqs, url, body, "a")
    [first] = receive(sqs, url, 1)

    assert receive(sqs, url) == []
    ticks.advance(0.25)  # not deleted (a listed failure): it comes back first, with its group behind it
    again = receive(sqs, url)
    assert bodies(again) == ["a1", "a2"]
    assert again[0]["Attributes"]["ApproximateReceiveCount"] == "2"
    assert again[0]["Attributes"]["SequenceNumber"] == first["Attributes"]["SequenceNumber"]


def test_sequence_numbers_grow_and_records_carry_group_and_deduplication_id(sqs: Any, fifo: Any) -> None:
    url, _ = fifo
    numbers = [int(send(sqs, url, f"m{i}", "g")["SequenceNumber"]) for i in range(3)]

    got = receive(sqs, url)

    assert numbers == sorted(numbers) and len(set(numbers)) == 3
    assert [int(m["Attributes"]["SequenceNumber"]) for m in got] == numbers
    assert {(m["Attributes"]["MessageGroupId"], m["Attributes"]["MessageDeduplicationId"]) for m in got} == {
        ("g", "m0"),
        ("g", "m1"),
        ("g", "m2"),
    }


def test_a_deduplication_id_seen_in_its_group_within_the_window_is_not_queued_again(
    sqs: Any, fifo: Any, broker: LocalSqsBroker, ticks: Ticks
) -> None:
    url, _ = fifo
    first = send(sqs, url, "x", "g", "same")
    retry = send(sqs, url, "x (retried)", "g", "same")
    other_group = send(sqs, url, "x", "h", "same")  # high-throughput mode: deduplication per group

    assert retry["MessageId"] == first["MessageId"]
    assert other_group["MessageId"] != first["MessageId"]
    assert sorted(bodies(receive(sqs, url))) == ["x", "x"]

    url2 = broker.create_queue("fresh.fifo", fifo=True)
    send(sqs, url2, "y", "g", "again")
    ticks.advance(sqs_queues.DEDUPLICATION_WINDOW_SECONDS - 1)
    send(sqs, url2, "y", "g", "again")  # within the window: dropped
    ticks.advance(2)
    send(sqs, url2, "y", "g", "again")  # past the window: a new message
    assert bodies(receive(sqs, url2)) == ["y", "y"]


def test_a_fifo_send_without_group_or_deduplication_id_is_refused(sqs: Any, fifo: Any) -> None:
    url, _ = fifo
    with pytest.raises(ClientError, match="MessageGroupId"):
        sqs.send_message(QueueUrl=url, MessageBody="x", MessageDeduplicationId="d")
    with pytest.raises(ClientError, match="MessageDeduplicationId"):
        sqs.send_message(QueueUrl=url, MessageBody="x", MessageGroupId="g")
    batch = sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "0", "MessageBody": "x"}])
    assert [f["Code"] for f in batch["Failed"]] == ["MissingParameter"]


def test_past_max_receive_count_a_message_moves_to_the_fifo_dead_letter_queue_with_its_group(
    sqs: Any, fifo: Any, ticks: Ticks
) -> None:
    url, dlq = fifo
    poison = send(sqs, url, "poison", "g", "d1")
    send(sqs, url, "next", "g", "d2")
    for _ in range(2):
        assert bodies(receive(sqs, url, 1)) == ["poison"]
        ticks.advance(0.25)

    assert bodies(receive(sqs, url)) == ["next"]  # the group moves on once poison has left
    [moved] = receive(sqs, dlq)
    # its group goes along; its deduplication id becomes its message id, as SQS documents
    assert (moved["Body"], moved["Attributes"]["MessageGroupId"], moved["Attributes"]["MessageDeduplicationId"]) == (
        "poison",
        "g",
        poison["MessageId"],
    )


def test_queue_types_must_match_their_names_and_their_dead_letter_queue(broker: LocalSqsBroker) -> None:
    standard_dlq = broker.create_queue("plain-dlq")
    with pytest.raises(ValueError, match=r"ends in \.fifo"):
        broker.create_queue("q", fifo=True)
    with pytest.raises(ValueError, match="one type"):
        broker.create_queue("q.fifo", fifo=True, dead_letter_url=standard_dlq)


def test_a_fifo_dead_letter_queue_is_listed_whole_and_redriven_into_its_groups(sqs: Any, fifo: Any) -> None:
    url, dlq = fifo
    for i, group in enumerate(["7", "7", "8"]):
        send(sqs, dlq, f'{{"sensor_id": {group}, "n": {i}}}', group, f"d{i}")

    first, second = list_dead_letters(sqs, dlq), list_dead_letters(sqs, dlq)  # listing leaves them in place
    moved = redrive(sqs, dlq, url)
    back = receive(sqs, url)

    assert len(first) == len(second) == 3
    assert (moved.moved, moved.left) == (3, [])
    assert sorted((m["Attributes"]["MessageGroupId"], m["Body"]) for m in back) == sorted(
        (g, f'{{"sensor_id": {g}, "n": {i}}}') for i, g in enumerate(["7", "7", "8"])
    )


def test_a_duplicate_of_a_deleted_message_is_still_dropped_and_answered_with_the_first_ones_number(
    sqs: Any, fifo: Any
) -> None:
    url, _ = fifo
    first = send(sqs, url, "x", "g", "same")
    [got] = receive(sqs, url)
    sqs.delete_message(QueueUrl=url, ReceiptHandle=got["ReceiptHandle"])

    retry = send(sqs, url, "x", "g", "same")

    assert (retry["MessageId"], retry["SequenceNumber"]) == (first["MessageId"], first["SequenceNumber"])
    assert receive(sqs, url) == []


def test_a_group_stays_held_while_any_of_its_messages_is_in_flight(sqs: Any, fifo: Any) -> None:
    url, _ = fifo
    for body in ("b0", "b1", "b2"):
        send(sqs, url, body, "b")
    send(sqs, url, "c0", "c")
    first, *_ = received = receive(sqs, url, 3)
    assert bodies(received) == ["b0", "b1", "b2"]

    # b0 made visible again while b1 and b2 are still in flight: the group stays held
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=first["ReceiptHandle"], VisibilityTimeout=0)
    assert bodies(receive(sqs, url, 10)) == ["c0"]
