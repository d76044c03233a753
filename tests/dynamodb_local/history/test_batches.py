"""The deployed import's functions (``functions/history/handler.py``: prepare, read, count, finish) in
its two Distributed Maps' item shapes, run by hand as the state machine runs them
(``tests/support/distributed_map.py``). Engines: DynamoDB Local for every count; moto's S3 for the
objects, the run's partitions and the reports."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import boto3
import pytest
from history import handler as entry_points
from moto import mock_aws

from sensor_digest.config import ImportSettings
from sensor_digest.errors import UnreadableInput
from sensor_digest.history import service as map_steps
from sensor_digest.history.service import Prepared, build_count, build_read
from sensor_digest.store.identities import IMPORT_DAY_IDS
from sensor_digest_tools.local.history import write_history
from tests.support import distributed_map
from tests.support.faults import FaultySession
from tests.support.granted import CALLS, Recorder, granted
from tests.support.history import file_import
from tests.support.messages import FakeContext
from tests.support.sqs import PASSTHROUGH
from tests.support.tables import Tables, day_counts, scan_all
from tests.support.templates import synth

BUCKET = "history-imports"


@pytest.fixture
def s3(tables: Tables, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """moto's S3 (a versioned bucket, as the stack's) while DynamoDB calls pass through to DynamoDB
    Local; the import's functions configured by environment, as Lambda configures them."""
    with mock_aws(config=PASSTHROUGH):  # type: ignore[arg-type]
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        client.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        monkeypatch.setenv("TABLE_NAME", tables.table)
        monkeypatch.setenv("LEDGER_TABLE_NAME", tables.ledger)
        monkeypatch.setenv("IMPORT_BUCKET", BUCKET)
        yield client


STEPS = (entry_points.prepare, entry_points.read, entry_points.count, entry_points.finish)


def run(s3: Any, key: str, *, again: bool = False, run_name: str = "run-1", **given: Any) -> dict[str, Any]:
    started = {"bucket": BUCKET, "key": key, "run": run_name, **({"again": True} if again else {}), **given}
    return distributed_map.run(s3, STEPS, started, context=FakeContext())


def put(s3: Any, key: str, data: bytes) -> bytes:
    s3.put_object(Bucket=BUCKET, Key=key, Body=data)
    return data


def report(s3: Any, url: str) -> list[dict[str, Any]]:
    key = url.removeprefix(f"s3://{BUCKET}/")
    return [json.loads(line) for line in s3.get_object(Bucket=BUCKET, Key=key)["Body"].read().splitlines()]


