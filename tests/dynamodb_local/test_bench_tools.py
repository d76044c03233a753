"""The benchmark's instruments: the latency model, the request meter, the backlog event source, and
the silence benchmark's three ways of checking one fleet; and its command, run at its smallest.

Engine: DynamoDB Local (the meter reads what the engine reports; the latency model's delay is
measured around real requests). A wrong instrument would print wrong figures in docs/benchmarks.md.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from bench.__main__ import main as bench_main
from bench.esm import drain, drain_fifo, fifo_records
from bench.silence import DAYS_AGO, REGISTERED, day_item, put_all, summary_items, timed_check
from bench.sweep import batch_fill, batch_lag, interpolate
from sensor_digest.registry import SensorProfile
from sensor_digest.store import schema
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.instruments.conflicts import ConflictEmulator
from sensor_digest_tools.instruments.latency import LatencyModel
from sensor_digest_tools.instruments.metering import RequestMeter
from sensor_digest_tools.lambda_runtime.events import QueuedMessage
from tests.support.tables import Tables


def test_the_latency_model_delays_each_request_by_its_kind_and_items(session: LocalSession, tables: Tables) -> None:
    # Given the model, its delays recorded instead of slept (no test here rests on a clock)
    slept: list[float] = []
    model = LatencyModel(
        per_request_ms={"PutItem": 40.0, "TransactWriteItems": 60.0},
        per_item_ms={"TransactWriteItems": 10.0},
        sleep=slept.append,
    )
    model.install(session)
    client = session.client("dynamodb")

    # When a single write and a transaction of three items are sent
    client.put_item(TableName=tables.table, Item=schema.day_item(1, "2024-05-01", 1))
    client.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": tables.table, "Item": schema.day_item(s, "2024-05-01", 1)}} for s in (2, 3, 4)
        ]
    )

    # Then each paid its kind's delay, the transaction a share per item, once per request
    assert slept == pytest.approx([0.040, 0.060 + 3 * 0.010])
    assert model.added_seconds == pytest.approx(0.130)


def test_a_conflicted_transaction_pays_its_round_trip_and_the_winner_holds_its_items_meanwhile(
    session: LocalSession, tables: Tables
) -> None:
    # Given the conflict emulator, then the latency model, on one session; the first writer's
    # modeled delay lasts until the test releases it
    conflicts = ConflictEmulator()
    conflicts.install(session)
    entered, release = threading.Event(), threading.Event()
    slept: list[tuple[str, float]] = []

    def sleep(seconds: float) -> None:
        slept.append((threading.current_thread().name, seconds))
        if threading.current_thread().name == "first":
            entered.set()
            release.wait(30)

    model = LatencyModel(per_request_ms={"TransactWriteItems": 300.0}, per_item_ms={}, sleep=sleep)
    model.install(session)
    client = session.client("dynamodb")
    item = {"Put": {"TableName": tables.table, "Item": schema.day_item(1, "2024-05-01", 1)}}
    outcomes: list[str] = []

    def write() -> None:
        try:
            client.transact_write_items(TransactItems=[item])
            outcomes.append("committed")
        except client.exceptions.TransactionCanceledException:
            outcomes.append("cancelled")

    # When a second transaction on the item is sent while the first is inside its modeled delay
    first = threading.Thread(target=write, name="first")
    first.start()
    assert entered.wait(30)
    write()
    release.set()
    first.join()

    # Then the second is cancelled (the delay lies inside the winner's window) and still paid a round trip
    assert outcomes == ["cancelled", "committed"]
    assert conflicts.conflicts == 1
    assert [s for name, s in slept if name != "first"] == [0.3]


def test_the_meter_takes_the_engines_units_for_single_writes_and_computes_transactions(
    session: LocalSession, tables: Tables
) -> None:
    meter = RequestMeter()
    meter.install(session)
    client = session.client("dynamodb")
    big = {**schema.day_item(1, "2024-05-01", 1), "Pad": {"S": "x" * 2500}}  # 3 KB: 3 units

    client.put_item(TableName=tables.table, Item=big)
    after_put = meter.snapshot()[1]
    client.update_item(  # the update's own values are tiny; DynamoDB charges the whole item: 3 units
        TableName=tables.table,
        Key=schema.day_key(1, "2024-05-01"),
        UpdateExpression="ADD #c :n",
        ExpressionAttributeNames={"#c": schema.DATA_COUNT},
        ExpressionAttributeValues={":n": {"N": "1"}},
    )
    after_update = meter.snapshot()[1]
    client.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": tables.table, "Item": schema.day_item(s, "2024-05-01", 1)}} for s in (2, 3)
        ]
    )

    assert after_put == 3
    assert after_update - after_put == 3
    assert meter.snapshot() == (3, 3 + 3 + 2 * 2)  # a transaction: two units per item of under 1 KB


def test_the_meter_puts_each_cancelled_transaction_down_to_its_cause(session: LocalSession, tables: Tables) -> None:
    meter = RequestMeter()
    meter.install(session)
    client = session.client("dynamodb")
    marker = {
        "Put": {
            "TableName": tables.ledger,
            "Item": schema.ledger_key("MSG#1#a"),
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }
    update = {
        "Update": {
            "TableName": tables.table,
            "Key": schema.day_key(1, "2024-05-01"),
            "UpdateExpression": "ADD #c :n",
            "ConditionExpression": "attribute_exists(#c)",
            "ExpressionAttributeNames": {"#c": schema.DATA_COUNT},
            "ExpressionAttributeValues": {":n": {"N": "1"}},
        }
    }
    client.put_item(TableName=tables.ledger, Item=schema.ledger_key("MSG#1#a"))

    for actions in ([update], [marker]):  # a missing day item; a marker that exists
        with pytest.raises(client.exceptions.TransactionCanceledException):
            client.transact_write_items(TransactItems=actions)

    assert dict(meter.cancelled_units) == {"day item step": 2, "duplicate marker": 2}


def test_the_backlog_driver_keeps_concurrency_and_batch_size_and_requeues_what_is_listed() -> None:
    records = [{"messageId": str(i), "body": "{}"} for i in range(95)]
    lock = threading.Lock()
    running, most, sizes, listed_once = 0, 0, [], set()

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            sizes.append(len(event["Records"]))
        time.sleep(0.02)
        failures = []
        with lock:
            running -= 1
            for r in event["Records"]:
                if int(r["messageId"]) % 10 == 0 and r["messageId"] not in listed_once:
                    listed_once.add(r["messageId"])
                    failures.append({"itemIdentifier": r["messageId"]})
        assert 0 < context.get_remaining_time_in_millis() <= 30_000
        return {"batchItemFailures": failures}

    stats = drain(handler, records, batch_size=10, concurrency=3, timeout_s=30)

    assert most == 3
    assert max(sizes) == 10 and sum(sizes) == 95 + 10
    assert stats.listed == 10 and stats.invocations == len(sizes)


def test_the_window_model_fills_batches_by_rate_and_caps_them_at_the_batch_size() -> None:
    assert batch_fill(1000, 20, 200) == 800  # 200 msg/s for 20 s over 5 pollers
    assert batch_fill(1000, 60, 200) == 1000
    assert batch_lag(1000, 20, 200) == 20
    assert batch_lag(1000, 60, 2000) == 2.5  # the batch fills before the window ends
    curve = [(100, 4.0), (1000, 3.0)]
    assert interpolate(curve, 10) == 4.0 and interpolate(curve, 5000) == 3.0
    assert interpolate(curve, 316.2278) == pytest.approx(3.5, abs=1e-4)


def test_the_fifo_backlog_driver_keeps_each_group_in_order_and_one_batch_per_group_at_a_time() -> None:
    # Given 3 sensors' reports, interleaved; sensor 0's 4th report is listed once (with the tail
    # behind it, as ingest lists), and sensor 1's 2nd report loses its delete once
    messages = [QueuedMessage(body=json.dumps({"sensor_id": i % 3, "event_id": f"e{i}"})) for i in range(30)]
    records = fifo_records(messages)
    by_group: dict[str, list[str]] = {}
    for r in records:
        by_group.setdefault(r["attributes"]["MessageGroupId"], []).append(r["attributes"]["SequenceNumber"])
    listed_at, lost = (
        by_group["0"][3],
        {next(r["messageId"] for r in records if r["attributes"]["SequenceNumber"] == by_group["1"][1])},
    )
    lock = threading.Lock()
    seen: dict[str, list[str]] = {}
    busy: set[str] = set()
    clash, listed_done = [], []

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        groups = {r["attributes"]["MessageGroupId"] for r in event["Records"]}
        with lock:
            clash.extend(groups & busy)
            busy.update(groups)
            for r in event["Records"]:
                seen.setdefault(r["attributes"]["MessageGroupId"], []).append(r["attributes"]["SequenceNumber"])
        time.sleep(0.01)
        failures = []
        numbers = [r["attributes"]["SequenceNumber"] for r in event["Records"]]
        if listed_at in numbers and not listed_done:
            listed_done.append(True)
            tail = [r for r in event["Records"] if r["attributes"]["MessageGroupId"] == "0"][numbers.index(listed_at) :]
            failures = [{"itemIdentifier": r["messageId"]} for r in tail]
        with lock:
            busy.difference_update(groups)
        return {"batchItemFailures": failures}

    stats = drain_fifo(handler, records, lost_deletes=lost, batch_size=10, concurrency=3, timeout_s=30)

    assert clash == []  # never two batches of one group at a time
    for group, numbers in by_group.items():  # each group in order; a repeat only goes back, never skips
        delivered = seen[group]
        assert sorted(set(delivered)) == numbers
        firsts = list(dict.fromkeys(delivered))
        assert firsts == numbers
    assert len(seen["1"]) == 11 and stats.listed > 0


def test_the_silence_benchmark_checks_one_fleet_three_ways_and_the_summaries_cut_the_requests(
    ddb_endpoint: str, ddb: Any, tables: Tables
) -> None:
    # Given 150 sensors silent for days, seeded as the benchmark seeds them (day items and summaries)
    days = [day_item(s, DAYS_AGO) for s in range(150)]
    profiles = [
        SensorProfile(s, f"s{s}", f"S{s}", silence_hours=6, registered_at=REGISTERED).item() for s in range(150)
    ]
    put_all(ddb, tables.table, profiles + days + summary_items(days), workers=4)

    # When it checks them as before, with threads only, and as now
    before, threads, now = (
        timed_check(ddb_endpoint, tables.table, workers, modeled=False, summaries=summaries)
        for workers, summaries in ((1, False), (16, False), (16, True))
    )

    # Then every way finds every sensor silent; threads send the same requests, the summaries fewer
    assert before["silent"] == threads["silent"] == now["silent"] == 150
    assert before["requests"] == threads["requests"] == 2 * 4 + 150  # two pages: index, profiles, today, yesterday
    assert now["requests"] == 2 * 7  # and the summaries of both months, and the day items they name
    assert now["read_units"] > before["read_units"]


def test_the_benchmark_command_runs_its_workload_and_records_each_strategys_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the benchmark's command at its smallest: 60 messages of W4 (5% delivered twice), the
    # blog's flow (a) beside SensorDigest exactly-once (c), on this machine's DynamoDB Local as is
    out = tmp_path / "results.json"
    argv = ["--messages", "60", "--workloads", "W4", "--strategies", "a,c", "--modes", "raw"]
    argv += ["--no-sweep", "--no-peer", "--no-concurrency", "--out", str(out)]

    # When it runs
    code = bench_main(argv)

    # Then it records each strategy's row, (c) exact and the blog's flow counting the redeliveries again
    record = json.loads(out.read_text())
    rows = {r["strategy"]: r for r in record["results"]}
    assert len(record["results"]) == 2 and set(rows) == {"a", "c"}
    assert all(r["workload"] == "W4" and r["messages"] == 60 for r in rows.values())
    assert rows["c"]["overcount"] == rows["c"]["undercount"] == 0
    assert rows["a"]["overcount"] > 0
    # and its goals, and it leaves the results page to a whole run
    met = {g["goal"]: g["met"] for g in record["goals"]}
    assert met["(c) exact on every workload"] is True
    printed = capsys.readouterr().out
    assert code == 0 and "W4 hot sensor: 60 messages" in printed
    assert printed.rstrip().endswith("results page left as it is (not a whole run)")
