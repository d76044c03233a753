"""Readings' statistics on DynamoDB Local (every test here): written in the same write as the count,
exactly once under redelivery and resend in every mode, exact (count, sum, minimum, maximum against
the truth computed in decimal; mean and standard deviation within 1e-12 relative), the same whatever
the order and batching of the reports, and read back by the read API.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import replace
from decimal import Decimal, localcontext
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sensor_digest import api
from sensor_digest.config import ApiSettings, LedgerMode
from sensor_digest.counting import LedgerCounter, OrderedCounter, PlainCounter
from sensor_digest.ingest import FifoGroupOrdering, InboundMessage, IngestService
from sensor_digest.store import schema, tally
from sensor_digest_tools.aws.session import LocalSession
from tests.support.counting import DeadLettered
from tests.support.tables import Tables, day_counts

DAY = "2024-05-01"


def report(
    event_id: str, readings: dict[str, Any], *, hour: int = 9, sensor: int = 1, received: int = 1, count: int = 1
) -> InboundMessage:
    body = {
        "sensor_id": sensor,
        "timestamp": f"{DAY}T{hour:02d}:30:00Z",
        "event_id": event_id,
        "count": count,
        "readings": readings,
    }
    # the readings' numbers as the producer wrote them: json.dumps of a Decimal's text
    text = json.dumps(body, default=str).replace('"__', "").replace('__"', "")
    return InboundMessage(message_id=f"m-{event_id}-{received}", body=text, receive_count=received)


def number(text: str) -> str:
    """A reading value written as an exact JSON number in ``report`` (not a float's repr)."""
    return f"__{text}__"


def ledger(ddb: Any, tables: Tables, mode: LedgerMode = LedgerMode.COMPACT) -> IngestService:
    counter = LedgerCounter(
        table_name=tables.table, ledger_table_name=tables.ledger, client=ddb, marker_ttl_seconds=3600, mode=mode
    )
    return IngestService(counter=counter, dead_letters=DeadLettered(), default_zone=ZoneInfo("UTC"))


def truth(values: Iterable[Decimal]) -> dict[str, Any]:
    """The statistics of ``values``, computed in decimal from the reports."""
    kept = list(values)
    with localcontext() as exact:
        exact.prec = 100
        n, total = len(kept), sum(kept, Decimal(0))
        mean = total / n
        variance = sum(((v - mean) ** 2 for v in kept), Decimal(0)) / n
        return {"count": n, "sum": total, "min": min(kept), "max": max(kept), "mean": mean, "stddev": variance.sqrt()}


def answered(session: LocalSession, tables: Tables, sensor: int = 1) -> dict[str, Any]:
    reader = api.build_service(ApiSettings(table_name=tables.table, ledger_table_name=tables.ledger), session)
    return reader.readings(sensor, DAY, DAY, None, None)


def assert_statistics(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert {k: got[k] for k in ("count", "sum", "min", "max")} == {k: want[k] for k in ("count", "sum", "min", "max")}
    for key in ("mean", "stddev"):
        expected = float(want[key])
        assert abs(got[key] - expected) <= 1e-12 * max(abs(expected), 1e-300), (key, got[key], expected)


def stored_readings(ddb: Any, tables: Tables, sensor: int = 1) -> Any:
    item = ddb.get_item(TableName=tables.table, Key=schema.day_key(sensor, DAY), ConsistentRead=True)["Item"]
    return item.get(schema.READINGS)


def test_a_days_readings_are_counted_with_it_and_answered_exactly(
    ddb: Any, tables: Tables, session: LocalSession
) -> None:
    # Given reports with readings over three hours, in three batches (a new day, then updates)
    values = ["21.5", "22.25", "20.125", "-3.5", "0", "999999999.999999", "0.000001"]
    service = ledger(ddb, tables)
    reports = [report(f"e{i}", {"temperature": number(v)}, hour=9 + i % 3) for i, v in enumerate(values)]
    for start in (0, 3, 5):
        service.process(reports[start : start + {0: 3, 3: 2, 5: 2}[start]])

    # Then the count and the statistics are exact, per day and per hour
    assert day_counts(ddb, tables.table) == {(1, DAY): len(values)}
    answer = answered(session, tables)
    assert answer["partial_days"] == []
    assert_statistics(answer["days"][DAY]["temperature"], truth(Decimal(v) for v in values))
    reader = api.build_service(ApiSettings(table_name=tables.table, ledger_table_name=tables.ledger), session)
    hours = reader.readings_hours(1, DAY)
    assert hours["complete"] is True
    assert sorted(hours["hours"]) == ["09", "10", "11"]
    nine = [Decimal(v) for i, v in enumerate(values) if i % 3 == 0]
    assert hours["hours"]["09"]["temperature"]["count"] == len(nine)
    assert hours["hours"]["09"]["temperature"]["sum"] == sum(nine)


@pytest.mark.parametrize("mode", [LedgerMode.COMPACT, LedgerMode.PER_MESSAGE])
def test_a_redelivery_or_a_resend_adds_nothing_to_the_statistics(
    ddb: Any, tables: Tables, session: LocalSession, mode: LedgerMode
) -> None:
    service = ledger(ddb, tables, mode)
    first = [report("a", {"t": 10}), report("b", {"t": 30, "h": 50})]
    service.process(first)
    before = stored_readings(ddb, tables)

    again = service.process([replace(m, receive_count=2) for m in first])
    resent = ledger(ddb, tables, mode).process([replace(m, message_id=f"resent-{m.message_id}") for m in first])

    assert (again.counted, resent.counted) == (0, 0)
    assert stored_readings(ddb, tables) == before
    assert_statistics(answered(session, tables)["days"][DAY]["t"], truth([Decimal(10), Decimal(30)]))


def test_ordered_mode_counts_readings_once_under_a_redelivered_batch(
    ddb: Any, tables: Tables, session: LocalSession
) -> None:
    counter = OrderedCounter(
        table_name=tables.table, ledger_table_name=tables.ledger, client=ddb, marker_ttl_seconds=3600
    )
    service = IngestService(
        counter=counter, dead_letters=DeadLettered(), default_zone=ZoneInfo("UTC"), ordering=FifoGroupOrdering()
    )
    batch = [
        InboundMessage(
            message_id=f"f{i}",
            body=json.dumps({"sensor_id": 1, "timestamp": f"{DAY}T09:00:00Z", "readings": {"t": i}}),
            sequence_number=str(100 + i),
            group_id="1",
            source="arn:aws:sqs:us-east-1:1:q.fifo",
        )
        for i in range(5)
    ]
    service.process(batch)
    service.process(batch)  # the whole batch again (its deletes were lost)

    assert_statistics(answered(session, tables)["days"][DAY]["t"], truth(Decimal(i) for i in range(5)))


def test_at_least_once_adds_readings_with_the_count(ddb: Any, tables: Tables, session: LocalSession) -> None:
    counter = PlainCounter(table_name=tables.table, client=ddb)
    service = IngestService(counter=counter, dead_letters=DeadLettered(), default_zone=ZoneInfo("UTC"))
    service.process([report("a", {"t": 1}), report("b", {"t": 5})])
    service.process([report("c", {"t": -2}, hour=10)])

    assert_statistics(answered(session, tables)["days"][DAY]["t"], truth([Decimal(1), Decimal(5), Decimal(-2)]))


def test_a_minimum_another_container_lowered_meanwhile_is_never_raised_back(
    ddb: Any, tables: Tables, session: LocalSession
) -> None:
    # Given two containers that both saw the hour's minimum at 20
    one, other = ledger(ddb, tables), ledger(ddb, tables)
    one.process([report("a", {"t": 20})])
    other.process([report("b", {"t": 25})])
    one.process([report("c", {"t": 22})])  # one now knows 20..25? it knows what it saw

    # When the other lowers it to 19, and then the first writes 19.5 believing the minimum is 20
    other.process([report("d", {"t": 19})])
    one.process([report("e", {"t": number("19.5")})])

    # Then the minimum is 19 (the first container's write was refused, read the item, and set nothing)
    stats = answered(session, tables)["days"][DAY]["t"]
    assert (stats["min"], stats["max"], stats["count"]) == (Decimal(19), Decimal(25), 5)


def test_a_group_with_every_name_in_every_hour_is_written_in_chunks_that_fit(
    ddb: Any, tables: Tables, session: LocalSession
) -> None:
    # Given 8 readings in each of 24 hours in one batch of one sensor-day: far more conditions than
    # one write's expressions can hold
    names = [f"r{k}" for k in range(8)]
    batch = [report(f"e{h}", {n: h * 10 + k for k, n in enumerate(names)}, hour=h) for h in range(24)]

    result = ledger(ddb, tables).process(batch)

    assert (result.counted, result.failed_ids) == (24, [])
    days = answered(session, tables)["days"][DAY]
    for k, n in enumerate(names):
        assert_statistics(days[n], truth(Decimal(h * 10 + k) for h in range(24)))


def test_a_full_batch_into_hours_that_hold_several_values_is_written_within_the_operator_limit(
    ddb: Any, tables: Tables, session: LocalSession
) -> None:
    # Given a day whose hours 00 and 01 already hold several values of five readings (so a write
    # checks each hour's minimum and maximum), then one batch of as many reports as a write checks
    # identities for (72: each identity is NOT, contains and AND in the condition, three operators)
    names = [f"r{k}" for k in range(5)]
    first = [report(f"a{i}", {n: i for n in names}, hour=i % 2) for i in range(4)]
    assert ledger(ddb, tables).process(first).counted == 4
    batch = [report(f"b{i}", {n: (-1) ** i * (100 + i) for n in names}, hour=i // 2 % 2) for i in range(72)]

    result = ledger(ddb, tables).process(batch)

    # Then all of it is counted (DynamoDB refuses an expression of more than 300 operators)
    assert (result.counted, result.failed_ids) == (72, [])
    days = answered(session, tables)["days"][DAY]
    values = [Decimal(i) for i in range(4)] + [Decimal((-1) ** i * (100 + i)) for i in range(72)]
    for n in names:
        assert_statistics(days[n], truth(values))


def test_a_day_counted_before_readings_were_kept_reads_as_partial(
    ddb: Any, tables: Tables, session: LocalSession
) -> None:
    # Given a day item of a release before readings (no ReadingsCover), then a report with a reading
    ddb.put_item(
        TableName=tables.table,
        Item={**schema.day_key(1, DAY), schema.DATA_COUNT: {"N": "4"}, schema.HOUR_COUNTS: {"M": {"08": {"N": "4"}}}},
    )
    ledger(ddb, tables).process([report("a", {"t": 7})])

    # Then its statistics hold that report and say they hold only part of the day
    answer = answered(session, tables)
    assert answer["days"][DAY]["t"]["count"] == 1 and answer["partial_days"] == [DAY]


def test_a_day_begun_without_readings_is_complete_once_readings_come(
    ddb: Any, tables: Tables, session: LocalSession
) -> None:
    service = ledger(ddb, tables)
    service.process(
        [InboundMessage(message_id="plain", body=json.dumps({"sensor_id": 1, "timestamp": f"{DAY}T08:00:00Z"}))]
    )
    service.process([report("a", {"t": 7})])

    answer = answered(session, tables)
    assert answer["days"][DAY]["t"]["count"] == 1 and answer["partial_days"] == []


def emptied(ddb: Any, tables: Tables) -> None:
    """Both tables without an item."""
    for table, key in ((tables.table, (schema.SENSOR_ID, schema.DATE)), (tables.ledger, ("pk",))):
        for item in ddb.scan(TableName=table).get("Items", []):
            ddb.delete_item(TableName=table, Key={k: item[k] for k in key})


VALUES = st.decimals(min_value=Decimal("-999999999.999999"), max_value=Decimal("999999999.999999"), places=6)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    values=st.lists(st.tuples(VALUES, st.integers(0, 3)), min_size=2, max_size=30),
    cuts=st.lists(st.integers(1, 6), min_size=1, max_size=8),
    seed=st.randoms(use_true_random=False),
)
def test_the_same_reports_in_any_order_and_batching_store_the_same_statistics(
    ddb: Any, tables: Tables, values: list[tuple[Decimal, int]], cuts: list[int], seed: Any
) -> None:
    # Given reports (a reading each, in four hours), counted once in order in batches of 5 by one
    # container, and once shuffled, in batches of the drawn sizes, alternately by two containers
    reports = [report(f"e{i}", {"t": number(format(v, "f"))}, hour=h) for i, (v, h) in enumerate(values)]
    emptied(ddb, tables)  # the tables serve every example of this test
    for i in range(0, len(reports), 5):
        ledger(ddb, tables).process(reports[i : i + 5])
    first = stored_readings(ddb, tables)

    shuffled = list(reports)
    seed.shuffle(shuffled)
    containers = [ledger(ddb, tables), ledger(ddb, tables)]
    emptied(ddb, tables)
    start, turn = 0, 0
    while start < len(shuffled):
        size = cuts[turn % len(cuts)]
        containers[turn % 2].process(shuffled[start : start + size])
        start, turn = start + size, turn + 1

    # Then the stored statistics are the same, and exact
    assert stored_readings(ddb, tables) == first
    got = tally.readings_of_item({schema.READINGS: first})["t"]
    want = truth(v for v, _ in values)
    day = got.day()
    assert (day.count, day.total, day.low) == (want["count"], want["sum"], want["min"])


def test_concurrent_containers_keep_exact_statistics(ddb: Any, tables: Tables, session: LocalSession) -> None:
    # Given four containers writing one sensor-day's reports at once, each report sent twice
    values = [Decimal(i) / 8 for i in range(-60, 60)]
    reports = [report(f"e{i}", {"t": number(format(v, "f"))}, hour=i % 5) for i, v in enumerate(values)]
    slices = [reports[k::4] for k in range(4)]

    def run(part: list[InboundMessage]) -> None:
        service = ledger(ddb, tables)
        for i in range(0, len(part), 6):
            service.process(part[i : i + 6])
            service.process([replace(m, receive_count=2) for m in part[i : i + 6]])

    threads = [threading.Thread(target=run, args=(part,)) for part in slices]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert day_counts(ddb, tables.table) == {(1, DAY): len(values)}
    assert_statistics(answered(session, tables)["days"][DAY]["t"], truth(values))


@pytest.mark.parametrize("mode", ["ledger", "at-least-once", "ordered"])
def test_readings_written_by_hand_reject_only_the_reports_that_carry_readings(
    ddb: Any, tables: Tables, mode: str
) -> None:
    # Given a day item whose Readings a hand-made write left with an hour that is no hour
    item = {
        **schema.day_key(1, DAY),
        schema.DATA_COUNT: {"N": "1"},
        schema.READINGS_COVER: {"N": "1"},
        schema.HOUR_COUNTS: {"M": {"09": {"N": "1"}}},
        schema.READINGS: {"M": {"t": {"M": {"q": {"N": "1"}, "24": {"N": "1"}}}}},
    }
    ddb.put_item(TableName=tables.table, Item=item)
    dead = DeadLettered()
    counter: Any
    if mode == "ledger":
        counter = LedgerCounter(
            table_name=tables.table, ledger_table_name=tables.ledger, client=ddb, marker_ttl_seconds=3600
        )
        service = IngestService(counter=counter, dead_letters=dead, default_zone=ZoneInfo("UTC"))
    elif mode == "at-least-once":
        counter = PlainCounter(table_name=tables.table, client=ddb)
        service = IngestService(counter=counter, dead_letters=dead, default_zone=ZoneInfo("UTC"))
    else:
        counter = OrderedCounter(
            table_name=tables.table, ledger_table_name=tables.ledger, client=ddb, marker_ttl_seconds=3600
        )
        service = IngestService(
            counter=counter, dead_letters=dead, default_zone=ZoneInfo("UTC"), ordering=FifoGroupOrdering()
        )
    bodies = [{"sensor_id": 1, "timestamp": f"{DAY}T09:30:00Z", "event_id": f"e{i}"} for i in range(6)]
    for body in bodies[::2]:  # every other report carries a reading
        body["readings"] = {"t": 2}
    batch = [
        InboundMessage(
            message_id=f"m{i}",
            body=json.dumps(body),
            **(
                {"sequence_number": str(100 + i), "group_id": "1", "source": "arn:aws:sqs:us-east-1:1:q.fifo"}
                if mode == "ordered"
                else {}
            ),
        )
        for i, body in enumerate(bodies)
    ]

    result = service.process(batch)

    # Then the three without readings count; the three with readings wait in the dead-letter queue
    # with the repair of Readings
    assert (result.counted, result.failed_ids) == (3, [])
    assert day_counts(ddb, tables.table)[(1, DAY)] == 4
    assert sorted(message_id for message_id, _ in dead.kept) == ["m0", "m2", "m4"]
    assert all("REMOVE Readings, ReadingsCover" in reason for _, reason in dead.kept)


def test_after_the_repair_a_container_that_knew_the_statistics_before_it_keeps_them_exact(
    ddb: Any, tables: Tables, session: LocalSession
) -> None:
    # Given container A, which counted 4, 6 and 5 in hour 09 (the hour's list: minimum 4, maximum 6)
    a, b = ledger(ddb, tables), ledger(ddb, tables)
    a.process([report(f"a{v}", {"t": v}) for v in (4, 6, 5)])
    # then the repair the dead letters name for readings written by hand, done as it says
    repair = schema.READINGS_REPAIRS
    ddb.update_item(
        TableName=tables.table,
        Key=schema.day_key(1, DAY),
        UpdateExpression=f"REMOVE Readings, ReadingsCover ADD {repair} :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
    )
    # and container B counting 9 and 100 in that hour since
    b.process([report("b9", {"t": 9}), report("b100", {"t": 100})])

    # When container A counts 5 in that hour, knowing a minimum of 4 from before the repair
    a.process([report("a5-again", {"t": 5})])

    # Then the statistics are those of the reports counted since the repair: 9, 100 and 5
    stats = answered(session, tables)["days"][DAY]["t"]
    assert (stats["count"], stats["sum"], stats["min"], stats["max"]) == (3, Decimal(114), Decimal(5), Decimal(100))