def poisoned(tmp_path: Path, fmt: str) -> tuple[bytes, Any]:
    """A history with rows the import rejects, and a blank line."""
    path = tmp_path / f"history.{fmt}"
    truth = write_history(path, sensors=3, days=2, per_day=70, fmt=fmt, order="time")
    lines = path.read_bytes().splitlines(keepends=True)
    if fmt == "csv":
        bad = [b"3,,1,no-time\n", b"seven,2024-01-01T00:00:00Z,1,x\n"]
    else:
        bad = [b'{"sensor_id": 3, "count": 1}\n', b'{"sensor_id": "seven", "timestamp": "2024-01-01"}\n']
    lines[100:100] = [bad[0], b"\n"]
    lines[200:200] = [bad[1]]
    return b"".join(lines), truth


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_an_object_imported_by_the_state_machine_counts_exactly_with_its_rejected_rows_by_line(
    s3: Any, ddb: Any, tables: Tables, tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given chunks of 64 rows: the object is read by many items of the read map
    monkeypatch.setattr("sensor_digest.history.steps.CHUNK_ROWS", 64)
    data, truth = poisoned(tmp_path, fmt)
    put(s3, f"inputs/history.{fmt}", data)

    done = run(s3, f"inputs/history.{fmt}")

    assert len(distributed_map.chunks(s3, done["prepared"])) > 3
    assert day_counts(ddb, tables.table) == dict(truth.counts)
    assert done["figures"]["counted"] == truth.valid and done["figures"]["rejected"] == 2
    lines = data.decode().splitlines()
    rejected = report(s3, done["rejected"])
    assert [lines[r["line"] - 1] for r in rejected] == [lines[100], lines[200]]  # the lines they are on


def test_a_step_that_fails_after_its_writes_committed_counts_once_when_the_map_tries_it_again(
    s3: Any, ddb: Any, tables: Tables, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "h.jsonl"
    truth = write_history(path, sensors=2, days=3, per_day=90)
    put(s3, "inputs/h.jsonl", path.read_bytes())
    failures = {"left": 2}
    put_json = map_steps.objects.put_json

    def fail_twice(client: Any, bucket: str, key: str, value: Any) -> None:  # after the partition's counts
        if "/count/" in key and failures["left"]:
            failures["left"] -= 1
            raise ConnectionError("the function died after its writes")
        put_json(client, bucket, key, value)

    monkeypatch.setattr(map_steps.objects, "put_json", fail_twice)

    done = run(s3, "inputs/h.jsonl")

    assert day_counts(ddb, tables.table) == dict(truth.counts)
    figures = done["figures"]
    assert failures["left"] == 0 and figures["counted"] + figures["already"] == truth.valid
    assert figures["already"] == truth.valid  # the third try found every row counted by the first


def test_a_second_import_of_the_object_counts_nothing_and_one_asked_again_reads_only(
    s3: Any, ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    path = tmp_path / "h.csv"
    truth = write_history(path, sensors=2, days=2, per_day=120, fmt="csv")
    put(s3, "inputs/h.csv", path.read_bytes())
    run(s3, "inputs/h.csv")

    second = run(s3, "inputs/h.csv", run_name="run-2")
    asked_again = run(s3, "inputs/h.csv", again=True, run_name="run-3")

    assert second["action"] == "skip" and second["figures"]["counted"] == truth.valid
    assert asked_again["figures"]["counted"] == 0 and asked_again["figures"]["writes"] == 0
    assert asked_again["figures"]["already"] == truth.valid
    assert day_counts(ddb, tables.table) == dict(truth.counts)


def test_an_object_is_its_content_under_any_key_or_version(s3: Any, ddb: Any, tables: Tables) -> None:
    # Given rows without event_id: known by their object and line
    rows = b'{"sensor_id": 1, "timestamp": "2020-02-02T02:02:02Z"}\n' * 3
    put(s3, "inputs/daily.jsonl", rows)
    run(s3, "inputs/daily.jsonl")

    put(s3, "inputs/daily.jsonl", rows)  # uploaded again: a new version, the same content
    again = run(s3, "inputs/daily.jsonl", run_name="run-2")
    put(s3, "inputs/renamed/daily-copy.jsonl", rows)  # under another name
    renamed = run(s3, "inputs/renamed/daily-copy.jsonl", run_name="run-3", again=True)
    put(s3, "inputs/daily.jsonl", rows + rows[:55])  # changed: another object
    changed = run(s3, "inputs/daily.jsonl", run_name="run-4")

    assert again["action"] == "skip" and renamed["figures"]["already"] == 3
    assert changed["figures"]["counted"] == 4
    assert day_counts(ddb, tables.table) == {(1, "2020-02-02"): 7}


def test_a_file_imported_here_and_on_aws_counts_each_row_once(
    s3: Any, ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    # Given a file without event_ids imported from a machine, then uploaded under another name and imported
    # by the deployed import (and the other way round for a second file)
    first, second = tmp_path / "export.jsonl", tmp_path / "later.csv"
    truth = write_history(first, sensors=3, days=2, per_day=60, event_ids=False)
    later = write_history(second, sensors=2, days=1, per_day=30, fmt="csv", event_ids=False, first_day=date(2024, 3, 1))
    file_import(ddb, tables).run(first, "jsonl", tmp_path / "r1.jsonl")
    put(s3, "inputs/renamed.jsonl", first.read_bytes())
    put(s3, "inputs/later.csv", second.read_bytes())

    deployed = run(s3, "inputs/renamed.jsonl")
    run(s3, "inputs/later.csv", run_name="run-2")
    here = file_import(ddb, tables).run(second, "csv", tmp_path / "r2.jsonl")

    assert deployed["action"] == "skip"  # its content's record: imported whole already
    assert here.before is not None and here.figures.counted == 0
    expected = truth.counts + later.counts
    assert day_counts(ddb, tables.table) == dict(expected)


def test_a_line_that_is_not_json_and_numbers_json_admits_but_messages_do_not_are_rows_rejected_as_here(
    s3: Any, ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    # Given lines a JSON reader would take (NaN, Infinity, 1e400, a reading past a message's digits) or stop at
    good = b'{"sensor_id": 1, "timestamp": "2020-02-02T02:02:02Z", "readings": {"t": 21.5}}\n'
    hostile = [
        b'{"sensor_id": 1, oops\n',
        b'{"sensor_id": 1, "timestamp": "2020-02-02T03:00:00Z", "readings": {"t": NaN}}\n',
        b'{"sensor_id": 1, "timestamp": "2020-02-02T03:00:00Z", "readings": {"t": Infinity}}\n',
        b'{"sensor_id": 1, "timestamp": "2020-02-02T03:00:00Z", "readings": {"t": 1e400}}\n',
        b'{"sensor_id": 1, "timestamp": "2020-02-02T03:00:00Z", "readings": {"t": 21.50000000000000000001}}\n',
    ]
    data = good + b"".join(hostile)
    put(s3, "inputs/hostile.jsonl", data)
    (tmp_path / "hostile.jsonl").write_bytes(data)

    deployed = run(s3, "inputs/hostile.jsonl")
    local = file_import(ddb, tables).run(tmp_path / "hostile.jsonl", "jsonl", tmp_path / "r.jsonl", again=True)

    assert deployed["figures"]["counted"] == 1 and deployed["figures"]["rejected"] == 5
    aws_reasons = [(r["line"], r["reason"]) for r in report(s3, deployed["rejected"])]
    here_reasons = [(r["line"], r["reason"]) for r in map(json.loads, (tmp_path / "r.jsonl").read_text().splitlines())]
    assert aws_reasons == here_reasons and [line for line, _ in aws_reasons] == [2, 3, 4, 5, 6]
    assert local.figures.already == 1 and day_counts(ddb, tables.table) == {(1, "2020-02-02"): 1}


def test_a_csv_object_without_the_required_columns_is_refused(s3: Any) -> None:
    put(s3, "inputs/x.csv", b"id,time\n1,2020-01-01\n")

    refused = entry_points.prepare({"bucket": BUCKET, "key": "inputs/x.csv", "run": "r"}, FakeContext())

    assert refused["action"] == "refuse" and "must name sensor_id and timestamp" in refused["reason"]


def test_a_run_whose_partitions_went_missing_does_not_finish(s3: Any, ddb: Any, tables: Tables, tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    write_history(path, sensors=2, days=2, per_day=20)
    put(s3, "inputs/h.jsonl", path.read_bytes())
    prepared = entry_points.prepare({"bucket": BUCKET, "key": "inputs/h.jsonl", "run": "r"}, FakeContext())
    for chunk in distributed_map.chunks(s3, prepared):
        entry_points.read({"chunk": chunk, "prepared": prepared}, FakeContext())
    for item in s3.list_objects_v2(Bucket=BUCKET, Prefix=prepared["run"]["prefix"] + "spill/")["Contents"]:
        s3.delete_object(Bucket=BUCKET, Key=item["Key"])  # expired, or removed by hand
    entry_points.count({"partition": 0, "prepared": prepared}, FakeContext())

    with pytest.raises(Exception, match="account for 0 of the object's 80 rows"):
        entry_points.finish({"prepared": prepared}, FakeContext())


PREPARED = {
    "object": {"bucket": "b", "key": "k", "version": "null"},
    "format": "jsonl",
    "object_id": "0" * 32,
    "partitions": [0],
    "run": {"bucket": "b", "prefix": "p/"},
}


@pytest.mark.parametrize(
    "prepared",
    [
        {},
        {**PREPARED, "object_id": "zz"},
        {**PREPARED, "format": "xml"},
        {**PREPARED, "partitions": []},
        {**PREPARED, "header": ["id"]},
        {**PREPARED, "overlap": "sometimes"},
        {**PREPARED, "run": {"bucket": 1}},
    ],
)
def test_a_map_item_the_state_machine_never_sends_is_refused(prepared: dict[str, Any]) -> None:
    with pytest.raises(UnreadableInput):
        Prepared.of(prepared)


@pytest.fixture(scope="module")
def template() -> Any:
    """The stack with the import, as app.py synthesizes it."""
    return synth(importEnabled="true")[1]


def test_every_dynamodb_action_the_map_steps_send_is_granted_to_their_roles(
    template: Any, s3: Any, ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    # Given the read and count functions as Lambda builds them, every DynamoDB call recorded, the first
    # transaction throttled
    recorder, throttled = Recorder(), {"n": 0}

    def record(operation: str, kwargs: dict[str, Any]) -> str | None:
        recorder(operation, kwargs)
        if operation == "transact_write_items" and not throttled["n"]:
            throttled["n"] += 1
            return "throttle"  # the write is tried again, the day read first (GetItem)
        return None

    session = FaultySession(boto3.Session(region_name="us-east-1"), record, operations=CALLS)
    reader, counter = build_read(ImportSettings.from_env(), session), build_count(ImportSettings.from_env(), session)
    path = tmp_path / "h.jsonl"
    truth = write_history(path, sensors=2, days=2, per_day=IMPORT_DAY_IDS + 20, order="random")
    put(s3, "inputs/h.jsonl", path.read_bytes())
    prepared = entry_points.prepare({"bucket": BUCKET, "key": "inputs/h.jsonl", "run": "r"}, FakeContext())

    # When every item runs, and runs again (the Map's retry): lookups, pins, pages in transactions
    for _ in range(2):
        for chunk in distributed_map.chunks(s3, prepared):
            reader.handle_event({"chunk": chunk, "prepared": prepared})
        for partition in prepared["partitions"]:
            counter.handle_event({"partition": partition, "prepared": prepared})

    # Then the counts are exact, the paths were taken, and every action is one the roles are granted
    assert day_counts(ddb, tables.table) == dict(truth.counts)
    ledger = {str(i["pk"]["S"]).split("#")[0] for i in scan_all(ddb, tables.ledger)}
    assert {"IMPIDS", "IMPZONE"} <= ledger and ("dynamodb:GetItem", tables.table) in recorder.used
    allowed = granted(template, tables, "history.handler.read") | granted(template, tables, "history.handler.count")
    assert recorder.used - allowed == set()
