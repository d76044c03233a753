"""The sensor registry on DynamoDB Local: unique serials by sentinel, optimistic locking, time zones."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import replace
from typing import Any
from unittest.mock import ANY

import pytest

from sensor_digest import ingest
from sensor_digest.config import IngestSettings
from sensor_digest.registry import (
    InvalidProfile,
    ProfileCache,
    Registry,
    RegistryBusy,
    RegistryError,
    SensorExists,
    SensorNotFound,
    SensorProfile,
    SerialHeldElsewhere,
    SerialTaken,
    VersionConflict,
)
from sensor_digest.stream_filter import matches_filter
from sensor_digest.summary import SummaryService, SummaryWriter
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.aws.stream_reader import StreamReader
from sensor_digest_tools.lambda_runtime.events import FakeContext, QueuedMessage, sqs_event
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from tests.support.faults import FaultyClient
from tests.support.sqs import DeadLetters
from tests.support.tables import Tables, day_counts, scan_all


@pytest.fixture
def registry(ddb: Any, tables: Tables) -> Registry:
    return Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb, max_attempts=30)


def sentinels(ddb: Any, tables: Tables) -> dict[str, int]:
    return {
        i["pk"]["S"]: int(i["SensorId"]["N"])
        for i in scan_all(ddb, tables.ledger)
        if i["pk"]["S"].startswith("SERIAL#")
    }


def assert_no_orphan_sentinel(ddb: Any, tables: Tables, registry: Registry) -> None:
    """Every sentinel belongs to a profile that holds that serial, and every profile has its sentinel."""
    held = {f"SERIAL#{p.serial}": p.sensor_id for p in registry.all_profiles()}
    assert sentinels(ddb, tables) == held


def at_once(*calls: Any) -> list[Any]:
    """Run the calls in threads released together; each result or the exception it raised."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(i: int, call: Any) -> None:
        barrier.wait()
        try:
            results[i] = call()
        except RegistryError as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_register_show_update_delete(registry: Registry, ddb: Any, tables: Tables) -> None:
    registry.register(SensorProfile(sensor_id=1, name="roof", serial="SN-1", timezone="Europe/Paris"))

    moved = registry.update(1, lambda p: replace(p, serial="SN-2", name="roof east"))
    deleted = registry.delete(1)

    assert (moved.serial, moved.name, moved.version) == ("SN-2", "roof east", 2)
    assert (deleted.serial, deleted.serial_freed, deleted.held_by) == ("SN-2", True, None)
    assert registry.get(1) is None
    assert sentinels(ddb, tables) == {}


def test_a_taken_serial_or_sensor_id_is_refused_and_named(registry: Registry) -> None:
    registry.register(SensorProfile(sensor_id=1, name="a", serial="SN-1"))

    with pytest.raises(SerialTaken, match="serial 'SN-1' already belongs to another sensor"):
        registry.register(SensorProfile(sensor_id=2, name="b", serial="SN-1"))
    with pytest.raises(SensorExists, match="sensor 1 is already registered"):
        registry.register(SensorProfile(sensor_id=1, name="c", serial="SN-9"))
    registry.register(SensorProfile(sensor_id=3, name="d", serial="SN-3"))
    with pytest.raises(SerialTaken):
        registry.update(3, lambda p: replace(p, serial="SN-1"))
    with pytest.raises(SensorNotFound):
        registry.update(42, lambda p: p)
    with pytest.raises(InvalidProfile, match="not an IANA time zone"):
        registry.register(SensorProfile(sensor_id=4, name="e", serial="SN-4", timezone="Mars/Base"))


def test_two_concurrent_registrations_of_one_serial_exactly_one_wins(
    registry: Registry, ddb: Any, tables: Tables
) -> None:
    results = at_once(
        lambda: registry.register(SensorProfile(sensor_id=10, name="x", serial="SAME")),
        lambda: registry.register(SensorProfile(sensor_id=11, name="y", serial="SAME")),
    )

    assert sorted(type(r).__name__ for r in results) == ["SensorProfile", "SerialTaken"]
    assert_no_orphan_sentinel(ddb, tables, registry)


