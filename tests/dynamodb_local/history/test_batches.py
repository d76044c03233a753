"""The deployed import's functions (``functions/import_/handler.py``: prepare, batch, finish) in the
Distributed Map's event shapes (ItemReader + ItemBatcher: ``{"Items": [...], "BatchInput": {...}}``),
run by hand as the state machine runs them (``tests/support/distributed_map.py``). Engines: DynamoDB
Local for every count; moto's S3 for the objects and the reports."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from import_ import handler as entry_points
from moto import mock_aws

from sensor_digest.config import ImportSettings
from sensor_digest.history import service as batches_module
from sensor_digest.history.service import Batch, build_service
from sensor_digest.store.identities import IMPORT_DAY_IDS
from sensor_digest_tools.local.history import write_history
from tests.support import distributed_map
from tests.support.faults import FaultySession
from tests.support.granted import CALLS, Recorder, granted
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


def run(data: bytes, key: str, *, size: int = 100, again: bool = False) -> dict[str, Any]:
    started = {"bucket": BUCKET, "key": key, **({"again": True} if again else {})}
    steps = (entry_points.prepare, entry_points.handler, entry_points.finish)
    return distributed_map.run(*steps, data, started, size=size, context=FakeContext())


def put(s3: Any, key: str, data: bytes) -> bytes:
    s3.put_object(Bucket=BUCKET, Key=key, Body=data)
    return data


def report(s3: Any, url: str) -> list[dict[str, Any]]:
    key = url.removeprefix(f"s3://{BUCKET}/")
    return [json.loads(line) for line in s3.get_object(Bucket=BUCKET, Key=key)["Body"].read().splitlines()]


def poisoned(tmp_path: Path, fmt: str) -> tuple[bytes, Any]:
    """A history with rows the import rejects, each still a JSON value (a line that is not JSON stops the
    Map's reader: see ``test_an_object_with_a_line_that_is_not_json_is_refused_whole``), and a blank line."""
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
    s3: Any, ddb: Any, tables: Tables, tmp_path: Path, fmt: str
) -> None:
    data, truth = poisoned(tmp_path, fmt)
    put(s3, f"inputs/history.{fmt}", data)

    done = run(data, f"inputs/history.{fmt}")

    assert day_counts(ddb, tables.table) == dict(truth.counts)
    assert done["figures"]["counted"] == truth.valid and done["figures"]["rejected"] == 2
    lines = data.decode().splitlines()
    rejected = report(s3, done["rejected"])
    assert [lines[r["line"] - 1] for r in rejected] == [lines[100], lines[200]]  # the lines they are on


