"""The compact ledger on DynamoDB Local (every test here): where identities go, what each write
costs, and exactness when answers are lost, calls are retried, invocations die, copies race,
reports are redriven, hashes collide, and a stack is upgraded from per-message markers.

The guarantees under test are the ones docs/exactly-once.md states: a sensor-day's identities are
12-byte hashes, in the day item (40) and then in ledger pages (72 each); every item stays under
1 KB; a group of one sensor-day is one ``UpdateItem`` while the day item has room; a day begun
under per-message markers keeps them; a redelivery is looked up by marker and by identity.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sensor_digest.config import LedgerMode
from sensor_digest.counting import GroupOutcome, LedgerCounter
from sensor_digest.counting import ledger as ledger_module
from sensor_digest.counting.memory import FrozenPages
from sensor_digest.dead_letter_format import Origin
from sensor_digest.ingest import InboundMessage, IngestService
from sensor_digest.store import schema
from sensor_digest.store.identities import DAY_IDS, PAGE_IDS, identity_hash
from sensor_digest.store.sizes import WRITE_UNIT_BYTES
from tests.support.counting import DeadLettered, recording
from tests.support.faults import Crash, FaultyClient
from tests.support.messages import body_of
from tests.support.tables import Tables, day_counts, identities, largest_item, markers, scan_all

DAY = "2024-05-01"
READS = ("batch_get_item", "get_item")


def service_on(
    client: Any,
    tables: Tables,
    *,
    on_group: Callable[[GroupOutcome], None] | None = None,
    counter_class: type[LedgerCounter] = LedgerCounter,
    **options: Any,
) -> IngestService:
    counter = counter_class(
        table_name=tables.table, ledger_table_name=tables.ledger, client=client, marker_ttl_seconds=3600, **options
    )
    return IngestService(
        counter=recording(counter, on_group), dead_letters=DeadLettered(), default_zone=ZoneInfo("UTC")
    )


def report(
    event_id: str, *, sensor: int = 1, day: str = DAY, received: int = 1, count: int = 1, **extra: Any
) -> InboundMessage:
    return InboundMessage(
        message_id=f"m-{event_id}-{received}",
        body=body_of(sensor, day, event_id=event_id, count=count, **extra),
        receive_count=received,
    )


def counting(client: FaultyClient) -> dict[str, int]:
    """The write calls a fault layer let through, by operation."""
    return {op: n for op, n in client.calls.items() if op not in READS}


def day_item(ddb: Any, tables: Tables, sensor: int = 1, day: str = DAY) -> dict[str, Any]:
    return dict(ddb.get_item(TableName=tables.table, Key=schema.day_key(sensor, day))["Item"])


def pages(ddb: Any, tables: Tables) -> list[str]:
    keys = (str(item["pk"]["S"]) for item in scan_all(ddb, tables.ledger))
    return sorted(k for k in keys if k.startswith(schema.ID_PAGE_PREFIX))


def test_a_new_day_is_one_put_and_each_later_group_one_update_with_nothing_in_the_ledger(
    ddb: Any, tables: Tables
) -> None:
    # Given a new sensor-day, then two more batches of it
    client = FaultyClient(inner=ddb, rule=lambda op, kw: None)
    steps: list[list[str]] = []
    service = service_on(client, tables, on_group=lambda o: steps.append(o.steps))

    first = service.process([report("a", count=3)])
    later = [service.process([report(f"b{i}"), report(f"c{i}", count=5)]) for i in range(2)]

    # Then the day item was read once and put whole, then updated once per group: no transaction
    assert steps == [["insert"], ["update"], ["update"]]
    assert (first.requests, later[0].requests, later[1].requests) == (2, 1, 1)
    assert counting(client) == {"put_item": 1, "update_item": 2}
    item = day_item(ddb, tables)
    assert (item[schema.DATA_COUNT], item[schema.ID_PAGE]) == ({"N": "15"}, {"N": "0"})
    assert len(item[schema.IDS]["BS"]) == 5
    assert scan_all(ddb, tables.ledger) == []


def test_a_sensor_day_past_the_day_items_room_fills_pages_each_under_1_kb(ddb: Any, tables: Tables) -> None:
    # Given a hot sensor: 1,000 reports of one day in batches of 100, each batch delivered twice
    service = service_on(ddb, tables)
    reports = [report(f"e{i}") for i in range(1_000)]
    for start in range(0, 1_000, 100):
        batch = reports[start : start + 100]
        service.process(batch)
        again = service.process([replace(m, receive_count=2) for m in batch])
        assert (again.counted, again.duplicates) == (0, len(batch))

    # Then it counted each once; the day item holds 40 identities, the pages the rest, 72 each,
    # and no item ever passed 1 KB (no write costs more than a unit per item)
    assert day_counts(ddb, tables.table) == {(1, DAY): 1_000}
    assert identities(ddb, tables) == 1_000
    assert len(day_item(ddb, tables)[schema.IDS]["BS"]) == DAY_IDS
    expected_pages = -(-(1_000 - DAY_IDS) // PAGE_IDS)
    assert pages(ddb, tables) == sorted(f"IDS#1#{DAY}#{p}" for p in range(1, expected_pages + 1))
    assert int(day_item(ddb, tables)[schema.ID_PAGE]["N"]) == expected_pages
    assert largest_item(ddb, tables) <= WRITE_UNIT_BYTES


def test_a_producers_resend_is_caught_in_the_day_item_in_the_current_page_and_in_a_frozen_page(
    ddb: Any, tables: Tables
) -> None:
    # Given 300 reports of one sensor-day counted (pages 1 to 4, page 4 being filled)
    service = service_on(ddb, tables)
    service.process([report(f"e{i}") for i in range(300)])

    # When its producer sends three of them again, as new SQS messages, to a fresh container
    resent = [replace(report(f"e{i}"), message_id=f"again-{i}") for i in (3, 100, 290)]
    result = service_on(ddb, tables).process([*resent, report("new")])

    # Then each is a duplicate: page 0 in the lookup, the frozen page from its read, the current
    # page by its condition
    assert (result.counted, result.duplicates, result.failed_ids) == (1, 3, [])
    assert day_counts(ddb, tables.table) == {(1, DAY): 301}


def test_redeliveries_are_found_by_reads_and_cost_no_write(ddb: Any, tables: Tables) -> None:
    # Given 200 reports counted (the day item full, pages 1 and 2 frozen, page 3 being filled)
    service_on(ddb, tables).process([report(f"e{i}") for i in range(200)])
    client = FaultyClient(inner=ddb, rule=lambda op, kw: None)

    # When SQS delivers some of them again, to another container
    again = service_on(client, tables).process([report(f"e{i}", received=2) for i in (0, 39, 40, 150, 199)])

    # Then the reads found each (the markers, the day item, the frozen page, the current page)
    assert (again.counted, again.duplicates) == (0, 5)
    assert counting(client) == {}


def test_an_answer_lost_after_the_update_committed_counts_once_on_redelivery(ddb: Any, tables: Tables) -> None:
    # Given the update of a day under way committing, then its answer lost (a timeout)
    service_on(ddb, tables).process([report("first")])
    client = FaultyClient(inner=ddb, rule=lambda op, kw: "timeout_after" if op == "update_item" else None)
    lost = service_on(client, tables).process([report("a", count=2), report("b", count=3)])
    assert lost.failed_ids == ["m-a-1", "m-b-1"]

    # When SQS redelivers the group
    again = service_on(ddb, tables).process([report("a", count=2, received=2), report("b", count=3, received=2)])

    # Then nothing is added twice
    assert (again.counted, again.duplicates) == (0, 2)
    assert day_counts(ddb, tables.table) == {(1, DAY): 6}


def test_an_answer_lost_after_a_page_advance_committed_counts_once_on_redelivery(ddb: Any, tables: Tables) -> None:
    # Given a day item with room for 5 more, and a group of 20 that fills it and starts page 1,
    # whose transaction commits and whose answer is lost
    service_on(ddb, tables).process([report(f"e{i}") for i in range(DAY_IDS - 5)])
    client = FaultyClient(inner=ddb, rule=lambda op, kw: "timeout_after" if op == "transact_write_items" else None)
    group = [report(f"g{i}") for i in range(20)]
    lost = service_on(client, tables).process(group)
    assert len(lost.failed_ids) == 20

    # When it is redelivered, and its producer also sends one of it again
    again = service_on(ddb, tables).process([replace(m, receive_count=2) for m in group])
    resent = service_on(ddb, tables).process([replace(group[17], message_id="resent")])

    assert (again.counted, again.duplicates, resent.duplicates) == (0, 20, 1)
    assert day_counts(ddb, tables.table) == {(1, DAY): DAY_IDS + 15}
    assert pages(ddb, tables) == [f"IDS#1#{DAY}#1"]


class RetriedBySdk:
    """A client whose single-item writes commit, lose their answer and are sent again, as botocore's
    own retries do after a timeout: the second attempt meets the first one's commit."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if name not in ("update_item", "put_item", "transact_write_items"):
            return target

        def twice(**kwargs: Any) -> Any:
            target(**kwargs)  # committed; the answer never arrives
            return target(**kwargs)

        return twice