def test_ten_concurrent_updates_of_one_sensor_lose_nothing(registry: Registry) -> None:
    registry.register(SensorProfile(sensor_id=5, name="n", serial="SN-5"))

    results = at_once(
        *[lambda i=i: registry.update(5, lambda p, i=i: replace(p, name=f"{p.name}|{i}")) for i in range(10)]
    )

    wins = [r for r in results if isinstance(r, SensorProfile)]
    assert all(isinstance(r, SensorProfile | VersionConflict) for r in results)
    final = registry.get(5)
    assert final is not None
    assert final.version == 1 + len(wins)  # rose by exactly the number of successes
    assert sorted(final.name.split("|")[1:]) == sorted(w.name.split("|")[-1] for w in wins)  # every success visible
    assert len(wins) >= 5


def test_a_serial_change_racing_a_registration_of_that_serial_leaves_one_holder(
    registry: Registry, ddb: Any, tables: Tables
) -> None:
    registry.register(SensorProfile(sensor_id=20, name="mover", serial="OLD"))

    results = at_once(
        lambda: registry.update(20, lambda p: replace(p, serial="WANTED")),
        lambda: registry.register(SensorProfile(sensor_id=21, name="newcomer", serial="WANTED")),
    )

    holders = [p.sensor_id for p in registry.all_profiles() if p.serial == "WANTED"]
    assert len(holders) == 1
    assert sum(isinstance(r, SerialTaken) for r in results) == 1
    assert_no_orphan_sentinel(ddb, tables, registry)


def test_the_profile_cache_refreshes_after_its_ttl(registry: Registry) -> None:
    now = [0.0]
    cache = ProfileCache(registry, ttl=60, clock=lambda: now[0])
    assert cache.zone(7) is None  # not registered: cached as such

    registry.register(SensorProfile(sensor_id=7, name="t", serial="SN-7", timezone="Asia/Tokyo"))
    cached = cache.zone(7)
    now[0] = 61
    refreshed = cache.zone(7)

    assert cached is None
    assert refreshed is not None and refreshed.key == "Asia/Tokyo"


def test_messages_near_midnight_count_toward_each_sensors_local_day(
    ddb: Any, tables: Tables, ingest_handler: Any, registry: Registry
) -> None:
    registry.register(SensorProfile(sensor_id=1, name="tokyo", serial="T-1", timezone="Asia/Tokyo"))
    registry.register(SensorProfile(sensor_id=2, name="la", serial="L-2", timezone="America/Los_Angeles"))
    moments = ["2024-05-01T14:59:00Z", "2024-05-01T15:01:00Z", "2024-05-02T06:59:00Z", "2024-05-02T07:01:00Z"]
    batch = [QueuedMessage(body=json.dumps({"sensor_id": s, "timestamp": t})) for s in (1, 2, 3) for t in moments]

    assert ingest_handler(sqs_event(batch), FakeContext()) == {"batchItemFailures": []}

    assert day_counts(ddb, tables.table) == {
        # Tokyo is UTC+9: 14:59Z is 23:59 on May 1, 15:01Z is 00:01 on May 2
        (1, "2024-05-01"): 1,
        (1, "2024-05-02"): 3,
        # Los Angeles is UTC-7 in May: 06:59Z on May 2 is 23:59 on May 1, 07:01Z is 00:01 on May 2
        (2, "2024-05-01"): 3,
        (2, "2024-05-02"): 1,
        # an unregistered sensor counts in DIGEST_TIMEZONE (UTC)
        (3, "2024-05-01"): 2,
        (3, "2024-05-02"): 2,
    }