def test_a_batch_that_fails_after_its_writes_committed_counts_once_when_the_map_tries_it_again(
    s3: Any, ddb: Any, tables: Tables, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "h.jsonl"
    truth = write_history(path, sensors=2, days=3, per_day=90)
    data = put(s3, "inputs/h.jsonl", path.read_bytes())
    failures = {"left": 2}
    put_json = batches_module.objects.put_json

    def fail_twice(*args: Any) -> None:  # the batch's report is written after its counts: they committed
        if failures["left"]:
            failures["left"] -= 1
            raise ConnectionError("the function died after its writes")
        put_json(*args)

    monkeypatch.setattr(batches_module.objects, "put_json", fail_twice)

    done = run(data, "inputs/h.jsonl")

    assert day_counts(ddb, tables.table) == dict(truth.counts)
    figures = done["figures"]
    assert figures["counted"] + figures["already"] == truth.valid and figures["already"] > 0


def test_a_second_import_of_the_object_counts_nothing_and_one_asked_again_reads_only(
    s3: Any, ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    path = tmp_path / "h.csv"
    truth = write_history(path, sensors=2, days=2, per_day=120, fmt="csv")
    data = put(s3, "inputs/h.csv", path.read_bytes())
    run(data, "inputs/h.csv")

    second = run(data, "inputs/h.csv")
    asked_again = run(data, "inputs/h.csv", again=True)

    assert second["action"] == "skip" and second["figures"]["counted"] == truth.valid
    assert asked_again["figures"]["counted"] == 0 and asked_again["figures"]["writes"] == 0
    assert asked_again["figures"]["already"] == truth.valid
    assert day_counts(ddb, tables.table) == dict(truth.counts)


def test_another_version_of_the_key_is_another_object(s3: Any, ddb: Any, tables: Tables) -> None:
    row = b'{"sensor_id": 1, "timestamp": "2020-02-02T02:02:02Z"}\n'
    run(put(s3, "inputs/daily.jsonl", row), "inputs/daily.jsonl")

    run(put(s3, "inputs/daily.jsonl", row + row), "inputs/daily.jsonl")  # uploaded again: a new version

    assert day_counts(ddb, tables.table) == {(1, "2020-02-02"): 3}


def test_an_object_with_a_line_that_is_not_json_is_refused_whole(s3: Any, ddb: Any, tables: Tables) -> None:
    data = b'{"sensor_id": 1, "timestamp": "2020-02-02T02:02:02Z"}\n{"sensor_id": 1, oops\n'
    put(s3, "inputs/broken.jsonl", data)

    refused = run(data, "inputs/broken.jsonl")

    assert refused["action"] == "refuse" and "line 2" in refused["reason"]
    assert day_counts(ddb, tables.table) == {}  # nothing counted
    assert [r["line"] for r in report(s3, f"s3://{BUCKET}/{refused['refused']}")] == [2]


def test_a_csv_object_without_the_required_columns_is_refused(s3: Any) -> None:
    put(s3, "inputs/x.csv", b"id,time\n1,2020-01-01\n")

    with pytest.raises(Exception, match="must name sensor_id and timestamp"):
        entry_points.prepare({"bucket": BUCKET, "key": "inputs/x.csv"}, FakeContext())


@pytest.mark.parametrize(
    "event",
    [
        {},
        {"Items": [], "BatchInput": {}},
        {"Items": [{"position": 0, "row": {}}], "BatchInput": {"object_id": "zz", "format": "jsonl"}},
        {"Items": [{"position": -1, "row": {}}], "BatchInput": {"object_id": "0" * 32, "format": "jsonl"}},
        {"Items": [{"row": {}}], "BatchInput": {"object_id": "0" * 32, "format": "xml", "reports": {}}},
    ],
)
def test_a_batch_event_the_state_machine_never_sends_is_refused(event: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"batch|item|object|reports"):
        Batch.of(event)


@pytest.fixture(scope="module")
def template() -> Any:
    """The stack with the import, as app.py synthesizes it."""
    return synth(importEnabled="true")[1]


def test_every_dynamodb_action_the_batch_function_sends_is_granted_to_its_role(
    template: Any, s3: Any, ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    # Given the batch function as Lambda builds it, every DynamoDB call recorded, its first update throttled
    recorder, throttled = Recorder(), {"n": 0}

    def record(operation: str, kwargs: dict[str, Any]) -> str | None:
        recorder(operation, kwargs)
        if operation == "update_item" and not throttled["n"]:
            throttled["n"] += 1
            return "throttle"  # the write is tried again, the day read first (GetItem)
        return None

    session = FaultySession(boto3.Session(region_name="us-east-1"), record, operations=CALLS)
    service = build_service(ImportSettings.from_env(), session)
    path = tmp_path / "h.jsonl"
    truth = write_history(path, sensors=2, days=2, per_day=IMPORT_DAY_IDS + 20, order="time")
    data = put(s3, "inputs/h.jsonl", path.read_bytes())
    prepared = entry_points.prepare({"bucket": BUCKET, "key": "inputs/h.jsonl"}, FakeContext())

    # When every batch runs, and runs again (the Map's retry): lookups, pins, pages in transactions
    for event in distributed_map.batch_events(prepared, distributed_map.items_of(data, "jsonl"), size=100):
        service.handle_event(event)
        service.handle_event(event)

    # Then the counts are exact, the paths were taken, and every action is one the role is granted
    assert day_counts(ddb, tables.table) == dict(truth.counts)
    ledger = {str(i["pk"]["S"]).split("#")[0] for i in scan_all(ddb, tables.ledger)}
    assert {"IMPIDS", "IMPZONE"} <= ledger and ("dynamodb:GetItem", tables.table) in recorder.used
    assert recorder.used - granted(template, tables, "import_.handler.handler") == set()