def test_an_sdk_retry_of_a_committed_write_is_refused_and_adds_nothing(ddb: Any, tables: Tables) -> None:
    # Given every write committed once and then sent again by the SDK
    service = service_on(RetriedBySdk(ddb), tables)

    first = service.process([report("a", count=2)])  # the insert
    second = service.process([report("b", count=3), report("c", count=4)])  # the update
    many = service.process([report(f"p{i}") for i in range(60)])  # a page advance (a transaction)

    # Then the retry's condition found its own identities: nothing counted twice
    assert first.failed_ids == second.failed_ids == many.failed_ids == []
    assert day_counts(ddb, tables.table) == {(1, DAY): 69}
    assert identities(ddb, tables) == 63


def test_an_invocation_killed_mid_batch_leaves_counts_exact_after_the_redelivery(ddb: Any, tables: Tables) -> None:
    # Given a batch of four sensor-days whose third write kills the invocation
    calls = iter(range(1, 100))
    client = FaultyClient(inner=ddb, rule=lambda op, kw: "crash" if op not in READS and next(calls) == 3 else None)
    batch = [report(f"s{s}", sensor=s, count=s) for s in range(1, 5)]
    with pytest.raises(Crash):
        service_on(client, tables, max_workers=1).process(batch)

    # When Lambda's retry brings the whole batch back
    again = service_on(ddb, tables).process([replace(m, receive_count=2) for m in batch])

    # Then each sensor-day holds its count once
    assert again.failed_ids == []
    assert day_counts(ddb, tables.table) == {(s, DAY): s for s in range(1, 5)}