def test_with_unknown_sensors_rejected_an_unregistered_sensor_goes_to_the_dlq(
    ddb: Any,
    tables: Tables,
    ingest_settings: IngestSettings,
    session: LocalSession,
    registry: Registry,
    dead_letters: DeadLetters,
) -> None:
    ingest_handler = lambda_handler(ingest.build_service(replace(ingest_settings, unknown_sensors="reject"), session))
    registry.register(SensorProfile(sensor_id=1, name="known", serial="K-1"))
    known, unknown = (
        QueuedMessage(body=json.dumps({"sensor_id": s, "timestamp": "2024-05-01T10:00:00Z"})) for s in (1, 99)
    )

    response = ingest_handler(sqs_event([known, unknown]), FakeContext())

    kept = dead_letters.drain()
    assert response == {"batchItemFailures": []}
    assert day_counts(ddb, tables.table) == {(1, "2024-05-01"): 1}
    assert [(k.source_message_id, k.error) for k in kept] == [
        (unknown.message_id, "sensor 99 is not registered (UNKNOWN_SENSORS=reject)")
    ]


def test_the_summary_ignores_profile_items(ddb: Any, tables: Tables, registry: Registry, engine_endpoint: str) -> None:
    registry.register(SensorProfile(sensor_id=8, name="p", serial="P-8"))
    registry.update(8, lambda p: replace(p, name="q"))
    records = StreamReader(engine_endpoint, tables.table).poll()

    report = SummaryService(writer=SummaryWriter(table_name=tables.table, client=ddb)).process(records)

    assert len(records) == 2 and not any(matches_filter(r) for r in records)
    assert (report.ignored, report.requests) == (2, 0)


# -- cancellations read action by action; sentinels that do not match their profile ---------------


def faulty_registry(
    ddb: Any, tables: Tables, first: list[str], sleeps: list[float], *, then: str | None = None
) -> Registry:
    """A registry whose transactions get the faults ``first`` in turn, then ``then``, and which
    records the backoff it would sleep instead of sleeping."""
    pending = list(first)

    def rule(operation: str, kwargs: dict[str, Any]) -> str | None:
        if operation != "transact_write_items":
            return None
        return pending.pop(0) if pending else then

    client = FaultyClient(inner=ddb, rule=rule)
    return Registry(
        table_name=tables.table, ledger_table_name=tables.ledger, client=client, max_attempts=4, sleep=sleeps.append
    )


def set_sentinel(ddb: Any, tables: Tables, serial: str, sensor_id: int | None) -> None:
    """What an operator's direct write or a restore leaves: the sentinel of ``serial`` naming
    ``sensor_id``, or no sentinel at all (``None``)."""
    key = {"pk": {"S": f"SERIAL#{serial}"}}
    if sensor_id is None:
        ddb.delete_item(TableName=tables.ledger, Key=key)
    else:
        ddb.put_item(TableName=tables.ledger, Item={**key, "SensorId": {"N": str(sensor_id)}})


@pytest.mark.parametrize(
    "fault", ["cancel:ThrottlingError@1", "cancel:TransactionConflict@0", "cancel:ProvisionedThroughputExceeded@1"]
)
def test_a_registration_cancelled_by_throttling_or_a_conflict_is_retried_not_called_a_taken_serial(
    ddb: Any, tables: Tables, fault: str
) -> None:
    sleeps: list[float] = []
    registry = faulty_registry(ddb, tables, [fault, fault], sleeps)

    registered = registry.register(SensorProfile(sensor_id=1, name="a", serial="SN-1"))

    assert registered.version == 1
    assert sentinels(ddb, tables) == {"SERIAL#SN-1": 1}
    assert registry.get(1) == registered
    assert len(sleeps) == 2 and all(0 <= s <= 1.0 for s in sleeps)  # backed off before each retry


def test_a_registration_cancelled_every_time_is_busy_and_writes_nothing(ddb: Any, tables: Tables) -> None:
    sleeps: list[float] = []
    registry = faulty_registry(ddb, tables, [], sleeps, then="cancel:ThrottlingError@1")

    with pytest.raises(RegistryBusy, match=r"none of 4 attempts committed.*ThrottlingError.*nothing was written, try"):
        registry.register(SensorProfile(sensor_id=1, name="a", serial="SN-1"))

    assert registry.get(1) is None and sentinels(ddb, tables) == {}
    assert len(sleeps) == 3  # between the four attempts, none after the last


