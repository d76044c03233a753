"""What the counters rely on ``DayStore`` for, one suite for every engine it runs on.

``tests/dynamodb_local/store/test_day_store_contract.py`` runs these on DynamoDB Local (the authority)
and ``tests/moto/test_day_store_contract.py`` on moto's in-process engine, where the counters'
decisions are unit-tested without Java (``tests/moto/test_counting_decisions.py``). A module imports
them with ``from tests.support.store_contract import *`` and gives a ``store`` fixture: a ``DayStore``
on empty tables. The writes are those ``day_writes.py`` builds, so a shape one engine judges apart from
the other fails here, on the engine that drifted.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pytest

from sensor_digest.errors import RefusedWrite
from sensor_digest.store import day_writes, schema
from sensor_digest.store.day_store import Action, DayStore, Refused
from sensor_digest.store.day_view import DayView, HoursMap, Kind, ids_of, view_of
from sensor_digest.store.guards import Compact, Exists
from sensor_digest.store.identities import DAY_IDS, PAGE_IDS
from sensor_digest.store.tally import HourStats, Tally

__all__ = [
    "test_a_compact_update_is_refused_for_an_identity_the_day_holds_and_lands_without_it",
    "test_a_page_refuses_identities_past_its_room_and_one_it_holds",
    "test_a_put_on_a_missing_day_lands_and_a_second_is_refused_with_the_item_as_it_was",
    "test_a_transaction_refused_says_which_action_failed_and_returns_the_day_as_it_was",
    "test_a_transaction_whose_marker_is_there_is_refused_by_that_marker_alone",
    "test_an_invalid_write_is_a_refused_write_alone_and_in_a_transaction",
    "test_an_update_returns_what_it_asked_for_and_a_missing_day_refuses_it_with_no_item",
    "test_readings_statistics_add_exactly_and_an_hour_seen_moved_on_refuses_the_write",
    "test_reads_find_what_is_there_and_meter_one_request_a_hundred_keys",
]

DAY = (7, "2024-05-01")


@dataclass
class Report:
    count: int
    hour: str
    readings: tuple[tuple[str, Decimal], ...] = ()


@dataclass
class Meter:
    requests: int = 0


def tally(*reports: Report) -> Tally:
    return Tally.of(reports)


def ids(n: int, start: int = 0) -> list[bytes]:
    return [i.to_bytes(12, "big") for i in range(start, start + n)]


def test_a_put_on_a_missing_day_lands_and_a_second_is_refused_with_the_item_as_it_was(store: DayStore) -> None:
    meter = Meter()
    store.write([Action.put(day_writes.create(store.table, DAY, tally(Report(2, "09"))))], meter)

    with pytest.raises(Refused) as refused:
        store.write([Action.put(day_writes.create(store.table, DAY, tally(Report(5, "10"))))], meter)

    assert refused.value.failed(0)
    assert schema.number_of(refused.value.item, schema.DATA_COUNT) == 2
    assert meter.requests == 2
    assert schema.number_of(store.read_day(DAY), schema.DATA_COUNT) == 2


def test_an_update_returns_what_it_asked_for_and_a_missing_day_refuses_it_with_no_item(store: DayStore) -> None:
    update = day_writes.update(store.table, DAY, tally(Report(3, "09")), HoursMap.ADD, Exists())

    with pytest.raises(Refused) as refused:
        store.write([Action.update(update)])
    assert refused.value.item == {}

    store.write([Action.put(day_writes.create(store.table, DAY, tally(Report(1, "09"))))])
    new = store.write([Action.update({**update, "ReturnValues": "UPDATED_NEW"})])
    assert schema.number_of(new, schema.DATA_COUNT) == 4


def test_a_compact_update_is_refused_for_an_identity_the_day_holds_and_lands_without_it(store: DayStore) -> None:
    first = ids(3)
    store.write([Action.put(day_writes.create(store.table, DAY, tally(Report(3, "09")), ids=first))])
    view = view_of(store.read_day(DAY))
    assert (view.kind, view.day_ids, view.hashed) == (Kind.COMPACT, 3, True)

    again = [first[1], *ids(2, start=10)]
    repeat = day_writes.update(
        store.table, DAY, tally(Report(3, "09")), view.hours, Compact(view, again, again), readings=view.readings
    )
    with pytest.raises(Refused) as refused:
        store.write([Action.update(repeat)])
    assert ids_of(refused.value.item) == set(first)

    fresh = again[1:]
    params = day_writes.update(
        store.table, DAY, tally(Report(2, "10")), view.hours, Compact(view, fresh, fresh), readings=view.readings
    )
    store.write([Action.update(params)])
    item = store.read_day(DAY)
    assert schema.number_of(item, schema.DATA_COUNT) == 5
    assert ids_of(item) == set(first) | set(fresh)


def _page(store: DayStore, identities: list[bytes]) -> Action:
    """Page 1 of the day gains ``identities``."""
    params = day_writes.page_update(store.ledger, DAY, 1, expires_at=1, checked=identities, added=identities)
    return Action.update(params)


def test_a_page_refuses_identities_past_its_room_and_one_it_holds(store: DayStore) -> None:
    held = ids(PAGE_IDS - 1)
    store.write([_page(store, held)])

    with pytest.raises(Refused):  # two more do not fit
        store.write([_page(store, ids(2, start=500))])
    with pytest.raises(Refused):  # one held already
        store.write([_page(store, held[:1])])
    last = ids(1, start=900)
    store.write([_page(store, last)])

    page = store.read_ledger(schema.id_page_key(*DAY, 1))
    assert ids_of(page) == set(held) | set(last)


def _marker(store: DayStore, key: str) -> Action:
    return Action.put(day_writes.marker(store.ledger, key, day=DAY[1], count=1, expires_at=1))


def test_a_transaction_whose_marker_is_there_is_refused_by_that_marker_alone(store: DayStore) -> None:
    store.write([_marker(store, "MSG#7#b")])
    create = Action.put(day_writes.create(store.table, DAY, tally(Report(2, "09"))))

    with pytest.raises(Refused) as refused:
        store.write([create, _marker(store, "MSG#7#a"), _marker(store, "MSG#7#b")])

    assert [refused.value.failed(i) for i in range(3)] == [False, False, True]
    assert refused.value.item == {}
    assert store.read_day(DAY) == {}  # all or nothing
    store.write([create, _marker(store, "MSG#7#a")])
    assert set(store.find_ledger([schema.ledger_key("MSG#7#a"), schema.ledger_key("MSG#7#b")], None)) == {
        "MSG#7#a",
        "MSG#7#b",
    }


def test_a_transaction_refused_says_which_action_failed_and_returns_the_day_as_it_was(store: DayStore) -> None:
    store.write([Action.put(day_writes.create(store.table, DAY, tally(Report(4, "09")), ids=ids(DAY_IDS)))])
    ahead = DayView(Kind.COMPACT, page=1)  # a view of the day on page 1: the day is on page 0
    day = day_writes.update(store.table, DAY, tally(Report(1, "09")), HoursMap.ADD, Compact(ahead, advance=2))
    page = day_writes.page_update(store.ledger, DAY, 1, expires_at=1, checked=ids(1, 99), added=ids(1, 99))

    with pytest.raises(Refused) as refused:
        store.write([Action.update(day), Action.update(page)])

    assert [refused.value.failed(i) for i in range(2)] == [True, False]
    assert schema.number_of(refused.value.item, schema.DATA_COUNT) == 4
    assert store.read_ledger(schema.id_page_key(*DAY, 1)) == {}


def test_an_invalid_write_is_a_refused_write_alone_and_in_a_transaction(store: DayStore) -> None:
    item = {**schema.day_key(*DAY), schema.DATA_COUNT: {"S": "written by hand"}}
    store.write([Action.put({"TableName": store.table, "Item": item})])
    add = day_writes.update(store.table, DAY, tally(Report(1, "09")), HoursMap.CREATE, Exists())

    with pytest.raises(RefusedWrite):
        store.write([Action.update(add)])
    with pytest.raises(RefusedWrite):
        store.write([Action.update(add), _marker(store, "MSG#7#c")])
    assert store.find_ledger([schema.ledger_key("MSG#7#c")], None) == {}


def test_reads_find_what_is_there_and_meter_one_request_a_hundred_keys(store: DayStore) -> None:
    days = [(s, "2024-05-02") for s in range(1, 151)]
    for day in days[::50]:
        store.write([Action.put(day_writes.create(store.table, day, tally(Report(1, "00"))))])
    meter = Meter()

    found = store.find_days(days, meter, projection=[schema.SENSOR_ID, schema.DATE, schema.DATA_COUNT])

    assert sorted(found) == days[::50]
    assert meter.requests == 2
    keys = [schema.ledger_key(f"MSG#{s}#x") for s in range(1, 131)]
    store.write([_marker(store, "MSG#3#x")])
    assert set(store.find_ledger(keys, meter, keys_only=True)) == {"MSG#3#x"}
    assert meter.requests == 4
    assert store.read_day((999, "2024-05-02")) == {}


def test_readings_statistics_add_exactly_and_an_hour_seen_moved_on_refuses_the_write(store: DayStore) -> None:
    one = Report(1, "09", (("t", Decimal("21.500000000001")),))
    store.write([Action.put(day_writes.create(store.table, DAY, tally(one)))])
    seen = view_of(store.read_day(DAY))
    two = Report(1, "09", (("t", Decimal("-3.25")),))
    params = day_writes.update(store.table, DAY, tally(two), seen.hours, Exists(), readings=seen.readings)
    store.write([Action.update(params)])

    with pytest.raises(Refused) as refused:  # rests on one value there; the hour now holds a list
        store.write([Action.update(params)])

    after = view_of(refused.value.item)
    assert after.readings.hours[("t", "09")] == HourStats(
        2, Decimal("18.250000000001"), Decimal("-3.25"), Decimal("21.500000000001")
    )
    assert schema.number_of(refused.value.item, schema.DATA_COUNT) == 2
