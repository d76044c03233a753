"""The handler answers before Lambda's timeout whatever a call does (a network that stops answering):
the batch runs in a thread of its own and, ``ANSWER_RESERVE_SECONDS`` before the end, the handler
answers for what has ended and lists the rest. No engine, no network: the calls that hang are fakes
that wait on an event the test sets only once the handler has answered, so no test here depends on
how fast this machine is (a watchdog that failed to answer would hang until pytest's timeout)."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sensor_digest.counting import DayCounter, Group, GroupOutcome
from sensor_digest.ingest import FifoGroupOrdering, IngestService, Rejection
from sensor_digest.ingest.service import DEADLINE_MARGIN_SECONDS


class HangingCounter(DayCounter):
    """Counts every group at once, but the groups of ``hang`` wait until ``released``."""

    def __init__(self, hang: set[int], released: threading.Event) -> None:
        super().__init__(max_workers=4)
        self.hang = hang
        self.released = released

    def identity(self, message: Any) -> Any:
        return message.ledger_key

    def count_group(self, group: Group) -> GroupOutcome:
        if group.sensor_id in self.hang:
            self.released.wait()
        return GroupOutcome(counted=list(group.messages), requests=1)


class Crashing(DayCounter):
    def identity(self, message: Any) -> Any:
        return message.ledger_key

    def count_group(self, group: Group) -> GroupOutcome:
        raise SystemExit("the runtime killed the invocation")  # not an Exception: never caught per group


class HangingSink:
    def __init__(self, released: threading.Event) -> None:
        self.released = released

    def send(self, rejections: Sequence[Rejection], deadline: float | None = None) -> set[str]:
        self.released.wait()
        return {r.message.message_id for r in rejections}


class KeepingSink:
    def send(self, rejections: Sequence[Rejection], deadline: float | None = None) -> set[str]:
        return {r.message.message_id for r in rejections}


def record(message_id: str, body: Any, group: str | None = None, sequence: int | None = None) -> dict[str, Any]:
    attributes: dict[str, Any] = {"SentTimestamp": "1714564800000"}
    if group is not None:
        attributes |= {"MessageGroupId": group, "SequenceNumber": str(sequence)}
    text = body if isinstance(body, str) else json.dumps(body)
    return {"messageId": message_id, "body": text, "attributes": attributes, "eventSourceARN": "arn:q.fifo"}


@pytest.fixture
def released() -> Any:
    event = threading.Event()
    yield event
    event.set()  # let the threads left behind finish


# writes may start for three seconds (room for a loaded machine to start the groups that do not hang);
# the answer is due two seconds after that (ANSWER_RESERVE_SECONDS)
REMAINING_MS = int((DEADLINE_MARGIN_SECONDS + 3) * 1000)


@pytest.mark.timeout(60)
def test_a_group_whose_write_hangs_is_listed_and_the_rest_of_the_batch_stands(released: threading.Event) -> None:
    service = IngestService(
        counter=HangingCounter({2}, released), dead_letters=KeepingSink(), default_zone=ZoneInfo("UTC")
    )
    event = {
        "Records": [
            record("a", {"sensor_id": 1}),
            record("b", {"sensor_id": 2}),
            record("c", {"sensor_id": 3}),
            record("bad", {"sensor_id": "x"}),
        ]
    }

    report = service.handle_event(event, remaining_ms=REMAINING_MS)

    assert report.response() == {"batchItemFailures": [{"itemIdentifier": "b"}]}
    assert (report.counted, report.rejected) == (2, 1)


@pytest.mark.timeout(60)
def test_a_dead_letter_send_that_hangs_lists_the_whole_batch(released: threading.Event) -> None:
    # the writes come after the dead letters: nothing has ended when the answer is due
    service = IngestService(
        counter=HangingCounter(set(), released), dead_letters=HangingSink(released), default_zone=ZoneInfo("UTC")
    )
    event = {"Records": [record("a", {"sensor_id": 1}), record("bad", "{")]}

    report = service.handle_event(event, remaining_ms=REMAINING_MS)

    assert report.response() == {"batchItemFailures": [{"itemIdentifier": "a"}, {"itemIdentifier": "bad"}]}
    assert (report.counted, report.rejected) == (0, 0)


@pytest.mark.timeout(60)
def test_on_fifo_a_hanging_group_lists_the_rest_of_its_group_even_what_ended(released: threading.Event) -> None:
    # Given sensor 1's reports on two days (two writes), the first day's write hanging
    service = IngestService(
        counter=HangingCounter({1}, released),
        dead_letters=KeepingSink(),
        default_zone=ZoneInfo("UTC"),
        ordering=FifoGroupOrdering(),
    )
    event = {
        "Records": [
            record("a1", {"sensor_id": 1, "timestamp": "2024-05-01T10:00:00Z"}, group="1", sequence=1),
            record("b1", {"sensor_id": 2}, group="2", sequence=2),
            record("a2", {"sensor_id": 1, "timestamp": "2024-05-02T10:00:00Z"}, group="1", sequence=3),
        ]
    }

    report = service.handle_event(event, remaining_ms=REMAINING_MS)

    assert report.response() == {"batchItemFailures": [{"itemIdentifier": "a1"}, {"itemIdentifier": "a2"}]}


@pytest.mark.timeout(60)
def test_a_crash_of_the_batch_is_the_invocations_own_failure_not_an_answer() -> None:
    service = IngestService(counter=Crashing(), dead_letters=KeepingSink(), default_zone=ZoneInfo("UTC"))

    with pytest.raises(SystemExit, match="killed"):
        service.handle_event({"Records": [record("a", {"sensor_id": 1})]}, remaining_ms=60_000)


def test_with_time_enough_the_answer_is_the_whole_report() -> None:
    released = threading.Event()
    released.set()
    service = IngestService(
        counter=HangingCounter({1}, released), dead_letters=KeepingSink(), default_zone=ZoneInfo("UTC")
    )

    report = service.handle_event({"Records": [record("a", {"sensor_id": 1})]}, remaining_ms=60_000)

    assert (report.counted, report.response()) == (1, {"batchItemFailures": []})


class HangingAlarms:
    """An alarm step that waits until ``released`` (an alarm read that stops answering)."""

    def __init__(self, released: threading.Event) -> None:
        self.released = released

    def evaluate(self, messages: Sequence[Any], expired: Any = None) -> Any:
        self.released.wait()
        raise AssertionError("evaluated after the answer")


@pytest.mark.timeout(60)
def test_reports_counted_but_not_yet_evaluated_against_the_alarms_are_listed(released: threading.Event) -> None:
    # Given: every report counted, the alarm step hanging
    service = IngestService(
        counter=HangingCounter(set(), released),
        dead_letters=KeepingSink(),
        default_zone=ZoneInfo("UTC"),
        alarms=HangingAlarms(released),  # type: ignore[arg-type]
    )
    event = {"Records": [record("a", {"sensor_id": 1}), record("bad", {"sensor_id": "x"})]}

    report = service.handle_event(event, remaining_ms=REMAINING_MS)

    # Then: the counted one comes back (found counted, then evaluated); the rejected one stays in the DLQ
    assert report.response() == {"batchItemFailures": [{"itemIdentifier": "a"}]}
    assert (report.counted, report.rejected) == (1, 1)
