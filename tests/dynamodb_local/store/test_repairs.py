"""Items without the contract's shape (hand-made writes, restores from elsewhere), on DynamoDB Local:
each is named, none costs a traceback, a batch or another item, and each can be mended.

Every test here writes the bad item by hand with ``PutItem``, as an operator's mistake would.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Context, Decimal, localcontext
from typing import Any

import pytest
from typer.testing import CliRunner

from sensor_digest.errors import MalformedItem
from sensor_digest.registry import Registry, SensorProfile
from sensor_digest.store import day_writes, reads, schema, tally
from sensor_digest.store.day_view import NOT_THERE, UNSEEN, HoursMap
from sensor_digest.store.guards import Compact
from sensor_digest.store.identities import identity_hash
from sensor_digest.store.sizes import item_bytes
from sensor_digest.store.tally import HourStats, Tally
from sensor_digest.summary import SummaryWriter
from sensor_digest_tools.cli.app import app
from sensor_digest_tools.lambda_runtime.events import FakeContext, QueuedMessage, sqs_event
from sensor_digest_tools.ops.dlq import DeadLetter
from sensor_digest_tools.ops.rebuild import rebuild
from tests.support.sqs import DeadLetters
from tests.support.tables import Tables, day_counts


@dataclass(frozen=True)
class Report:
    count: int
    hour: str
    readings: tuple[tuple[str, Decimal], ...]


def put(ddb: Any, table: str, item: dict[str, Any]) -> None:
    ddb.put_item(TableName=table, Item=item)


def profile(sensor_id: int, **overrides: Any) -> dict[str, Any]:
    """A profile item as the registry writes it, with attributes replaced (``None``: left out)."""
    item = SensorProfile(sensor_id=sensor_id, name=f"s{sensor_id}", serial=f"SN-{sensor_id}").item()
    for name, value in overrides.items():
        if value is None:
            item.pop(name)
        else:
            item[name] = value
    return item


def compact_day(sensor_id: int, **attributes: Any) -> dict[str, Any]:
    """Sensor ``sensor_id``'s day item of 2024-05-01 as the compact ledger writes it, with attributes
    replaced: one report counted at 09:00."""
    item = {
        **schema.day_key(sensor_id, "2024-05-01"),
        schema.DATA_COUNT: {"N": "1"},
        schema.HASHED_COUNT: {"N": "1"},
        schema.ID_PAGE: {"N": "0"},
        schema.IDS: {"BS": [b"\x01" * 12]},
        schema.HOUR_COUNTS: {"M": {"09": {"N": "1"}}},
    }
    return {**item, **attributes}


@pytest.fixture
def registry(ddb: Any, tables: Tables) -> Registry:
    return Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb)


KeptBesideAnother = Callable[[dict[str, Any]], DeadLetter]


@pytest.fixture
def kept_beside_another(ddb: Any, tables: Tables, ingest_handler: Any, dead_letters: DeadLetters) -> KeptBesideAnother:
    """Sends a report of sensor 7 (its body) in one batch with one of sensor 8 on 2024-05-01: the batch
    lists no failure, sensor 8's report counts (it is not held back), and sensor 7's is the one dead
    letter, returned."""

    def send(body: dict[str, Any]) -> DeadLetter:
        report = QueuedMessage(body=json.dumps(body))
        other = QueuedMessage(body=json.dumps({"sensor_id": 8, "timestamp": "2024-05-01T12:00:00Z"}))
        response = ingest_handler(sqs_event([report, other]), FakeContext())
        [kept] = dead_letters.drain()
        assert response == {"batchItemFailures": []}
        assert day_counts(ddb, tables.table)[(8, "2024-05-01")] == 1
        assert kept.source_message_id == report.message_id
        return kept

    return send


def test_a_malformed_profile_is_named_left_out_of_the_list_and_can_be_deleted(
    ddb: Any, tables: Tables, registry: Registry
) -> None:
    registry.register(SensorProfile(sensor_id=1, name="good", serial="G-1"))
    put(ddb, tables.table, profile(2, **{schema.NAME: None}))  # no name
    put(ddb, tables.table, profile(3, **{schema.VERSION: {"S": "1.5"}}))  # a version that is text

    listed = CliRunner().invoke(app, ["sensors", "list", "--table", tables.table, "--ledger", tables.ledger])
    shown = CliRunner().invoke(
        app, ["sensors", "show", "--sensor", "2", "--table", tables.table, "--ledger", tables.ledger]
    )

    assert listed.exit_code == 1 and "Traceback" not in listed.output
    assert "1 registered sensor(s)" in listed.stdout and "good" in listed.stdout
    assert "item SensorId '2', Date 'PROFILE': Name is missing" in listed.stderr
    assert "item SensorId '3', Date 'PROFILE': Version is not of type N" in listed.stderr
    assert shown.exit_code == 1 and "Name is missing" in shown.output and "Traceback" not in shown.output

    for sensor in (2, 3):  # written by hand, without a sentinel: deleting them frees no serial anyone saw
        deleted = registry.delete(sensor)
        assert (deleted.serial, deleted.serial_freed, deleted.held_by) == (f"SN-{sensor}", False, None)
    assert [p.sensor_id for p in registry.all_profiles()] == [1]


@pytest.mark.parametrize(
    ("broken", "said"),
    [
        ({schema.TIME_ZONE: {"N": "9"}}, "TimeZone is not of type S"),
        ({schema.TIME_ZONE: None}, "TimeZone is missing"),
        ({schema.SERIAL: {"N": "1"}}, "Serial is not of type S"),
    ],
)
def test_a_report_of_a_sensor_whose_profile_is_malformed_is_kept_with_the_way_to_mend_it(
    ddb: Any, tables: Tables, kept_beside_another: KeptBesideAnother, broken: dict[str, Any], said: str
) -> None:
    # Given sensor 7's profile with a wrong-typed or missing attribute (read as UTC until now)
    put(ddb, tables.table, profile(7, **broken))

    kept = kept_beside_another({"sensor_id": 7, "timestamp": "2024-05-01T23:30:00"})

    assert day_counts(ddb, tables.table) == {(8, "2024-05-01"): 1}  # sensor 7's report counted nowhere
    assert said in str(kept.error) and "sensor-digest sensors delete --sensor 7" in str(kept.error)


def test_counts_and_summary_show_only_day_and_month_keys(ddb: Any, tables: Tables) -> None:
    # Given hand-made items whose sort keys sort inside a range but are no day or month
    put(ddb, tables.table, schema.day_item(5, "2024-05-01", 3))
    put(ddb, tables.table, {**schema.day_key(5, "2024-05-01\n"), schema.DATA_COUNT: {"N": "40"}})
    put(ddb, tables.table, {**schema.day_key(5, "2024-05-0\u0661"), schema.DATA_COUNT: {"N": "50"}})
    put(ddb, tables.table, schema.summary_item(5, "2024-05", {"2024-05-01": 3, "2024-05-01\n": 40, "2024-06-01": 9}))
    put(ddb, tables.table, schema.summary_item(5, "2024-05\n", {"2024-05-02": 60}))

    assert reads.sensor_days(ddb, tables.table, 5, "2024-05-01", "2024-05-31") == [("2024-05-01", 3)]
    assert reads.summary_months(ddb, tables.table, 5) == {"2024-05": {"2024-05-01": 3}}


def test_an_element_that_is_no_number_is_named_replaced_by_the_summary_and_mended_by_the_exact_rebuild(
    ddb: Any, tables: Tables
) -> None:
    # Given a month item whose elements of 05-01 and 05-02 were written by hand as text
    put(ddb, tables.table, schema.day_item(6, "2024-05-01", 4))
    put(ddb, tables.table, schema.day_item(6, "2024-05-02", 5))
    item = schema.summary_item(6, "2024-05", {"2024-05-03": 1})
    item[schema.DAILY_COUNTS]["M"].update({"2024-05-01": {"S": "four"}, "2024-05-02": {"S": "five"}})
    put(ddb, tables.table, item)

    # the summary command names it, with the repair
    shown = CliRunner().invoke(app, ["summary", "--sensor", "6", "--table", tables.table])
    assert shown.exit_code == 1 and "Traceback" not in shown.output
    assert "SUMMARY#2024-05: element 2024-05-01 is not a number" in shown.output
    assert "summary rebuild --exact --sensor 6" in shown.output
    with pytest.raises(MalformedItem):
        reads.summary_months(ddb, tables.table, 6)

    # the summary path replaces an element that holds no count (and reads no other)
    outcome = SummaryWriter(table_name=tables.table, client=ddb).upsert(6, "2024-05-01", 4)
    assert (outcome.written, outcome.requests) == (True, 1)

    # the exact rebuild mends the rest: 05-02 set to its day item, 05-03 (no day item) removed
    done = rebuild(ddb, tables.table, [6], exact=True)
    assert reads.summary_months(ddb, tables.table, 6) == {"2024-05": {"2024-05-01": 4, "2024-05-02": 5}}
    assert done.removed == 1


def test_the_map_upsert_replaces_an_element_that_is_no_number_and_only_raises_a_number(
    ddb: Any, tables: Tables
) -> None:
    # the upsert's condition allows a write over an element that is not a number, and only that
    item = schema.summary_item(9, "2024-05", {"2024-05-02": 8})
    item[schema.DAILY_COUNTS]["M"]["2024-05-01"] = {"BOOL": True}
    put(ddb, tables.table, item)
    writer = SummaryWriter(table_name=tables.table, client=ddb)

    replaced = writer.upsert(9, "2024-05-01", 2)
    stale = writer.upsert(9, "2024-05-02", 3)  # a number only moves up

    assert (replaced.written, replaced.stale) == (True, False)
    assert (stale.written, stale.stale) == (False, True)
    assert reads.summary_months(ddb, tables.table, 9) == {"2024-05": {"2024-05-01": 2, "2024-05-02": 8}}


@pytest.mark.parametrize("value", [{"S": "6"}, {"N": "1.5"}, {"NULL": True}])
def test_a_hand_written_silence_threshold_never_stops_a_sensors_counts(
    ddb: Any, tables: Tables, registry: Registry, value: dict[str, Any], ingest_handler: Any, dead_letters: Any
) -> None:
    # Given a registered sensor whose SilenceHours was written by hand as no whole number
    registry.register(SensorProfile(sensor_id=5, name="five", serial="S-5", timezone="Asia/Tokyo"))
    ddb.update_item(
        TableName=tables.table,
        Key=schema.profile_key(5),
        UpdateExpression="SET SilenceHours = :v",
        ExpressionAttributeValues={":v": value},
    )

    # When a report of it arrives
    body = json.dumps({"sensor_id": 5, "timestamp": "2024-05-01T20:00:00Z", "event_id": "a"})
    answer = ingest_handler(sqs_event([QueuedMessage(body=body)]), FakeContext())

    # Then it counts, on its zone's day (ingest reads the threshold as none: the stack's default);
    # the command line still names the malformed profile
    assert answer == {"batchItemFailures": []} and dead_letters.drain() == []
    assert reads.day_counts(ddb, tables.table) == {(5, "2024-05-02"): 1}
    listed = CliRunner().invoke(app, ["sensors", "list", "--table", tables.table, "--ledger", tables.ledger])
    assert listed.exit_code == 1 and "SilenceHours" in listed.stderr


BEYOND = "1.2345678901234567890123456789012345678E+50"  # 38 digits: a whole number DynamoDB cannot add 1 to
OWN_REPAIR = f"set its {schema.DATA_COUNT}"  # the repair of a wrong count, not of another attribute
ANY_REPAIR = "its attributes as the contract gives them"  # the repair of an item no attribute of which is named


@pytest.mark.parametrize(
    ("broken", "said", "repair", "unsaid"),
    [
        (
            {schema.IDS: {"S": "hand-written"}},
            "Ids is not of type BS",
            "its Ids must be a binary set of 12-byte identity hashes",
            OWN_REPAIR,
        ),
        # past page 0 no write adds to the day item's Ids, but each checks its identities there
        *(
            (
                {
                    schema.IDS: ids,
                    schema.DATA_COUNT: {"N": "41"},
                    schema.HASHED_COUNT: {"N": "41"},
                    schema.ID_PAGE: {"N": "1"},
                },
                "Ids is not of type BS",
                "its Ids must be a binary set of 12-byte identity hashes",
                OWN_REPAIR,
            )
            for ids in ({"NS": ["1"]}, {"SS": ["x"]})
        ),
        (
            # the report already counted (its identity in Ids): only the refused write's read meets it
            {schema.IDS: {"BS": [identity_hash("x" * 100)]}, schema.SKIPPED_PAGES: {"S": "x"}},
            "SkippedPages is not of type N",
            "its SkippedPages must be a whole number",
            OWN_REPAIR,
        ),
        (
            {schema.HOUR_COUNTS: {"M": {"09": {"S": "one"}}}},
            "HourCounts",
            "remove its HourCounts by hand",
            OWN_REPAIR,
        ),
        (
            {"Notes": {"S": "x" * (schema.ITEM_SIZE_LIMIT - 6 - len("Notes") - item_bytes(compact_day(7)))}},
            "too near DynamoDB's 409,600 to grow",
            "the item has no room to grow: remove the attributes that are not the contract's",
            OWN_REPAIR,
        ),
        # a count DynamoDB cannot add to within its 38 digits
        (
            {schema.DATA_COUNT: {"N": BEYOND}},
            "DataCount 123456789012345678901234567890123456780000000000000 plus 1 needs more than DynamoDB's 38",
            "set its DataCount to the day's count",
            ANY_REPAIR,
        ),
        (
            {schema.DATA_COUNT: {"N": "9.9999999999999999999999999999999999999E+125"}},
            "plus 1 needs more than DynamoDB's 38 digits",
            "set its DataCount to the day's count",
            ANY_REPAIR,
        ),
        (
            {schema.HASHED_COUNT: {"N": BEYOND}},
            "HashedCount 123456789012345678901234567890123456780000000000000 plus 1 needs more",
            "remove its HashedCount by hand",
            ANY_REPAIR,
        ),
        (
            {schema.HOUR_COUNTS: {"M": {"09": {"N": BEYOND}}}},
            "09",  # DynamoDB Local gives an element in exponent form: no integer, named as such
            "remove its HourCounts by hand",
            ANY_REPAIR,
        ),
    ],
    ids=[
        "ids-of-another-type",
        "ids-a-number-set-past-page-0",
        "ids-a-string-set-past-page-0",
        "skipped-pages-of-another-type",
        "an-hour-that-is-no-number",
        "near-400-kb",
        "data-count-of-38-digits-e50",
        "data-count-near-1e126",
        "hashed-count-e50",
        "an-hour-e50",
    ],
)
def test_a_day_item_a_count_cannot_be_added_to_names_its_wrong_attribute_and_that_ones_repair(
    ddb: Any,
    tables: Tables,
    kept_beside_another: KeptBesideAnother,
    broken: dict[str, Any],
    said: str,
    repair: str,
    unsaid: str,
) -> None:
    # Given sensor 7's day item with an attribute written by hand that a count cannot be added to (of
    # another type, past the item's room, or a count DynamoDB cannot add a report to)
    put(ddb, tables.table, compact_day(7, **broken))

    # Then its report (hour 09) is kept with what is wrong and what mends that attribute
    kept = kept_beside_another({"sensor_id": 7, "timestamp": "2024-05-01T09:30:00Z", "event_id": "x" * 100})

    assert said in str(kept.error) and repair in str(kept.error), kept.error
    assert unsaid not in str(kept.error)


def test_ids_removed_by_hand_past_the_40th_report_keeps_a_redelivery_out_with_the_repair(
    ddb: Any, tables: Tables, ingest_handler: Any, dead_letters: DeadLetters
) -> None:
    # Given sensor 7's day of 45 reports (its day item's 40 identities full, page 1 being filled),
    # whose Ids an operator removed by hand
    bodies = [
        json.dumps({"sensor_id": 7, "timestamp": f"2024-05-01T09:{i:02d}:00Z", "event_id": f"e{i}"}) for i in range(45)
    ]
    sent = [QueuedMessage(body=b) for b in bodies]
    for start in range(0, 45, 10):
        assert ingest_handler(sqs_event(sent[start : start + 10]), FakeContext()) == {"batchItemFailures": []}
    key = schema.day_key(7, "2024-05-01")
    ddb.update_item(
        TableName=tables.table, Key=key, UpdateExpression="REMOVE #ids", ExpressionAttributeNames={"#ids": schema.IDS}
    )

    # When the first report is delivered again (its identity was among the 40 removed)
    again = QueuedMessage(body=bodies[0], message_id=sent[0].message_id, receive_count=2)
    answer = ingest_handler(sqs_event([again]), FakeContext())

    # Then it is kept with the reason, never counted a second time
    [kept] = dead_letters.drain()
    assert answer == {"batchItemFailures": []} and "Ids is missing" in str(kept.error)
    assert day_counts(ddb, tables.table)[(7, "2024-05-01")] == 45


def test_an_hour_list_cut_by_hand_after_a_container_read_it_keeps_the_next_reading_out(
    ddb: Any, tables: Tables, ingest_handler: Any, dead_letters: DeadLetters
) -> None:
    # Given sensor 7's hour 09 holding [2, 42, 20, 22], read by this container, then cut by hand to [2, 42]
    def report(event_id: str, minute: int, value: float) -> QueuedMessage:
        return QueuedMessage(
            body=json.dumps(
                {
                    "sensor_id": 7,
                    "timestamp": f"2024-05-01T09:{minute:02d}:00Z",
                    "event_id": event_id,
                    "readings": {"t": value},
                }
            )
        )

    assert ingest_handler(sqs_event([report("a", 1, 20), report("b", 2, 22)]), FakeContext()) == {
        "batchItemFailures": []
    }
    key = schema.day_key(7, "2024-05-01")
    names = {"#r": schema.READINGS, "#t": "t", "#h": "09"}
    ddb.update_item(
        TableName=tables.table,
        Key=key,
        UpdateExpression="REMOVE #r.#t.#h[3], #r.#t.#h[2]",
        ExpressionAttributeNames=names,
    )

    # When a value within the bounds it knew arrives (nothing but count and sum to add)
    answer = ingest_handler(sqs_event([report("c", 3, 21)]), FakeContext())

    # Then the report is kept with the reason and the list is left as it was, never added to
    [kept] = dead_letters.drain()
    stored = ddb.get_item(TableName=tables.table, Key=key, ConsistentRead=True)["Item"]
    assert answer == {"batchItemFailures": []} and "Readings" in str(kept.error)
    assert stored[schema.READINGS]["M"]["t"]["M"]["09"] == {"L": [{"N": "2"}, {"N": "42"}]}
    assert day_counts(ddb, tables.table)[(7, "2024-05-01")] == 2


@pytest.mark.parametrize("ids", [{"NS": ["1"]}, {"SS": ["x"]}, {"BS": [b"\x02" * 12]}], ids=["NS", "SS", "BS"])
def test_a_write_checking_identities_on_a_view_from_before_ids_was_rewritten_is_refused(
    ddb: Any, tables: Tables, ids: dict[str, Any]
) -> None:
    # Given a compact day of 41 reports whose Ids was rewritten by hand after a container read it
    key = (7, "2024-05-01")
    counts = {schema.DATA_COUNT: {"N": "41"}, schema.HASHED_COUNT: {"N": "41"}, schema.ID_PAGE: {"N": "1"}}
    put(ddb, tables.table, compact_day(7, **counts, **{schema.IDS: ids}))
    seen = replace(UNSEEN, page=1, hashed=True)

    # When the container's write checks a report's identity there, on what it saw
    checked = [identity_hash("a")]
    add = Tally.of([Report(1, "09", ())])
    params = day_writes.update(tables.table, key, add, HoursMap.ADD, Compact(seen, checked), readings=NOT_THERE)

    # Then it is refused unless Ids is a binary set: no other type holds an identity to find
    if "BS" in ids:
        ddb.update_item(**params)
        assert day_counts(ddb, tables.table)[key] == 42
        return
    with pytest.raises(ddb.exceptions.ConditionalCheckFailedException):
        ddb.update_item(**params)
    assert day_counts(ddb, tables.table)[key] == 41


@pytest.mark.parametrize(
    "readings",
    [
        {"S": "hand-written"},
        {"M": {"temperature": {"L": [{"N": "1"}]}}},
        {"M": {"temperature": {"M": {"q": {"N": "441"}, "09": {"S": "21"}}}}},
        {"M": {"temperature": {"M": {"q": {"N": "441"}, "09": {"L": [{"N": "2"}, {"N": "42"}, {"N": "21"}]}}}}},
    ],
    ids=["readings-a-string", "a-name-a-list", "an-hour-a-string", "an-hour-of-three"],
)
def test_readings_written_by_hand_in_no_shape_of_ours_reject_the_days_reports_with_their_repair(
    ddb: Any, tables: Tables, ingest_handler: Any, dead_letters: DeadLetters, readings: Any
) -> None:
    # Given sensor 7's day item whose Readings a hand-made write left in a shape no writer leaves
    put(ddb, tables.table, compact_day(7, **{schema.READINGS: readings, schema.READINGS_COVER: {"N": "1"}}))
    body = {"sensor_id": 7, "timestamp": "2024-05-01T09:30:00Z", "event_id": "r-1", "readings": {"temperature": 21.5}}
    report = QueuedMessage(body=json.dumps(body))
    plain = QueuedMessage(body=json.dumps({"sensor_id": 7, "timestamp": "2024-05-01T10:00:00Z", "event_id": "p-1"}))
    other = QueuedMessage(body=json.dumps({"sensor_id": 8, "timestamp": "2024-05-01T12:00:00Z"}))

    # When ingest meets a report with readings for that day, one without, and another sensor's
    first = ingest_handler(sqs_event([report, plain, other]), FakeContext())

    # Then the report with readings is rejected at once with the reason and the repair of Readings,
    # never listed to fail on every receive; the report without readings counts, as on any day, and
    # the other sensor's
    [kept] = dead_letters.drain()
    assert first == {"batchItemFailures": []}
    assert day_counts(ddb, tables.table)[(7, "2024-05-01")] == 2
    assert day_counts(ddb, tables.table)[(8, "2024-05-01")] == 1
    assert kept.source_message_id == report.message_id
    assert "Readings" in str(kept.error) and "REMOVE Readings, ReadingsCover" in str(kept.error)

    # And once mended as the reason says, the same container counts the report with its reading
    ddb.update_item(
        TableName=tables.table, Key=schema.day_key(7, "2024-05-01"), UpdateExpression="REMOVE Readings, ReadingsCover"
    )
    again = ingest_handler(sqs_event([QueuedMessage(body=json.dumps(body))]), FakeContext())
    assert again == {"batchItemFailures": []} and dead_letters.drain() == []
    assert day_counts(ddb, tables.table)[(7, "2024-05-01")] == 3
    item = ddb.get_item(TableName=tables.table, Key=schema.day_key(7, "2024-05-01"), ConsistentRead=True)["Item"]
    assert tally.readings_of_item(item)["temperature"].hours == {"09": HourStats.one(Decimal("21.5"))}


def test_a_readings_cover_of_another_type_is_named_with_the_readings_repair(
    ddb: Any, tables: Tables, ingest_handler: Any, dead_letters: DeadLetters
) -> None:
    # Given sensor 7's day item whose ReadingsCover was written by hand as a string
    put(ddb, tables.table, compact_day(7, **{schema.READINGS_COVER: {"S": "1"}}))
    body = {"sensor_id": 7, "timestamp": "2024-05-01T09:30:00Z", "event_id": "r-2", "readings": {"t": 1}}

    ingest_handler(sqs_event([QueuedMessage(body=json.dumps(body))]), FakeContext())

    # Then the dead letter names ReadingsCover and the repair that mends it (not DataCount's)
    [kept] = dead_letters.drain()
    assert "ReadingsCover" in str(kept.error) and "REMOVE Readings, ReadingsCover" in str(kept.error)
    assert f"set its {schema.DATA_COUNT}" not in str(kept.error)


def readings_day(sensor_id: int, **attributes: Any) -> dict[str, Any]:
    """A compact day item holding one temperature of 21 at 09:00, with attributes replaced."""
    readings = {schema.READINGS: {"M": {"temperature": {"M": {"q": {"N": "441"}, "09": {"N": "21"}}}}}}
    return compact_day(sensor_id, **readings, **{schema.READINGS_COVER: {"N": "1"}}, **attributes)


def test_readings_repairs_reset_to_0_by_hand_is_a_repair_count_like_any_other(
    ddb: Any, tables: Tables, ingest_handler: Any, dead_letters: DeadLetters
) -> None:
    put(ddb, tables.table, readings_day(7, **{schema.READINGS_REPAIRS: {"N": "0"}}))
    body = {"sensor_id": 7, "timestamp": "2024-05-01T09:30:00Z", "event_id": "r", "readings": {"temperature": 23}}

    answer = ingest_handler(sqs_event([QueuedMessage(body=json.dumps(body))]), FakeContext())

    assert answer == {"batchItemFailures": []} and dead_letters.drain() == []
    item = ddb.get_item(TableName=tables.table, Key=schema.day_key(7, "2024-05-01"), ConsistentRead=True)["Item"]
    assert tally.readings_of_item(item)["temperature"].hours["09"] == HourStats(
        2, Decimal(44), Decimal(21), Decimal(23)
    )


@pytest.mark.parametrize("repairs", [{"N": "0.5"}, {"S": "1"}], ids=["a-fraction", "a-string"])
def test_readings_repairs_that_is_no_whole_number_is_named_with_its_own_repair_that_works(
    ddb: Any, tables: Tables, ingest_handler: Any, dead_letters: DeadLetters, repairs: dict[str, str]
) -> None:
    put(ddb, tables.table, readings_day(7, **{schema.READINGS_REPAIRS: repairs}))
    body = {"sensor_id": 7, "timestamp": "2024-05-01T09:30:00Z", "event_id": "r", "readings": {"temperature": 23}}
    plain = QueuedMessage(body=json.dumps({"sensor_id": 7, "timestamp": "2024-05-01T10:00:00Z", "event_id": "p"}))

    first = ingest_handler(sqs_event([QueuedMessage(body=json.dumps(body)), plain]), FakeContext())

    [kept] = dead_letters.drain()
    assert first == {"batchItemFailures": []} and day_counts(ddb, tables.table)[(7, "2024-05-01")] == 2
    assert f"SET {schema.READINGS_REPAIRS} = :n" in str(kept.error), kept.error
    ddb.update_item(  # mended as the dead letter says
        TableName=tables.table,
        Key=schema.day_key(7, "2024-05-01"),
        UpdateExpression="SET #rr = :n",
        ExpressionAttributeNames={"#rr": schema.READINGS_REPAIRS},
        ExpressionAttributeValues={":n": {"N": "2"}},
    )
    again = ingest_handler(sqs_event([QueuedMessage(body=json.dumps(body))]), FakeContext())
    assert again == {"batchItemFailures": []} and dead_letters.drain() == []
    assert day_counts(ddb, tables.table)[(7, "2024-05-01")] == 3


def test_a_statistic_dynamodb_cannot_add_to_within_38_digits_refuses_only_the_reports_of_its_name(
    ddb: Any, tables: Tables, ingest_handler: Any, dead_letters: DeadLetters
) -> None:
    # Given an hour of 10^20 temperatures of 999999999.999999: its sum of squares holds 38 digits
    count, value = 10**20, Decimal("999999999.999999")
    with localcontext(Context(prec=60)):
        total, squares = format(count * value, "f"), format(count * value * value, "f")
    hour = {"L": [{"N": str(count)}, {"N": total}, {"N": str(value)}, {"N": str(value)}]}
    stats = {"temperature": {"M": {"q": {"N": squares}, "09": hour}}}
    n = {"N": str(count)}
    attributes = {schema.DATA_COUNT: n, schema.HASHED_COUNT: n, schema.READINGS_COVER: n}
    put(ddb, tables.table, compact_day(7, **attributes, **{schema.HOUR_COUNTS: {"M": {"09": n}}}))
    ddb.update_item(
        TableName=tables.table,
        Key=schema.day_key(7, "2024-05-01"),
        UpdateExpression="SET #r = :r",
        ExpressionAttributeNames={"#r": schema.READINGS},
        ExpressionAttributeValues={":r": {"M": stats}},
    )
    hot = {"sensor_id": 7, "timestamp": "2024-05-01T09:30:00Z", "event_id": "t", "readings": {"temperature": 1.5}}
    other = {"sensor_id": 7, "timestamp": "2024-05-01T09:40:00Z", "event_id": "h", "readings": {"humidity": 40}}
    plain = {"sensor_id": 7, "timestamp": "2024-05-01T10:00:00Z", "event_id": "p"}

    answer = ingest_handler(sqs_event([QueuedMessage(body=json.dumps(b)) for b in (hot, other, plain)]), FakeContext())

    # Then the temperature is rejected, naming its statistics and the readings repair; the others count
    letters = dead_letters.drain()
    assert len(letters) == 1, [str(k.error) for k in letters]
    [kept] = letters
    assert answer == {"batchItemFailures": []}
    assert "'temperature'" in str(kept.error) and "38 digits" in str(kept.error), kept.error
    assert "REMOVE Readings, ReadingsCover" in str(kept.error) and "mend the day item" not in str(kept.error)
    assert day_counts(ddb, tables.table)[(7, "2024-05-01")] == count + 2


def test_readings_edited_by_hand_after_a_container_read_them_still_count_the_reports_without_readings(
    ddb: Any, tables: Tables, ingest_handler: Any, dead_letters: DeadLetters
) -> None:
    # Given a day the container has read (one report with a temperature), whose sum of squares is then
    # set by hand to one its values cannot give
    first = {"sensor_id": 7, "timestamp": "2024-05-01T10:00:00Z", "event_id": "b-x", "readings": {"t": 2}}
    ingest_handler(sqs_event([QueuedMessage(body=json.dumps(first))]), FakeContext())
    ddb.update_item(
        TableName=tables.table,
        Key=schema.day_key(7, "2024-05-01"),
        UpdateExpression="SET #r.#t.#q = :q",
        ExpressionAttributeNames={"#r": schema.READINGS, "#t": "t", "#q": schema.READING_SQUARES},
        ExpressionAttributeValues={":q": {"N": "9" * 38}},
    )
    hot = {"sensor_id": 7, "timestamp": "2024-05-01T10:10:00Z", "event_id": "b-0", "readings": {"t": 1.5}}
    plain = {"sensor_id": 7, "timestamp": "2024-05-01T10:20:00Z", "event_id": "b-1"}
    other = {"sensor_id": 7, "timestamp": "2024-05-01T10:30:00Z", "event_id": "b-2", "readings": {"h": 40}}

    answer = ingest_handler(sqs_event([QueuedMessage(body=json.dumps(b)) for b in (hot, plain, other)]), FakeContext())

    # Then the reports with readings are kept with the readings repair, and the one without counts
    letters = dead_letters.drain()
    assert answer == {"batchItemFailures": []}
    assert sorted(json.loads(k.body)["event_id"] for k in letters) == ["b-0", "b-2"]
    assert all("REMOVE Readings, ReadingsCover" in str(k.error) for k in letters)
    assert day_counts(ddb, tables.table)[(7, "2024-05-01")] == 2
