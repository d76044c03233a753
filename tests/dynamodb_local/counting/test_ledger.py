"""Ingest path on DynamoDB Local (every test here); the dead-letter queue is moto's SQS.

The service runs with the compact ledger unless a test names the per-message one
(``ledger=LedgerMode.PER_MESSAGE``); ``test_ledger_compact.py`` holds the compact ledger's own tests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sensor_digest.config import DeliveryMode, LedgerMode
from sensor_digest.counting import DayCounter, GroupOutcome, LedgerCounter, PlainCounter, RetryPolicy
from sensor_digest.ingest import InboundMessage, IngestService
from tests.support.counting import DeadLettered, recording
from tests.support.faults import FaultyClient, PauseAfterFirstCall, throttling_error, touches_sensor
from tests.support.messages import FakeContext, QueuedMessage, body_of, sqs_event
from tests.support.scenarios import deliver, generate
from tests.support.sqs import DeadLetters
from tests.support.tables import Tables, day_counts, identities, ledger_pages, markers, scan_all

UTC_ZONE = ZoneInfo("UTC")
WRITES = ("transact_write_items", "update_item", "put_item")
DAY_ONE = "2024-05-01"
BOTH = pytest.mark.parametrize("ledger", [LedgerMode.COMPACT, LedgerMode.PER_MESSAGE])


def make_service(
    client: Any,
    tables: Tables,
    mode: DeliveryMode = DeliveryMode.EXACTLY_ONCE,
    on_group: Callable[[GroupOutcome], None] | None = None,
    ledger: LedgerMode = LedgerMode.COMPACT,
    **counter_options: Any,
) -> Any:
    counter: DayCounter
    if "sleep" in counter_options:  # how the ledger's retries wait: its RetryPolicy's
        retry = counter_options.pop("retry", None) or RetryPolicy()
        counter_options["retry"] = replace(retry, sleep=counter_options.pop("sleep"))
    if mode is DeliveryMode.AT_LEAST_ONCE:
        counter = PlainCounter(table_name=tables.table, client=client, **counter_options)
    else:
        counter = LedgerCounter(
            table_name=tables.table,
            ledger_table_name=tables.ledger,
            client=client,
            marker_ttl_seconds=3600,
            mode=ledger,
            **counter_options,
        )
    counter = recording(counter, on_group)
    sink: Any = DeadLettered()
    return IngestService(counter=counter, dead_letters=sink, default_zone=UTC_ZONE)


def inbound(sensor_id: int, day: str, mid: str | None = None, **extra: Any) -> InboundMessage:
    q = QueuedMessage(body=body_of(sensor_id, day, **extra))
    return InboundMessage(message_id=mid or q.message_id, body=q.body, sent_timestamp=str(q.sent_timestamp_ms))


def test_per_message_the_first_message_of_a_day_creates_the_item_and_later_ones_update_it(
    ddb: Any, tables: Tables
) -> None:
    # The lookup before the writes finds no day item, so the first write is the insert of the
    # whole day item with the markers, one transaction (no cancelled update charged for every
    # marker); the next batch knows the item exists. First deliveries are not looked up in the ledger.
    steps: list[list[str]] = []
    service = make_service(
        ddb, tables, on_group=lambda outcome: steps.append(outcome.steps), ledger=LedgerMode.PER_MESSAGE
    )

    first = service.process([inbound(7, "2024-05-01", count=3)])
    second = service.process([inbound(7, "2024-05-01"), inbound(7, "2024-05-01", count=5)])

    assert (first.counted, second.counted) == (1, 2)
    assert steps == [["insert"], ["update"]]
    assert (first.requests, second.requests) == (2, 1)  # day item read, the insert's transaction; transaction
    assert day_counts(ddb, tables.table) == {(7, "2024-05-01"): 9}
    markers = scan_all(ddb, tables.ledger)
    assert len(markers) == 3
    assert all(int(m["ExpiresAt"]["N"]) > 0 and m["pk"]["S"].startswith("MSG#7#") for m in markers)


def test_a_new_container_reads_an_existing_day_item_once_and_updates_it(ddb: Any, tables: Tables) -> None:
    make_service(ddb, tables).process([inbound(8, "2024-05-01", count=2)])
    steps: list[list[str]] = []
    fresh = make_service(ddb, tables, on_group=lambda outcome: steps.append(outcome.steps))  # knows no day yet

    report = fresh.process([inbound(8, "2024-05-01", count=4)])

    assert steps == [["update"]]
    assert report.requests == 2  # day item read (found), the update
    assert day_counts(ddb, tables.table) == {(8, "2024-05-01"): 6}


class LookupsRefused:
    """Delegates to ``inner``, but every ``BatchGetItem`` is throttled past the SDK's retries."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "batch_get_item":

            def refuse(**kwargs: Any) -> Any:
                raise throttling_error(name)

            return refuse
        return getattr(self.inner, name)


