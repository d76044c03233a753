"""Where the ledger's writes spend their units: what is read before writing, what is written in
which transaction, and what a new day costs (DynamoDB Local, every test; the stream is DynamoDB
Local's).

The claims under test are the ones the cost section of the docs makes: first deliveries are not
looked up, redeliveries are looked up with strongly consistent reads and written apart (in
transactions of their own, per-message); a new day item is created whole, in one transaction with
the markers its reports need, so nothing leaves an empty one; and an empty one an earlier release
left is no day for any reader. The compact ledger's own costs are in ``test_ledger_compact.py``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any
from zoneinfo import ZoneInfo

from sensor_digest.config import LedgerMode
from sensor_digest.counting import LedgerCounter, RetryPolicy
from sensor_digest.ingest import InboundMessage, IngestService, Rejection
from sensor_digest.stream_filter import matches_filter
from sensor_digest_tools.aws.stream_reader import StreamReader
from sensor_digest_tools.lambda_runtime.events import FakeContext, stream_event
from tests.support.faults import FaultyClient
from tests.support.messages import body_of
from tests.support.tables import Tables, day_counts, scan_all, summaries

DAY = "2024-05-01"
PER_MESSAGE = LedgerMode.PER_MESSAGE


class Kept:
    def send(self, rejections: list[Rejection], deadline: float | None = None) -> set[str]:
        return {r.message.message_id for r in rejections}


@dataclass
class Recorder:
    """Delegates to ``inner``; keeps every ``BatchGetItem`` and ``TransactWriteItems`` request, and
    whether each transaction was cancelled. ``after_ledger_read`` runs after a ledger read."""

    inner: Any
    reads: list[dict[str, Any]] = field(default_factory=list)
    transactions: list[tuple[dict[str, Any], bool]] = field(default_factory=list)
    after_ledger_read: Any = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if name == "batch_get_item":

            def read(**kwargs: Any) -> Any:
                answer = target(**kwargs)
                with self.lock:
                    self.reads.append(kwargs)
                if self.after_ledger_read and any("Ledger" in t or "ledger" in t for t in kwargs["RequestItems"]):
                    self.after_ledger_read()
                return answer

            return read
        if name == "transact_write_items":

            def transact(**kwargs: Any) -> Any:
                try:
                    answer = target(**kwargs)
                except Exception:
                    with self.lock:
                        self.transactions.append((kwargs, True))
                    raise
                with self.lock:
                    self.transactions.append((kwargs, False))
                return answer

            return transact
        return target

    def ledger_reads(self, ledger: str) -> list[dict[str, Any]]:
        return [r["RequestItems"][ledger] for r in self.reads if ledger in r["RequestItems"]]

    @staticmethod
    def markers(request: dict[str, Any]) -> list[str]:
        return sorted(
            a["Put"]["Item"]["pk"]["S"] for a in request["TransactItems"] if "pk" in a.get("Put", {}).get("Item", {})
        )


def service_on(client: Any, tables: Tables, **options: Any) -> IngestService:
    counter = LedgerCounter(
        table_name=tables.table, ledger_table_name=tables.ledger, client=client, marker_ttl_seconds=3600, **options
    )
    return IngestService(counter=counter, dead_letters=Kept(), default_zone=ZoneInfo("UTC"))


def report(event_id: str, *, received: int = 1, sensor: int = 1, count: int = 1) -> InboundMessage:
    return InboundMessage(
        message_id=f"m-{event_id}-{received}",
        body=body_of(sensor, DAY, event_id=event_id, count=count),
        receive_count=received,
    )


def test_first_deliveries_are_not_looked_up_in_the_ledger(ddb: Any, tables: Tables) -> None:
    # Given a batch SQS hands out for the first time
    client = Recorder(ddb)

    result = service_on(client, tables).process([report("a"), report("b", sensor=2)])

    # Then the only read is of the day items; the markers' conditions are the guard
    assert result.counted == 2
    assert client.ledger_reads(tables.ledger) == []
    assert day_counts(ddb, tables.table) == {(1, DAY): 1, (2, DAY): 1}


def test_redeliveries_are_looked_up_with_strongly_consistent_reads(ddb: Any, tables: Tables) -> None:
    # Given a report counted once, then delivered again (ApproximateReceiveCount 2) with a new one
    client = Recorder(ddb)
    service = service_on(client, tables)
    service.process([report("a")])

    again = service.process([report("a", received=2), report("b")])

    # Then only the redelivery's marker is read, consistently, and it is dropped without a write
    reads = client.ledger_reads(tables.ledger)
    assert [sorted(k["pk"]["S"] for k in r["Keys"]) for r in reads] == [["MSG#1#a"]]
    assert reads[0]["ConsistentRead"] is True
    assert (again.counted, again.duplicates) == (1, 1)
    assert all(not cancelled for _, cancelled in client.transactions)
    assert day_counts(ddb, tables.table) == {(1, DAY): 2}


def test_first_deliveries_are_written_before_and_apart_from_the_redeliveries_of_their_day(
    ddb: Any, tables: Tables
) -> None:
    # Given first deliveries and a redelivery (never counted) of one sensor-day in one batch
    client = Recorder(ddb)

    result = service_on(client, tables, mode=PER_MESSAGE).process([report("r", received=3), report("a"), report("b")])

    # Then two transactions: the first deliveries', then the redelivery's
    assert result.counted == 3
    assert [Recorder.markers(t) for t, _ in client.transactions] == [["MSG#1#a", "MSG#1#b"], ["MSG#1#r"]]
    assert day_counts(ddb, tables.table) == {(1, DAY): 3}


def test_a_redelivery_counted_by_its_other_copy_meanwhile_cancels_only_its_own_transaction(
    ddb: Any, tables: Tables
) -> None:
    # Given a redelivery whose other copy (still in flight elsewhere) commits right after our lookup
    other_copy = service_on(ddb, tables, mode=PER_MESSAGE)
    client = Recorder(ddb)
    client.after_ledger_read = lambda: other_copy.process([report("r", received=2)])

    result = service_on(client, tables, mode=PER_MESSAGE).process([report("a"), report("b"), report("r", received=3)])

    # Then the first deliveries' transaction commits; the redelivery's alone is cancelled, and it
    # ends a duplicate: counted once in all
    assert [(Recorder.markers(t), cancelled) for t, cancelled in client.transactions] == [
        (["MSG#1#a", "MSG#1#b"], False),
        (["MSG#1#r"], True),
    ]
    assert (result.counted, result.duplicates, result.failed_ids) == (2, 1, [])
    assert day_counts(ddb, tables.table) == {(1, DAY): 3}


def test_a_producers_repeat_of_a_counted_report_is_caught_by_its_markers_condition(ddb: Any, tables: Tables) -> None:
    # Given a report counted, then sent again by its producer: a new SQS message, a first delivery
    service = service_on(ddb, tables)
    service.process([report("a", count=4)])
    repeat = replace(report("a", count=4), message_id="m-a-resent")

    result = service.process([repeat, report("b")])

    assert (result.counted, result.duplicates, result.failed_ids) == (1, 1, [])
    assert day_counts(ddb, tables.table) == {(1, DAY): 5}


def test_a_new_day_whose_transaction_never_commits_leaves_no_item(ddb: Any, tables: Tables) -> None:
    # Given a new day whose insert (the whole day item with its markers, one transaction) never commits
    always = FaultyClient(inner=ddb, rule=lambda op, kw: "conflict" if op == "transact_write_items" else None)
    result = service_on(always, tables, mode=PER_MESSAGE).process([report("a")])

    # Then its report waits for its redelivery, and the table holds nothing
    assert result.failed_ids == ["m-a-1"]
    assert scan_all(ddb, tables.table) == []

    # And its redelivery counts it
    again = service_on(ddb, tables, mode=PER_MESSAGE).process([report("a", received=2)])
    assert again.counted == 1
    assert day_counts(ddb, tables.table) == {(1, DAY): 1}


def test_an_empty_day_item_an_earlier_release_left_is_no_day_for_any_reader(
    ddb: Any, tables: Tables, engine_endpoint: str, summary_handler: Any
) -> None:
    # Given a day item created empty (an earlier release's insert, whose transaction never committed)
    ddb.put_item(TableName=tables.table, Item={"SensorId": {"N": "1"}, "Date": {"S": DAY}, "HourCounts": {"M": {}}})

    # Then no reader sees a day, and its stream record does not reach the summary
    records = StreamReader(engine_endpoint, tables.table).poll()
    assert [r["eventName"] for r in records] == ["INSERT"]
    assert not matches_filter(records[0])
    arn = "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/x"
    assert summary_handler(stream_event(records, arn), FakeContext()) == {"batchItemFailures": []}
    assert day_counts(ddb, tables.table) == {}
    assert summaries(ddb, tables.table) == {}

    # And the next report of that day fills it
    again = service_on(ddb, tables, mode=PER_MESSAGE).process([report("a")])
    assert again.counted == 1
    assert day_counts(ddb, tables.table) == {(1, DAY): 1}


def test_with_no_retries_allowed_a_contended_group_is_deferred_once_then_listed(ddb: Any, tables: Tables) -> None:
    # Given every transaction conflicting, time to spare, and a policy of no retries
    always = FaultyClient(inner=ddb, rule=lambda op, kw: "conflict" if op == "transact_write_items" else None)
    service = service_on(always, tables, mode=PER_MESSAGE, retry=RetryPolicy(attempts=0, sleep=lambda _: None))

    result = service.process([report("a"), report("b")], deadline=time.monotonic() + 30)

    # Then the group was tried twice (in its place, then at the end of the batch) and is redelivered
    assert (result.failed_ids, result.deferred, result.retries) == (["m-a-1", "m-b-1"], 1, 0)
    assert always.calls["transact_write_items"] == 2
