"""One ``dlq redrive`` pass: each dead letter moves at most once (by its origin), and no more move
than the dead-letter queue held as the pass began, however many arrive while it runs.

Engine: the in-process SQS broker behind a real boto3 client (no network).
"""

from __future__ import annotations

import json
from typing import Any

from botocore.exceptions import ClientError

from sensor_digest.dead_letter_format import Origin, dead_letter_attributes
from sensor_digest_tools.aws.sqs_broker import LocalSqsBroker
from sensor_digest_tools.ops.dlq import DeadLetter, _release, list_dead_letters, redrive


class NewPoisonOnEverySend:
    """The redrive's client; each ``SendMessageBatch`` it makes is followed by a new dead letter of
    another report (a producer's poison rejected meanwhile)."""

    def __init__(self, inner: Any, dlq: str) -> None:
        self._inner, self._dlq, self.added = inner, dlq, 0

    def send_message_batch(self, **kwargs: Any) -> Any:
        answer = self._inner.send_message_batch(**kwargs)
        self.added += 1
        self._inner.send_message(
            QueueUrl=self._dlq,
            MessageBody=json.dumps({"sensor_id": f"new-{self.added}"}),
            MessageAttributes=dead_letter_attributes("bad", Origin(f"new-{self.added}", "1714557600000")),
        )
        return answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def letter(sqs: Any, dlq: str, origin: str) -> None:
    sqs.send_message(
        QueueUrl=dlq,
        MessageBody=json.dumps({"sensor_id": origin}),
        MessageAttributes=dead_letter_attributes("bad", Origin(origin, "1714557600000")),
    )


def test_a_pass_moves_no_more_than_the_dead_letter_queue_held_as_it_began(sqs: Any, broker: LocalSqsBroker) -> None:
    # Given 25 dead letters, and a new one arriving after every batch the redrive sends
    dlq, queue = broker.create_queue("dlq"), broker.create_queue("q")
    for n in range(25):
        letter(sqs, dlq, f"old-{n}")
    client = NewPoisonOnEverySend(sqs, dlq)

    # When a pass redrives them
    report = redrive(client, dlq, queue, limit=100)

    # Then the 25 moved, and those that arrived meanwhile wait for the next pass
    assert report.moved == 25
    assert broker.counts(queue)[0] == 25
    assert client.added > 0
    assert len(list_dead_letters(sqs, dlq)) == client.added


def test_a_second_dead_letter_of_an_origin_the_pass_moved_stays(sqs: Any, broker: LocalSqsBroker) -> None:
    # Given two dead letters of one origin (a report rejected twice) and one of another
    dlq, queue = broker.create_queue("dlq"), broker.create_queue("q")
    for origin in ("twice", "twice", "once"):
        letter(sqs, dlq, origin)

    # When a pass redrives them
    report = redrive(sqs, dlq, queue, limit=100)

    # Then each origin moved once; the second copy stayed, counted as such
    assert (report.moved, report.came_back) == (2, 1)
    assert [d.source_message_id for d in list_dead_letters(sqs, dlq)] == ["twice"]


class RefusesOldHandles:
    """A client whose ``ChangeMessageVisibility`` refuses the handle, as SQS does once a long pass
    outlived the letter's hold and somebody received it again."""

    def __init__(self) -> None:
        self.tried = 0

    def change_message_visibility(self, **_: Any) -> None:
        self.tried += 1
        raise ClientError(
            {"Error": {"Code": "ReceiptHandleIsInvalid", "Message": "expired"}}, "ChangeMessageVisibility"
        )


def test_releasing_letters_whose_hold_ran_out_is_best_effort() -> None:
    # Given two letters held back by a pass whose receipt handles SQS no longer takes
    sqs = RefusesOldHandles()
    held = [DeadLetter(message_id=m, body="{}", error="bad", source_message_id=m, receipt_handle="old") for m in "ab"]

    # When the pass releases them, then it goes on past each refusal (they are visible anyway)
    _release(sqs, "https://dlq", held)
    assert sqs.tried == 2