@pytest.mark.parametrize(
    ("ledger", "first_steps"),
    [(LedgerMode.COMPACT, ["update", "insert"]), (LedgerMode.PER_MESSAGE, ["update", "insert"])],
)
def test_without_the_lookup_the_update_finds_no_item_and_the_insert_follows(
    ddb: Any, tables: Tables, ledger: LedgerMode, first_steps: list[str]
) -> None:
    # Given reads that fail: the lookup is an optimisation, so the writes must find out alone
    # (the insert writes the whole day item; per-message: in one transaction with the markers)
    steps: list[list[str]] = []
    service = make_service(
        LookupsRefused(ddb), tables, on_group=lambda outcome: steps.append(outcome.steps), ledger=ledger
    )
    batch = [inbound(9, "2024-05-01", mid="x", count=2), inbound(9, "2024-05-01", mid="y", count=3)]

    first = service.process(batch)
    again = service.process(batch)  # redelivered: the write's conditions, not the lookup, find the duplicates

    assert (first.counted, first.failed_ids) == (2, [])
    assert steps[0] == first_steps
    assert (again.counted, again.duplicates, again.failed_ids) == (0, 2, [])
    assert day_counts(ddb, tables.table) == {(9, "2024-05-01"): 5}


@BOTH
def test_two_writers_racing_to_create_a_day_item_end_with_the_exact_sum(
    ddb: Any, tables: Tables, ledger: LedgerMode
) -> None:
    # Given two writers whose lookups both find the day item missing before either inserts it
    insert = "put_item" if ledger is LedgerMode.COMPACT else "transact_write_items"  # per-message: with markers
    client = PauseAfterFirstCall(ddb, threading.Barrier(2, timeout=30), insert, before=True)
    outcomes: list[Any] = []

    def writer(count: int) -> None:
        service = make_service(client, tables, on_group=outcomes.append, ledger=ledger)
        service.process([inbound(1, "2024-05-02", count=count)])

    # When both run at once
    threads = [threading.Thread(target=writer, args=(n,)) for n in (4, 6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    # Then the sum is exact and the race cost the loser one refused insert: the winner's insert
    # wrote the whole day item (per-message: in one transaction with its marker), and the loser
    # added in step 3
    assert day_counts(ddb, tables.table) == {(1, "2024-05-02"): 10}
    steps = sorted((o.steps, o.requests) for o in outcomes)
    assert steps == [(["insert"], 1), (["insert", "update-again"], 2)]
    assert all(len(o.counted) == 1 for o in outcomes)


class CreatedAfterLookup:
    """Delegates to ``inner``; once a lookup has read day items (eventually consistent) and found
    them missing, ``create`` makes them exist, as another invocation writing the same backlog
    would between this one's lookup and its write."""

    def __init__(self, inner: Any, table: str, create: Callable[[list[tuple[int, str]]], None]) -> None:
        self.inner, self.table, self.create, self.on = inner, table, create, True

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if name != "batch_get_item":
            return target

        def read(**kwargs: Any) -> Any:
            answer = target(**kwargs)
            request = kwargs["RequestItems"].get(self.table)
            if self.on and request is not None and not request.get("ConsistentRead"):
                found = {(k["SensorId"]["N"], k["Date"]["S"]) for k in answer["Responses"].get(self.table, [])}
                keys = [(int(k["SensorId"]["N"]), k["Date"]["S"]) for k in request["Keys"]]
                self.create([k for k in keys if (str(k[0]), k[1]) not in found])
            return answer

        return read


def bet_on(service: Any, client: CreatedAfterLookup, first_sensor: int = 100) -> None:
    """Eight new days, each created by another invocation between the lookup and the write: the
    container then bets that a day found missing was created meanwhile (``memory.CreatedDays``)."""
    for sensor in range(first_sensor, first_sensor + 8):
        assert service.process([inbound(sensor, DAY_ONE, count=1)]).counted == 1
    client.on = False


@pytest.mark.parametrize("mode", [DeliveryMode.EXACTLY_ONCE, DeliveryMode.AT_LEAST_ONCE])
def test_days_found_missing_start_at_the_update_while_most_were_created_meanwhile(
    ddb: Any, tables: Tables, mode: DeliveryMode
) -> None:
    # Given a container whose lookups find new days missing that another invocation then creates
    # before this one writes (several invocations draining one backlog of a new day)
    other = make_service(ddb, tables, mode)
    client = CreatedAfterLookup(
        ddb, tables.table, lambda days: other.process([inbound(s, d, count=1) for s, d in days])
    )
    steps: list[list[str]] = []
    service = make_service(client, tables, mode, on_group=lambda outcome: steps.append(outcome.steps))

    # When it writes 12 such days, then (nobody else writing any more) 13 days really new, one a batch
    for sensor in range(12):
        assert service.process([inbound(100 + sensor, DAY_ONE, count=2)]).counted == 1
    client.on = False
    for sensor in range(13):
        assert service.process([inbound(200 + sensor, DAY_ONE, count=2)]).counted == 1

    # Then its first 8 inserts are refused (each a wasted write), and from then on a day found
    # missing starts at the update (one write when it was created meanwhile); once most of its
    # recent bets have met no day item (12 of 24), new days start at the insert again
    assert steps[:12] == [["insert", "update-again"]] * 8 + [["update"]] * 4
    assert steps[12:] == [["update", "insert"]] * 12 + [["insert"]]
    counts = day_counts(ddb, tables.table)
    assert counts == {**{(100 + s, DAY_ONE): 3 for s in range(12)}, **{(200 + s, DAY_ONE): 2 for s in range(13)}}


class InsertRaced:
    """Delegates to ``inner``; just before each ``PutItem``, ``create`` makes its item exist, as
    another invocation's insert of the same moment would (that one wins)."""

    def __init__(self, inner: Any, create: Callable[[tuple[int, str]], None]) -> None:
        self.inner, self.create = inner, create

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if name != "put_item":
            return target

        def put(**kwargs: Any) -> Any:
            self.create((int(kwargs["Item"]["SensorId"]["N"]), kwargs["Item"]["Date"]["S"]))
            return target(**kwargs)

        return put


def test_a_bet_that_found_no_day_item_is_lost_though_its_insert_then_met_another(ddb: Any, tables: Tables) -> None:
    # Given a container betting that days found missing were created meanwhile (8 such days)
    other = make_service(ddb, tables)
    created = CreatedAfterLookup(ddb, tables.table, lambda days: other.process([inbound(s, d) for s, d in days]))
    steps: list[list[str]] = []
    service = make_service(
        InsertRaced(created, lambda day: other.process([inbound(day[0], day[1])])),
        tables,
        on_group=lambda outcome: steps.append(outcome.steps),
    )
    for sensor in range(100, 108):  # (the insert races too: refused, a day created meanwhile)
        assert service.process([inbound(sensor, DAY_ONE)]).counted == 1
    created.on = False

    # When 8 new days are missing at its update, and another writer inserts each just before it does
    for sensor in range(200, 208):
        assert service.process([inbound(sensor, DAY_ONE)]).counted == 1

    # Then those bets count as lost (the day item was not there when the update went): the bet is off
    # after them (8 won of 16), and the next new day starts at the insert again
    assert steps[8:] == [["update", "insert", "update-again"]] * 8
    assert service.process([inbound(300, DAY_ONE)]).counted == 1
    assert steps[-1][0] == "insert"
    assert day_counts(ddb, tables.table)[(200, DAY_ONE)] == 2


def test_a_per_message_container_that_cannot_read_a_compact_day_still_writes_its_hash(ddb: Any, tables: Tables) -> None:
    # Given a report counted by a compact container (its hash in the day item, no marker), whose
    # answer was lost, redelivered to a per-message container (a rollback's first step) whose
    # lookups are throttled
    compact = make_service(ddb, tables)
    report = inbound(1, DAY_ONE, mid="m", event_id="e-1", count=5)
    assert compact.process([report]).counted == 1
    per_message = make_service(LookupsRefused(ddb), tables, ledger=LedgerMode.PER_MESSAGE)

    # When it comes back
    again = per_message.process([replace(report, receive_count=2)])

    # Then the write's conditions find it counted (the day's kind read back from the refusal)
    assert (again.counted, again.duplicates) == (0, 1)
    assert day_counts(ddb, tables.table) == {(1, DAY_ONE): 5}


def test_a_per_message_container_never_bets_and_writes_hashes_on_a_compact_day_created_meanwhile(
    ddb: Any, tables: Tables
) -> None:
    # Given a per-message container (the upgrade's first deploy) and compact ones (its second) on one
    # backlog: each day this one finds missing, a compact container creates meanwhile
    compact = make_service(ddb, tables)
    client = CreatedAfterLookup(ddb, tables.table, lambda days: compact.process([inbound(s, d) for s, d in days]))
    steps: list[list[str]] = []
    per_message = make_service(
        client, tables, on_group=lambda outcome: steps.append(outcome.steps), ledger=LedgerMode.PER_MESSAGE
    )
    for sensor in range(100, 109):
        assert per_message.process([inbound(sensor, DAY_ONE)]).counted == 1

    # When report R reaches it the same way, and then the producer's resend of R a compact container
    assert per_message.process([inbound(1, DAY_ONE, event_id="r-1", count=7)]).counted == 1
    client.on = False
    resend = compact.process([inbound(1, DAY_ONE, event_id="r-1", count=7)])

    # Then it never bet (a lost bet would be a cancelled transaction), R's hash went on the compact
    # day with its marker, and the resend is a duplicate
    assert all(s[0] == "insert" for s in steps)
    assert (resend.counted, resend.duplicates) == (0, 1)
    assert day_counts(ddb, tables.table)[(1, DAY_ONE)] == 1 + 7


def test_a_failed_read_before_the_next_page_leaves_the_write_to_find_out(ddb: Any, tables: Tables) -> None:
    # Given a day whose page 0 is full, and a container whose consistent reads are throttled
    reads = FaultyClient(inner=ddb, rule=lambda name, kwargs: "throttle", operations=("get_item",))
    service = make_service(reads, tables)
    assert service.process([inbound(3, DAY_ONE, event_id=f"a-{i}") for i in range(40)]).counted == 40

    # When a batch starts the next page
    report = service.process([inbound(3, DAY_ONE, event_id=f"b-{i}") for i in range(5)])

    # Then the read was tried and failed, and the write went on without it: counted, none listed
    assert reads.injected == {"throttle": reads.calls["get_item"]} and reads.calls["get_item"] >= 1
    assert (report.counted, report.failed_ids) == (5, [])
    assert day_counts(ddb, tables.table) == {(3, DAY_ONE): 45}


def test_same_batch_delivered_twice_counts_once(ddb: Any, tables: Tables, ingest_handler: Any) -> None:
    batch = [QueuedMessage(body=body_of(s, "2024-05-01", count=c)) for s, c in [(1, 2), (2, 1), (1, 1), (3, 7)]]
    event = sqs_event(batch)

    first = ingest_handler(event, FakeContext())
    second = ingest_handler(event, FakeContext())

    assert first == second == {"batchItemFailures": []}
    assert day_counts(ddb, tables.table) == {(1, "2024-05-01"): 3, (2, "2024-05-01"): 1, (3, "2024-05-01"): 7}
    assert identities(ddb, tables) == 4  # in the day items: no ledger item at all
    assert scan_all(ddb, tables.ledger) == []


def test_poison_message_goes_to_the_dlq_with_its_reason_and_the_others_count(
    ddb: Any, tables: Tables, ingest_handler: Any, dead_letters: DeadLetters
) -> None:
    good = [QueuedMessage(body=body_of(5, "2024-05-01")) for _ in range(3)]
    poison = QueuedMessage(body='{"sensor_id": "five", "timestamp": "2024-05-01T00:00:00Z"}')

    response = ingest_handler(sqs_event([good[0], poison, good[1], good[2]]), FakeContext())

    assert response == {"batchItemFailures": []}
    assert day_counts(ddb, tables.table) == {(5, "2024-05-01"): 3}
    kept = dead_letters.drain()
    assert [(k.body, k.error, k.source_message_id) for k in kept] == [
        (poison.body, 'sensor_id must be an integer, got string "five"', poison.message_id)
    ]
    assert identities(ddb, tables) == 3  # the poison left no identity


def test_throttling_in_one_group_fails_only_that_groups_messages(ddb: Any, tables: Tables) -> None:
    client = FaultyClient(inner=ddb, rule=lambda op, kw: "throttle" if touches_sensor(kw, 2) else None)
    service = make_service(client, tables)
    batch = [
        inbound(1, "2024-05-01", mid="a"),
        inbound(2, "2024-05-01", mid="b"),
        inbound(3, "2024-05-01", mid="c"),
        inbound(2, "2024-05-01", mid="d"),
    ]

    report = service.process(batch)

    assert report.response() == {"batchItemFailures": [{"itemIdentifier": "b"}, {"itemIdentifier": "d"}]}
    assert day_counts(ddb, tables.table) == {(1, "2024-05-01"): 1, (3, "2024-05-01"): 1}
    assert client.injected == {"throttle": 1}


@pytest.mark.parametrize(
    ("ledger", "counting"), [(LedgerMode.COMPACT, "put_item"), (LedgerMode.PER_MESSAGE, "transact_write_items")]
)
def test_redelivery_after_a_failed_group_counts_it_exactly_once(
    ddb: Any, tables: Tables, ledger: LedgerMode, counting: str
) -> None:
    # The writes that count (compact: the insert of the whole day item; per-message: the
    # transaction after the empty insert): 1 and 2 meet a TransactionConflict (deferred to the end
    # of the batch, then, with no deadline, not retried); 3 commits, then times out.
    plan = {1: "conflict", 2: "conflict", 3: "timeout_after"}
    calls = iter(range(1, 100))
    client = FaultyClient(inner=ddb, rule=lambda op, kw: plan.get(next(calls)) if op == counting else None)
    service = make_service(client, tables, ledger=ledger)
    batch = [inbound(4, "2024-05-01", mid="x", count=2), inbound(4, "2024-05-01", mid="y", count=3)]

    conflicted = service.process(batch)  # TransactionConflict: nothing written
    ambiguous = service.process(batch)  # committed, then the response timed out
    redelivered = service.process(batch)  # SQS redelivers: the identities are there, nothing added

    assert conflicted.failed_ids == ["x", "y"]
    assert ambiguous.failed_ids == ["x", "y"]
    assert (redelivered.failed, redelivered.duplicates, redelivered.counted) == (0, 2, 0)
    assert day_counts(ddb, tables.table) == {(4, "2024-05-01"): 5}


@BOTH
def test_a_conflict_is_retried_inside_the_invocation_while_time_allows(
    ddb: Any, tables: Tables, ledger: LedgerMode
) -> None:
    # Given TransactionConflicts on the first two writes of a group, and time to spare
    calls = iter(range(1, 100))
    client = FaultyClient(inner=ddb, rule=lambda op, kw: "conflict" if op in WRITES and next(calls) <= 2 else None)
    slept: list[float] = []
    outcomes: list[GroupOutcome] = []
    service = make_service(client, tables, on_group=outcomes.append, sleep=slept.append, ledger=ledger)
    batch = [inbound(6, "2024-05-01", mid="x", count=2), inbound(6, "2024-05-01", mid="y", count=3)]

    # When the batch is processed with 30 s left in the invocation
    report = service.process(batch, deadline=time.monotonic() + 30)

    # Then the group is counted in this invocation: the first conflict defers it to the end of the
    # batch (no wait), the second is retried after a backoff; nothing waits out the visibility timeout
    assert (report.counted, report.failed_ids, report.retries, report.deferred) == (2, [], 1, 1)
    assert [len(o.deferred) for o in outcomes] == [2, 0]
    assert outcomes[1].retries == 1 and len(slept) == 1
    assert all(0 <= s <= RetryPolicy().cap_seconds for s in slept)
    assert day_counts(ddb, tables.table) == {(6, "2024-05-01"): 5}


@BOTH
def test_a_conflict_is_listed_when_no_retry_could_end_before_the_deadline(
    ddb: Any, tables: Tables, ledger: LedgerMode
) -> None:
    client = FaultyClient(inner=ddb, rule=lambda op, kw: "conflict")
    slept: list[float] = []
    service = make_service(client, tables, sleep=slept.append, ledger=ledger)
    batch = [inbound(6, "2024-05-01", mid="x")]

    past = service.process(batch, deadline=time.monotonic() - 1)  # the invocation's time is up
    persistent = service.process(batch, deadline=time.monotonic() + 30)  # conflicts every time

    assert (past.failed_ids, past.retries) == (["x"], 0)
    assert (persistent.failed_ids, persistent.retries) == (["x"], RetryPolicy().attempts)
    assert len(slept) == RetryPolicy().attempts
    assert day_counts(ddb, tables.table) == {}


@pytest.mark.parametrize(("ledger", "reads"), [(LedgerMode.COMPACT, 2), (LedgerMode.PER_MESSAGE, 1)])
def test_a_redelivered_batch_is_found_in_the_ledger_before_any_write(
    ddb: Any, tables: Tables, ledger: LedgerMode, reads: int
) -> None:
    # Given a batch counted once
    client = FaultyClient(inner=ddb, rule=lambda op, kw: None)
    service = make_service(client, tables, ledger=ledger)
    batch = [inbound(s, "2024-05-01", count=2) for s in (1, 1, 2, 3)]
    first = service.process(batch)
    writes = dict(client.calls)

    # When SQS delivers it again (ApproximateReceiveCount 2)
    again = service.process([replace(m, receive_count=2) for m in batch])

    # Then reads find every message counted (per-message: one BatchGetItem of the markers; compact:
    # that, and one of the day items, whose identities hold them): no write is spent or charged
    assert (first.counted, again.counted, again.duplicates, again.failed) == (4, 0, 4, 0)
    assert client.calls == writes
    assert again.requests == reads
    assert day_counts(ddb, tables.table) == {(1, "2024-05-01"): 4, (2, "2024-05-01"): 2, (3, "2024-05-01"): 2}


def test_a_failed_marker_lookup_costs_only_what_it_would_have_saved(ddb: Any, tables: Tables) -> None:
    service = make_service(LookupsRefused(ddb), tables)
    batch = [inbound(5, "2024-05-01", mid="a"), inbound(5, "2024-05-01", mid="b")]

    first, again = service.process(batch), service.process(batch)

    assert (first.counted, first.failed) == (2, 0)
    assert (again.counted, again.duplicates, again.failed) == (0, 2, 0)  # the transaction found the markers
    assert day_counts(ddb, tables.table) == {(5, "2024-05-01"): 2}


@BOTH
def test_a_large_group_is_split_and_counted_exactly(ddb: Any, tables: Tables, ledger: LedgerMode) -> None:
    messages = [inbound(9, "2024-05-03", mid=f"m{i}") for i in range(250)]
    service = make_service(ddb, tables, ledger=ledger)
    service.process(messages[100:120])  # some of them were counted before

    report = service.process(messages)

    assert (report.counted, report.duplicates, report.failed) == (230, 20, 0)
    assert report.requests >= 3  # 250 markers need at least three transactions of 100 actions; 250
    # identities four writes of at most 72
    assert day_counts(ddb, tables.table) == {(9, "2024-05-03"): 250}
    if ledger is LedgerMode.PER_MESSAGE:
        assert len(markers(ddb, tables)) == 250
    else:
        assert (identities(ddb, tables), markers(ddb, tables)) == (250, [])


def test_the_same_event_id_twice_in_one_batch_counts_once(ddb: Any, tables: Tables) -> None:
    service = make_service(ddb, tables)
    batch = [
        inbound(3, "2024-05-01", mid="p", event_id="e-1"),
        inbound(3, "2024-05-01", mid="q", event_id="e-1"),
        inbound(3, "2024-05-02", mid="r", event_id="e-1"),
    ]  # same report, re-sent across midnight

    report = service.process(batch)

    assert (report.counted, report.duplicates, report.failed) == (1, 2, 0)
    assert day_counts(ddb, tables.table) == {(3, "2024-05-01"): 1}


def test_one_event_id_on_two_days_in_a_batch_counts_on_the_first_ones_day_every_time(ddb: Any, tables: Tables) -> None:
    # The batch decides, not the race between the two days' groups (written concurrently, in an
    # order of the invocation's own): twenty sensors each re-send one report across midnight
    service = make_service(ddb, tables)
    batch = [inbound(s, "2024-05-01", mid=f"a{s}", event_id="e-1") for s in range(20)]
    batch += [inbound(s, "2024-05-02", mid=f"b{s}", event_id="e-1") for s in range(20)]

    report = service.process(batch)

    assert (report.counted, report.duplicates, report.failed) == (20, 20, 0)
    assert day_counts(ddb, tables.table) == {(s, "2024-05-01"): 1 for s in range(20)}


def test_a_repeat_of_a_report_whose_write_failed_follows_it_into_the_retry(ddb: Any, tables: Tables) -> None:
    # Given the first copy's day throttled and the second copy (same event_id) on another day
    client = FaultyClient(inner=ddb, rule=lambda op, kw: "throttle" if "2024-05-01" in json.dumps(kw) else None)
    service = make_service(client, tables)
    batch = [
        inbound(3, "2024-05-01", mid="first", event_id="e-1"),
        inbound(3, "2024-05-02", mid="again", event_id="e-1"),
    ]

    # When the batch is processed, and then SQS brings the listed messages back with the fault gone
    report = service.process(batch)
    client.rule = lambda op, kw: None
    retry = service.process([m for m in batch if m.message_id in report.failed_ids])

    # Then the second copy did not count on its own day: both were listed, and the retry counted
    # the report once, on the first copy's day
    assert report.failed_ids == ["first", "again"] and report.counted == 0
    assert (retry.counted, retry.duplicates) == (1, 1)
    assert day_counts(ddb, tables.table) == {(3, "2024-05-01"): 1}


@BOTH
def test_event_ids_are_never_pasted_into_expressions(ddb: Any, tables: Tables, ledger: LedgerMode) -> None:
    hostile = ["#a", ":v", ")", "attribute_exists(x)", "MSG#1#x", "é ✓ 日本"]
    service = make_service(ddb, tables, ledger=ledger)

    report = service.process([inbound(1, "2024-05-01", event_id=e) for e in hostile])
    again = service.process([inbound(1, "2024-05-01", event_id=e) for e in hostile])  # resent

    assert (report.counted, report.failed, again.duplicates) == (len(hostile), 0, len(hostile))
    if ledger is LedgerMode.PER_MESSAGE:
        assert markers(ddb, tables) == sorted(f"MSG#1#{e}" for e in hostile)
    else:
        assert identities(ddb, tables) == len(hostile)


def test_at_least_once_writes_one_request_per_group_and_keeps_no_markers(ddb: Any, tables: Tables) -> None:
    service = make_service(ddb, tables, mode=DeliveryMode.AT_LEAST_ONCE)
    batch = [inbound(s, "2024-05-01") for s in (1, 1, 2)]
    service.process(batch)

    again = service.process(batch)

    assert again.requests == 2  # the day items exist: one conditional update per group
    assert day_counts(ddb, tables.table) == {(1, "2024-05-01"): 4, (2, "2024-05-01"): 2}  # overcounts by design
    assert scan_all(ddb, tables.ledger) == []


def test_handler_accepts_the_sqs_event_exactly_as_aws_documents_it(
    ddb: Any, tables: Tables, lambda_entry_point: Any
) -> None:
    # The example event of the Lambda developer guide ("Using Lambda with Amazon SQS"), body replaced.
    event = {
        "Records": [
            {
                "messageId": "059f36b4-87a3-44ab-83d2-661975830a7d",
                "receiptHandle": "AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a...",
                "body": json.dumps({"sensor_id": 12}),
                "attributes": {
                    "ApproximateReceiveCount": "1",
                    "SentTimestamp": "1545082649183",
                    "SenderId": "AIDAIENQZJOLO23YVJ4VO",
                    "ApproximateFirstReceiveTimestamp": "1545082649185",
                },
                "messageAttributes": {},
                "md5OfBody": "e4e68fb7bd0e697a0ae8f1bb342846b3",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-2:123456789012:my-queue",
                "awsRegion": "us-east-2",
            }
        ]
    }

    assert lambda_entry_point(event, FakeContext()) == {"batchItemFailures": []}
    # No timestamp in the body: the day comes from SentTimestamp (2018-12-17T21:37:29Z).
    assert day_counts(ddb, tables.table) == {(12, "2018-12-17"): 1}


@pytest.mark.fresh_engine
def test_messages_delivered_one_to_three_times_give_exact_counts(ddb: Any, tables: Tables, ingest_handler: Any) -> None:
    # Given 2,000 messages over 10 sensors and 3 days (~67 a sensor-day, as 10,000 over 50 before: past
    # the day item's identities, into ledger pages), each delivered 1-3 times, in shuffled batches of <= 100
    scenario = generate(2_000, sensors=10)
    assert len(scenario.deliveries) > len(scenario.messages)  # duplicates there are

    # When they go through the handler, failures redelivered until none is left
    failures = deliver(ingest_handler, scenario.deliveries)

    # Then every count is exact and every message left exactly one identity, pages among them
    assert day_counts(ddb, tables.table) == dict(scenario.truth)
    assert identities(ddb, tables) == len(scenario.messages) == 2_000
    assert ledger_pages(ddb, tables) > 0
    assert failures == 0


def test_a_write_dynamodb_refuses_as_invalid_rejects_its_group_with_the_reason_and_not_the_batch(
    ddb: Any, tables: Tables
) -> None:
    # a ValidationException (a day item whose DataCount is no number, written by hand): no retry
    # cures it, so the group's messages go to the dead-letter queue with the reason, to be redriven
    client = FaultyClient(inner=ddb, rule=lambda op, kw: "invalid" if touches_sensor(kw, 8) else None)
    service = make_service(client, tables)

    report = service.process([inbound(8, "2024-05-01", mid="bad"), inbound(1, "2024-05-01", mid="ok")])

    assert (report.failed_ids, report.rejected, report.counted) == ([], 1, 1)
    [(message_id, reason)] = service.dead_letters.kept
    assert message_id == "bad"
    assert reason.startswith("the day item of sensor 8 on 2024-05-01 cannot take this count (")
    assert "ValidationException" in reason and reason.endswith("then redrive")
    assert day_counts(ddb, tables.table) == {(1, "2024-05-01"): 1}
