"""The in-process SQS broker's semantics, through a real boto3 client (no network)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from sensor_digest_tools.aws.sqs_broker import ENDPOINT, LocalSqsBroker
from tests.support.sqs import receive
from tests.unit.conftest import Ticks


@pytest.fixture
def queues(broker: LocalSqsBroker) -> tuple[str, str]:
    dlq = broker.create_queue("dlq")
    return broker.create_queue("q", visibility_timeout=0.2, dead_letter_url=dlq, max_receive_count=2), dlq


def test_a_message_is_invisible_while_in_flight_and_comes_back_after_the_timeout(
    sqs: Any, queues: Any, ticks: Ticks
) -> None:
    url, _ = queues
    sqs.send_message(QueueUrl=url, MessageBody="a")
    first = receive(sqs, url)

    hidden = receive(sqs, url)
    ticks.advance(0.25)
    again = receive(sqs, url)

    assert [m["Attributes"]["ApproximateReceiveCount"] for m in first + again] == ["1", "2"]
    assert hidden == []
    assert first[0]["MessageId"] == again[0]["MessageId"]
    assert first[0]["ReceiptHandle"] != again[0]["ReceiptHandle"]


def test_a_stale_receipt_handle_deletes_nothing_and_the_latest_one_deletes(sqs: Any, queues: Any, ticks: Ticks) -> None:
    url, _ = queues
    sqs.send_message(QueueUrl=url, MessageBody="a")
    stale = receive(sqs, url)[0]["ReceiptHandle"]
    ticks.advance(0.25)
    latest = receive(sqs, url)[0]["ReceiptHandle"]

    sqs.delete_message(QueueUrl=url, ReceiptHandle=stale)
    still_there = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=latest)
    gone = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]

    assert still_there["ApproximateNumberOfMessagesNotVisible"] == "1"
    assert (gone["ApproximateNumberOfMessages"], gone["ApproximateNumberOfMessagesNotVisible"]) == ("0", "0")


def test_past_max_receive_count_a_message_moves_to_the_dead_letter_queue(sqs: Any, queues: Any, ticks: Ticks) -> None:
    url, dlq = queues
    sent = sqs.send_message(
        QueueUrl=url, MessageBody="poison", MessageAttributes={"k": {"DataType": "String", "StringValue": "v"}}
    )["MessageId"]
    for _ in range(2):
        assert len(receive(sqs, url)) == 1
        ticks.advance(0.25)

    assert receive(sqs, url) == []  # the third receive moves it instead of delivering it
    moved = sqs.receive_message(QueueUrl=dlq, MessageAttributeNames=["All"])["Messages"]
    assert [(m["MessageId"], m["Body"]) for m in moved] == [(sent, "poison")]
    assert moved[0]["MessageAttributes"] == {"k": {"DataType": "String", "StringValue": "v"}}


def test_batches_send_and_delete_ten_at_a_time_in_order(sqs: Any, queues: Any) -> None:
    url, _ = queues
    entries = [{"Id": str(i), "MessageBody": f"m{i}"} for i in range(10)]
    assert len(sqs.send_message_batch(QueueUrl=url, Entries=entries)["Successful"]) == 10
    got = receive(sqs, url)
    sqs.delete_message_batch(
        QueueUrl=url, Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)]
    )
    assert [m["Body"] for m in got] == [f"m{i}" for i in range(10)]
    assert sqs.get_queue_attributes(QueueUrl=url)["Attributes"]["ApproximateNumberOfMessages"] == "0"


def test_an_unknown_queue_is_the_error_sqs_gives(sqs: Any) -> None:
    with pytest.raises(sqs.exceptions.ClientError, match="NonExistentQueue"):
        sqs.send_message(QueueUrl=f"{ENDPOINT}/000000000000/nope", MessageBody="x")


def test_a_message_past_the_maximum_size_counting_its_attributes_is_refused(sqs: Any, broker: LocalSqsBroker) -> None:
    url = broker.create_queue("small", max_message_bytes=1024)
    attribute = {"a": {"DataType": "String", "StringValue": "x"}}  # 1 + 6 + 1 = 8 bytes
    sqs.send_message(QueueUrl=url, MessageBody="é" * 508, MessageAttributes=attribute)  # 1,016 + 8 bytes
    with pytest.raises(sqs.exceptions.ClientError, match="InvalidParameterValue"):
        sqs.send_message(QueueUrl=url, MessageBody="é" * 508 + "x", MessageAttributes=attribute)
    result = sqs.send_message_batch(
        QueueUrl=url, Entries=[{"Id": "ok", "MessageBody": "x"}, {"Id": "big", "MessageBody": "x" * 1025}]
    )
    assert [e["Id"] for e in result["Successful"]] == ["ok"]
    assert [(e["Id"], e["Code"]) for e in result["Failed"]] == [("big", "InvalidParameterValue")]
    assert sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]["MaximumMessageSize"] == "1024"


def test_visibility_changes_only_for_a_message_in_flight_and_within_12_hours(
    sqs: Any, queues: Any, ticks: Ticks
) -> None:
    url, _ = queues
    sqs.send_message(QueueUrl=url, MessageBody="a")
    [message] = receive(sqs, url)
    with pytest.raises(ClientError, match="InvalidParameterValue"):
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=43_201)
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=10)
    ticks.advance(5)
    assert receive(sqs, url) == []  # held 10 s from the change, not 0.2 s from the receive

    ticks.advance(6)
    with pytest.raises(ClientError, match="MessageNotInflight"):
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=600)
    assert [m["MessageId"] for m in receive(sqs, url)] == [message["MessageId"]]  # still visible: not hidden again