def test_an_update_or_delete_cancelled_every_time_is_busy_not_a_version_conflict(ddb: Any, tables: Tables) -> None:
    plain = Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb)
    plain.register(SensorProfile(sensor_id=1, name="a", serial="SN-1"))
    registry = faulty_registry(ddb, tables, [], [], then="cancel:TransactionConflict@1")

    with pytest.raises(RegistryBusy, match=r"updating sensor 1: .*TransactionConflict.*nothing was written"):
        registry.update(1, lambda p: replace(p, serial="SN-2"))
    with pytest.raises(RegistryBusy, match=r"deleting sensor 1: .*TransactionConflict.*nothing was written"):
        registry.delete(1)

    assert plain.get(1) == SensorProfile(sensor_id=1, name="a", serial="SN-1", version=1, registered_at=ANY)
    assert sentinels(ddb, tables) == {"SERIAL#SN-1": 1}


def test_a_profile_whose_sentinel_is_missing_moves_to_a_new_serial_and_is_deleted(
    ddb: Any, tables: Tables, registry: Registry
) -> None:
    # Given a profile whose sentinel is gone (a restore of the digest table alone, a hand-made delete)
    registry.register(SensorProfile(sensor_id=1, name="a", serial="SN-1"))
    registry.register(SensorProfile(sensor_id=2, name="b", serial="SN-9"))
    set_sentinel(ddb, tables, "SN-1", None)
    set_sentinel(ddb, tables, "SN-9", None)
    counted = FaultyClient(inner=ddb, rule=lambda operation, kwargs: None)
    registry = Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=counted)

    moved = registry.update(1, lambda p: replace(p, serial="SN-2"))
    deleted = registry.delete(2)

    assert (moved.serial, moved.version) == ("SN-2", 2)
    assert deleted.serial == "SN-9" and registry.get(2) is None
    assert sentinels(ddb, tables) == {"SERIAL#SN-2": 1}
    assert counted.calls["transact_write_items"] == 2  # each in one transaction: no lost race to retry


def test_a_serial_whose_sentinel_names_another_sensor_is_said_so_and_the_profile_alone_can_go(
    ddb: Any, tables: Tables, registry: Registry
) -> None:
    # Given sensor 1's serial A whose sentinel names sensor 2 (a restore that mixed two states,
    # or a sentinel deleted by hand that let sensor 2 register the same serial)
    registry.register(SensorProfile(sensor_id=1, name="a", serial="A"))
    set_sentinel(ddb, tables, "A", 2)
    counted = FaultyClient(inner=ddb, rule=lambda operation, kwargs: None)
    registry = Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=counted)
    said = re.escape("sensor 1's serial 'A' has a sentinel in the ledger (SERIAL#A) that names sensor 2, not sensor 1")

    # an update is refused and changes nothing, told at once (not retried into a VersionConflict)
    with pytest.raises(SerialHeldElsewhere, match=f"{said}; nothing was changed"):
        registry.update(1, lambda p: replace(p, serial="B"))
    assert registry.get(1) == SensorProfile(sensor_id=1, name="a", serial="A", version=1, registered_at=ANY)
    assert counted.calls["transact_write_items"] == 1

    # a delete takes the profile alone: the sentinel stays sensor 2's, and the caller is told
    deleted = registry.delete(1)

    assert (deleted.serial, deleted.serial_freed, deleted.held_by) == ("A", False, 2)
    assert registry.get(1) is None
    assert sentinels(ddb, tables) == {"SERIAL#A": 2}
    assert counted.calls["transact_write_items"] == 3  # the refused one, then the profile alone


def test_a_sentinel_left_by_the_same_sensor_does_not_refuse_its_registration(
    ddb: Any, tables: Tables, registry: Registry
) -> None:
    # Given a sentinel without its profile that names the very sensor being registered
    set_sentinel(ddb, tables, "SN-5", 5)

    registered = registry.register(SensorProfile(sensor_id=5, name="back", serial="SN-5"))

    assert registry.get(5) == registered
    with pytest.raises(SerialTaken, match="serial 'SN-5' already belongs to another sensor"):
        registry.register(SensorProfile(sensor_id=6, name="other", serial="SN-5"))
    assert_no_orphan_sentinel(ddb, tables, registry)