def test_two_invocations_with_the_same_redelivery_in_flight_count_it_once(ddb: Any, tables: Tables) -> None:
    # Given a day under way, and one message delivered to two invocations at once (its visibility
    # timeout ran out while the first still held it), both past their lookup before either writes
    service_on(ddb, tables).process([report("first")])
    barrier = threading.Barrier(2, timeout=30)

    class MeetAfterLookup:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def __getattr__(self, name: str) -> Any:
            target = getattr(self.inner, name)
            if name != "update_item":
                return target

            def update(**kwargs: Any) -> Any:
                barrier.wait()
                return target(**kwargs)

            return update

    results: list[Any] = []

    def invocation() -> None:
        results.append(service_on(MeetAfterLookup(ddb), tables).process([report("r", count=7, received=2)]))

    threads = [threading.Thread(target=invocation) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert sorted((r.counted, r.duplicates) for r in results) == [(0, 1), (1, 0)]
    assert day_counts(ddb, tables.table) == {(1, DAY): 8}


def test_two_invocations_filling_pages_of_one_sensor_day_at_once_count_exactly(ddb: Any, tables: Tables) -> None:
    # Given two invocations each writing 400 reports of one hot sensor-day at the same time
    def invocation(prefix: str) -> None:
        service = service_on(ddb, tables)
        for start in range(0, 400, 50):
            service.process([report(f"{prefix}{i}") for i in range(start, start + 50)])

    threads = [threading.Thread(target=invocation, args=(p,)) for p in "xy"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    # Then both were counted once each, and every page is under 1 KB
    assert day_counts(ddb, tables.table) == {(1, DAY): 800}
    assert identities(ddb, tables) == 800
    assert largest_item(ddb, tables) <= WRITE_UNIT_BYTES


def test_a_redriven_report_without_event_id_is_one_report_with_its_original(ddb: Any, tables: Tables) -> None:
    # Given a report without event_id counted under its SQS messageId, then redriven from the
    # dead-letter queue (a new messageId, the origin in the attributes the redrive stamps)
    body = '{"sensor_id": 4, "timestamp": "2024-05-01T10:00:00Z", "count": 3}'
    service = service_on(ddb, tables)
    service.process([InboundMessage(message_id="orig-1", body=body)])
    redriven = InboundMessage(message_id="new-1", body=body, message_attributes=Origin("orig-1", None).attributes())

    result = service.process([redriven])

    assert (result.counted, result.duplicates) == (0, 1)
    assert day_counts(ddb, tables.table) == {(4, DAY): 3}


def test_two_identities_whose_hashes_collide_are_one_report(ddb: Any, tables: Tables) -> None:
    # Given a hash that makes every event id of "k..." the same identity (a forced collision)
    def collide(event_id: str) -> bytes:
        return b"k" * 12 if event_id.startswith("k") else event_id.encode().ljust(12, b".")[:12]

    service = service_on(ddb, tables, hasher=collide)

    first = service.process([report("k1"), report("k2"), report("a")])  # in one batch
    later = service.process([report("k3"), report("b")])  # in another

    # Then the later of two colliding reports is taken for the first (what a collision does; its
    # chance for real hashes is documented), and nothing is refused or lost from the batch
    assert (first.counted, first.duplicates, first.failed_ids) == (2, 1, [])
    assert (later.counted, later.duplicates, later.failed_ids) == (1, 1, [])
    assert day_counts(ddb, tables.table) == {(1, DAY): 3}


def test_a_report_with_an_event_id_and_no_timestamp_keeps_a_marker_across_days(ddb: Any, tables: Tables) -> None:
    # Given a compact day under way, then a report naming its event_id but no timestamp (its day
    # comes from the send time), and its producer's resend a day later (another send time)
    service = service_on(ddb, tables)
    service.process([report("timed")])
    untimed = '{"sensor_id": 1, "event_id": "u-1", "count": 2}'
    sent = InboundMessage(message_id="s1", body=untimed, sent_timestamp="1714557600000")  # 2024-05-01T10:00Z
    resent = InboundMessage(message_id="s2", body=untimed, sent_timestamp="1714644000000")  # 2024-05-02T10:00Z

    first, second = service.process([sent]), service.process([resent])

    # Then its marker (sensor and event_id, no day) catches the resend on the other day
    assert (first.counted, second.counted, second.duplicates) == (1, 0, 1)
    assert markers(ddb, tables) == ["MSG#1#u-1"]
    assert day_counts(ddb, tables.table) == {(1, DAY): 3}


@pytest.mark.parametrize("untimed_first", [True, False], ids=["untimed-first", "timed-first"])
@pytest.mark.parametrize("ledger", list(LedgerMode))
def test_one_event_id_sent_with_and_without_its_timestamp_on_one_day_counts_once(
    ddb: Any, tables: Tables, ledger: LedgerMode, untimed_first: bool
) -> None:
    # Given a compact day under way, and a report sent once without its timestamp (dated by its
    # send time, on that day) and once with it (found in review: a marker alone and a hash alone
    # never met)
    service_on(ddb, tables).process([report("other")])
    body = {"sensor_id": 1, "event_id": "u-1", "count": 2}
    untimed = InboundMessage(message_id="s-untimed", body=json.dumps(body), sent_timestamp="1714557600000")
    timed_body = json.dumps({**body, "timestamp": f"{DAY}T10:00:00Z"})
    timed = InboundMessage(message_id="s-timed", body=timed_body, sent_timestamp="1714557600000")
    first, second = (untimed, timed) if untimed_first else (timed, untimed)

    # When they come one after the other
    service = service_on(ddb, tables, mode=ledger)
    results = [service.process([first]), service.process([second])]

    # Then it counts once
    assert [(r.counted, r.duplicates) for r in results] == [(1, 0), (0, 1)]
    assert day_counts(ddb, tables.table) == {(1, DAY): 3}


@pytest.mark.parametrize(("ledger", "days"), [(LedgerMode.COMPACT, 2), (LedgerMode.PER_MESSAGE, 1)])
def test_a_resend_of_an_event_id_with_another_days_timestamp(
    ddb: Any, tables: Tables, ledger: LedgerMode, days: int
) -> None:
    # The compact ledger keeps identities per day: one event_id sent again with a timestamp of
    # another day counts there too (the contract's narrowed case); the per-message ledger keeps
    # the strict rule
    service = service_on(ddb, tables, mode=ledger)
    service.process([report("e-1")])

    service.process([replace(report("e-1", day="2024-05-02"), message_id="resend")])

    assert len(day_counts(ddb, tables.table)) == days


@pytest.mark.parametrize(("ledger", "counted"), [(LedgerMode.COMPACT, 2), (LedgerMode.PER_MESSAGE, 1)])
def test_a_report_sent_with_its_timestamp_and_resent_without_it_on_a_later_send_day(
    ddb: Any, tables: Tables, ledger: LedgerMode, counted: int
) -> None:
    # The compact ledger knows the first send by its hash on its timestamp's day and writes it no
    # marker; the resend, without timestamp, is dated by its send time on the next day, where only a
    # marker would find it: it counts there too (the contract's narrowed case). The per-message
    # ledger's marker finds it
    service = service_on(ddb, tables, mode=ledger)
    body = {"sensor_id": 1, "event_id": "u-1", "count": 2}
    timed = InboundMessage(
        message_id="s-timed", body=json.dumps({**body, "timestamp": f"{DAY}T10:00:00Z"}), sent_timestamp="1714557600000"
    )
    untimed = InboundMessage(message_id="s-untimed", body=json.dumps(body), sent_timestamp="1714644000000")  # 05-02

    results = [service.process([timed]), service.process([untimed])]

    assert sum(r.counted for r in results) == counted
    assert sum(day_counts(ddb, tables.table).values()) == 2 * counted


def test_an_upgrade_honours_the_markers_of_messages_in_flight_and_keeps_old_days_on_markers(
    ddb: Any, tables: Tables
) -> None:
    # Given the previous version counted a group (its day item, one marker per message)
    old = service_on(ddb, tables, mode=LedgerMode.PER_MESSAGE)
    old.process([report("a", count=2), report("b", count=3)])
    assert "IdPage" not in day_item(ddb, tables)

    # When the new version gets its redelivery, its producer's resend and a new report of that day
    new = service_on(ddb, tables)
    redelivered = new.process([report("a", count=2, received=2)])
    resent = new.process([replace(report("b", count=3), message_id="resent")])
    fresh = new.process([report("c", count=4), report("d", day="2024-05-02")])

    # Then nothing counted twice; the old day stays on markers, the new day is compact
    assert (redelivered.duplicates, resent.duplicates, fresh.counted) == (1, 1, 2)
    assert day_counts(ddb, tables.table) == {(1, DAY): 9, (1, "2024-05-02"): 1}
    assert markers(ddb, tables) == ["MSG#1#a", "MSG#1#b", "MSG#1#c"]
    assert day_item(ddb, tables, day="2024-05-02")[schema.ID_PAGE] == {"N": "0"}


def test_a_write_the_real_engine_refuses_inside_a_transaction_rejects_its_group_with_the_reason(
    ddb: Any, tables: Tables
) -> None:
    # DynamoDB (not DynamoDB Local) refuses an invalid action inside a transaction as a
    # cancellation with the reason ValidationError: retrying cannot help, so the group's messages
    # go to the dead-letter queue with the reason rather than wait out every receive
    service_on(ddb, tables).process([report(f"e{i}") for i in range(DAY_IDS)])  # the next write is a transaction
    client = FaultyClient(
        inner=ddb,
        rule=lambda op, kw: "cancel:ValidationError@0" if op == "transact_write_items" else None,
    )
    service = service_on(client, tables)

    result = service.process([report("bad"), report("ok", sensor=2)])

    assert (result.failed_ids, result.rejected, result.counted) == ([], 1, 1)
    [(message_id, reason)] = service.dead_letters.kept  # type: ignore[attr-defined]
    assert message_id == "m-bad-1" and "ValidationError" in reason


# -- what outside review found (each failed before its fix) ----------------------------------------


def _seed_compact_day(ddb: Any, tables: Tables, sensor: int, pages: int) -> int:
    """A compact sensor-day as ingest leaves it, written directly: page 0 and pages 1..pages-1 full
    (page p holds the identity of ``s<sensor>-p<p>``), page ``pages`` being filled (one identity,
    ``s<sensor>-p<pages>``). Its count."""
    for p in range(1, pages + 1):
        others = range(PAGE_IDS - 1 if p < pages else 0)
        ids = [identity_hash(f"s{sensor}-p{p}")] + [identity_hash(f"s{sensor}-p{p}-{i}") for i in others]
        ddb.put_item(
            TableName=tables.ledger,
            Item={
                **schema.id_page_key(sensor, DAY, p),
                schema.IDS: {"BS": ids},
                schema.EXPIRES_AT: {"N": "4102444800"},
            },
        )
    count = DAY_IDS + PAGE_IDS * (pages - 1) + 1
    day_ids = [identity_hash(f"s{sensor}-day-{i}") for i in range(DAY_IDS)]
    ddb.put_item(
        TableName=tables.table,
        Item={
            **schema.day_key(sensor, DAY),
            schema.DATA_COUNT: {"N": str(count)},
            schema.ID_PAGE: {"N": str(pages)},
            schema.IDS: {"BS": day_ids},
        },
    )
    return count


def _resend(sensor: int, page: int) -> InboundMessage:
    """The producer sends a report of page ``page`` again: a new SQS message, a first delivery."""
    return replace(report(f"s{sensor}-p{page}", sensor=sensor), message_id=f"resend-{sensor}-{page}")


def test_a_container_whose_frozen_pages_outgrow_its_cache_still_checks_every_page(
    ddb: Any, tables: Tables, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a container keeping the identities of 10 pages (720), and two sensor-days of 8 full
    # pages each: reading the second forgets the first's oldest pages, and reading those again
    # forgets others while the same call still needs them
    monkeypatch.setattr(ledger_module, "FrozenPages", partial(FrozenPages, limit=10 * PAGE_IDS))
    counts = {s: _seed_compact_day(ddb, tables, s, 9) for s in (1, 2)}
    service = service_on(ddb, tables)
    service.process([report("a-new", sensor=1)])
    service.process([report("b-new", sensor=2)])

    # When sensor 1's producer sends again a report of each of its two pages the cache still holds
    # (reading the six it forgot forgets those two while the same call needs them)
    result = service.process([_resend(1, 7), _resend(1, 8)])

    # Then both are found counted: a page the cache forgot while it was read is checked all the same
    assert (result.counted, result.duplicates) == (0, 2)
    assert day_counts(ddb, tables.table) == {(1, DAY): counts[1] + 1, (2, DAY): counts[2] + 1}


@pytest.mark.parametrize("bad", [{"S": "0"}, {"N": "1.5"}, {"N": "-1"}], ids=["text", "fraction", "negative"])
def test_a_day_item_whose_id_page_was_edited_by_hand_rejects_its_reports_alone_with_the_repair(
    ddb: Any, tables: Tables, bad: dict[str, str]
) -> None:
    # Given sensor 1's day item edited by hand: its IdPage no whole number of 0 or more
    ddb.put_item(TableName=tables.table, Item={**schema.day_key(1, DAY), schema.DATA_COUNT: {"N": "3"}, "IdPage": bad})
    service = service_on(ddb, tables)

    # When a batch holds a first delivery and a redelivery of sensor 1 and a report of sensor 2
    result = service.process([report("a"), report("b", received=2), report("c", sensor=2)])

    # Then sensor 2 is counted, and sensor 1's reports are kept with what is wrong and how to mend it
    assert day_counts(ddb, tables.table) == {(1, DAY): 3, (2, DAY): 1}
    assert result.failed_ids == []
    reasons = dict(service.dead_letters.kept)  # type: ignore[attr-defined]
    assert set(reasons) == {"m-a-1", "m-b-2"}
    assert all("IdPage" in reason and "then redrive" in reason for reason in reasons.values())


def test_a_day_item_put_back_while_its_pages_stayed_moves_on_past_them(ddb: Any, tables: Tables) -> None:
    # Given a busy sensor-day (its day item and page 1 full, page 2 being filled), whose day item an
    # operator deleted (or restored the digest table alone to an earlier time), the pages kept
    service_on(ddb, tables).process([report(f"e{i}") for i in range(DAY_IDS + PAGE_IDS + 5)])
    ddb.delete_item(TableName=tables.table, Key=schema.day_key(1, DAY))

    # When new reports of that day come, in a container that never saw it, and then one more batch
    fresh = [report(f"new{i}") for i in range(DAY_IDS + 10)]
    first = service_on(ddb, tables).process(fresh)
    later = service_on(ddb, tables).process([report(f"later{i}") for i in range(70)])

    # Then each is counted (the day goes on past the pages it finds taken) and nothing is listed
    assert (first.failed_ids, later.failed_ids) == ([], [])
    assert day_counts(ddb, tables.table) == {(1, DAY): DAY_IDS + 10 + 70}
    assert largest_item(ddb, tables) < WRITE_UNIT_BYTES


class PageReads:
    """A client that records the identity pages each ``BatchGetItem`` asks for and, once ``after``
    reads of pages went through, moves ``now`` past every deadline (the invocation's time is up)."""

    def __init__(self, inner: Any, now: list[float], after: int) -> None:
        self.inner, self.now, self.after = inner, now, after
        self.pages: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def batch_get_item(self, **kwargs: Any) -> Any:
        keys = [k["pk"]["S"] for table in kwargs["RequestItems"].values() for k in table["Keys"] if "pk" in k]
        pages = [k for k in keys if k.startswith(schema.ID_PAGE_PREFIX)]
        self.pages += pages
        answer = self.inner.batch_get_item(**kwargs)
        if pages:
            self.after -= 1
            if self.after <= 0:
                self.now[0] = 1e12
        return answer


def test_a_hand_written_id_page_no_day_can_reach_is_refused_before_any_page_is_read(ddb: Any, tables: Tables) -> None:
    # Given sensor 1's day item (50 reports: page 1 being filled) edited by hand to IdPage 1,000,000
    service_on(ddb, tables).process([report(f"e{i}") for i in range(50)])
    ddb.update_item(
        TableName=tables.table,
        Key=schema.day_key(1, DAY),
        UpdateExpression="SET IdPage = :p",
        ExpressionAttributeValues={":p": {"N": "1000000"}},
    )

    # When a fresh container gets a redelivery and a new report of that day, and a healthy sensor's
    client = PageReads(ddb, [0.0], after=10**9)
    service = service_on(client, tables)
    result = service.process([report("e3", received=2), report("new"), report("ok", sensor=2)])

    # Then the healthy sensor counts; sensor 1's reports are kept with the repair that names IdPage,
    # and no page of the day was read
    assert day_counts(ddb, tables.table) == {(1, DAY): 50, (2, DAY): 1}
    assert (result.counted, result.failed_ids) == (1, [])
    reasons = dict(service.dead_letters.kept)  # type: ignore[attr-defined]
    assert set(reasons) == {"m-e3-2", "m-new-1"}
    for reason in reasons.values():
        assert "IdPage 1000000 is no page a day of 50 reports can have (0 to 1)" in reason
        assert "its IdPage must be the number of the sensor-day's highest IDS#1#2024-05-01#<page>" in reason
    assert client.pages == []


def test_reading_a_busy_days_pages_stops_at_the_deadline_and_goes_on_where_it_stopped(ddb: Any, tables: Tables) -> None:
    # Given a busy sensor-day (250 pages: 249 frozen) that a fresh container has never read
    count = _seed_compact_day(ddb, tables, 1, 250)

    # When a redelivery of one of its reports comes in an invocation whose time runs out during the
    # first read of its pages (a clock that jumps past the deadline then)
    now = [0.0]
    client = PageReads(ddb, now, after=1)
    service = service_on(client, tables, clock=lambda: now[0])
    first = service.process([replace(_resend(1, 7), receive_count=2)], deadline=10.0)

    # Then no read of pages was started past the deadline, and the report waits uncounted for its
    # redelivery (a batch item failure, with the reason)
    assert first.failed_ids == ["resend-1-7"] and first.counted == 0
    assert len(client.pages) == 100

    # When it comes back to the same container with time to spare
    now[0], client.after = 0.0, 10**9
    again = service.process([replace(_resend(1, 7), receive_count=3)], deadline=1e9)

    # Then it is found counted, and no page read before was read again
    assert (again.counted, again.duplicates, again.failed_ids) == (0, 1, [])
    assert sorted(client.pages) == sorted(set(client.pages)) and len(client.pages) == 249
    assert day_counts(ddb, tables.table) == {(1, DAY): count}


@pytest.mark.parametrize("ledger", [LedgerMode.COMPACT, LedgerMode.PER_MESSAGE])
def test_a_report_without_timestamp_resent_on_later_days_leaves_no_empty_day_item(
    ddb: Any, tables: Tables, ledger: LedgerMode
) -> None:
    # Given a report naming an event_id but no timestamp: it counts on the day it was sent
    def sent_on(day: str, message_id: str) -> InboundMessage:
        body = json.dumps({"sensor_id": 1, "event_id": "untimed"})
        return InboundMessage(message_id=message_id, body=body, sent_timestamp=str(_epoch_ms(day)))

    service = service_on(ddb, tables, mode=ledger)
    assert service.process([sent_on("2024-05-01", "m-1")]).counted == 1

    # When its producer sends it again on five later days (each a new send day)
    resends = [service_on(ddb, tables, mode=ledger).process([sent_on(f"2024-05-0{d}", f"m-{d}")]) for d in range(2, 7)]

    # Then each resend is a duplicate, and no day item was left behind without a count
    assert [(r.counted, r.duplicates) for r in resends] == [(0, 1)] * 5
    items = [item for item in scan_all(ddb, tables.table)]
    assert [schema.text_of(item, schema.DATE) for item in items] == ["2024-05-01"]
    assert all(schema.DATA_COUNT in item for item in items)


def _epoch_ms(day: str) -> int:
    return int(dt.datetime.fromisoformat(f"{day}T12:00:00+00:00").timestamp() * 1000)


def _day_without_hashed_count(ddb: Any, tables: Tables, counted: list[str], hours: dict[str, int]) -> None:
    """Sensor 1's compact day item without ``HashedCount`` (no release writes one: by hand): the hashes
    of ``counted``, ``DataCount`` its hours' sum."""
    ddb.put_item(
        TableName=tables.table,
        Item={
            **schema.day_key(1, DAY),
            schema.DATA_COUNT: {"N": str(sum(hours.values()))},
            schema.ID_PAGE: {"N": "0"},
            schema.IDS: {"BS": [identity_hash(e) for e in counted]},
            schema.HOUR_COUNTS: {"M": {h: {"N": str(n)} for h, n in hours.items()}},
        },
    )


def test_a_compact_day_without_hashed_count_is_not_hashed_even_where_its_hours_hold_its_count(
    ddb: Any, tables: Tables
) -> None:
    # Given a compact day without HashedCount whose hours hold its count (as the commits before
    # HashedCount left one: no release this one upgrades from writes it)
    _day_without_hashed_count(ddb, tables, ["a", "b", "c"], {"12": 3})

    # When this release counts a new report and meets a resend of an old one
    result = service_on(ddb, tables).process([report("d"), replace(report("b"), message_id="resent")])

    # Then the resend is found by its hash, and the new report leaves its marker beside its hash: the
    # day is not hashed, and stays so (its HashedCount holds only what this release counted)
    assert (result.counted, result.duplicates) == (1, 1)
    assert markers(ddb, tables) == ["MSG#1#d"]
    item = day_item(ddb, tables)
    assert (item[schema.DATA_COUNT], item[schema.HASHED_COUNT]) == ({"N": "4"}, {"N": "1"})


def test_a_compact_day_without_hashed_count_checks_each_report_against_its_marker(ddb: Any, tables: Tables) -> None:
    # Given a compact day without HashedCount: three hashed reports and two that a writer without
    # hashes or hours counted (its markers there): DataCount 5, hours 3
    _day_without_hashed_count(ddb, tables, ["a", "b", "c"], {"12": 3})
    ddb.update_item(
        TableName=tables.table,
        Key=schema.day_key(1, DAY),
        UpdateExpression="ADD DataCount :two",
        ExpressionAttributeValues={":two": {"N": "2"}},
    )
    for event_id in ("p", "q"):
        ddb.put_item(
            TableName=tables.ledger, Item={**schema.ledger_key(f"MSG#1#{event_id}"), "ExpiresAt": {"N": "4102444800"}}
        )

    # When their producer resends them, with a new report, to this release
    result = service_on(ddb, tables).process(
        [replace(report(e), message_id=f"again-{e}") for e in "pq"] + [report("r")]
    )

    # Then the resends are duplicates, the new report counts with its marker beside its hash
    assert (result.counted, result.duplicates) == (1, 2)
    assert day_counts(ddb, tables.table) == {(1, DAY): 6}
    assert markers(ddb, tables) == ["MSG#1#p", "MSG#1#q", "MSG#1#r"]


@pytest.mark.parametrize("page", [1, 2], ids=["frozen page", "page being filled"])
def test_an_identity_page_whose_ids_were_edited_by_hand_rejects_its_days_reports_with_the_repair(
    ddb: Any, tables: Tables, page: int
) -> None:
    # Given a compact sensor-day (page 1 full, page 2 being filled) one of whose identity pages an
    # operator rewrote by hand with its Ids a string set
    count = _seed_compact_day(ddb, tables, 1, 2)
    ddb.update_item(
        TableName=tables.ledger,
        Key=schema.id_page_key(1, DAY, page),
        UpdateExpression="SET #ids = :text",
        ExpressionAttributeNames={"#ids": schema.IDS},
        ExpressionAttributeValues={":text": {"SS": ["not-a-hash"]}},
    )
    service = service_on(ddb, tables)

    # When a fresh container gets a redelivery of that day, a new report of it and a healthy sensor's
    result = service.process([replace(_resend(1, 1), receive_count=2), report("new"), report("ok", sensor=2)])

    # Then the healthy sensor counts, and the day's reports are kept at once (not retried until the
    # dead-letter queue) with the page and how to mend it; the redelivery is found on page 1 when
    # that page is whole
    assert day_counts(ddb, tables.table) == {(1, DAY): count, (2, DAY): 1}
    assert (result.failed_ids, result.duplicates) == ([], 0 if page == 1 else 1)
    reasons = dict(service.dead_letters.kept)  # type: ignore[attr-defined]
    assert set(reasons) == ({"resend-1-1", "m-new-1"} if page == 1 else {"m-new-1"})
    for reason in reasons.values():
        assert f"{schema.ID_PAGE_PREFIX}1#{DAY}#{page}" in reason and "Ids is not of type BS" in reason
        assert "then redrive" in reason
