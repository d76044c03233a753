"""A migration's cut-over on DynamoDB Local: live reports and imported rows of the same sensor and
``event_id`` on one sensor-day count once, whichever came first, on a standard queue and on a FIFO
queue; where the live ledger no longer knows a day's live reports (ordered mode keeps none; its pages
expired), a row naming an ``event_id`` there is refused with the reason, or counted when the operator
says so (``Overlap.COUNT``); a day without imported rows pays nothing (moto's SQS for dead letters)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sensor_digest.history.counter import Overlap
from sensor_digest.store import schema
from sensor_digest_tools.lambda_runtime.events import QueuedMessage
from sensor_digest_tools.local.history import write_history
from tests.support.fifo import Sequencer, fifo_handler
from tests.support.history import file_import
from tests.support.messages import FakeContext, sqs_event
from tests.support.sqs import DeadLetters
from tests.support.tables import Tables, day_counts, scan_all


def bodies(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def counts_of(rows: list[dict[str, Any]]) -> Counter[tuple[int, str]]:
    out: Counter[tuple[int, str]] = Counter()
    for row in rows:
        out[(row["sensor_id"], row["timestamp"][:10])] += row["count"]
    return out


@pytest.fixture
def export(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """An old service's export: 2 sensors x 2 days x 60 reports, each with its event_id."""
    path = tmp_path / "export.jsonl"
    write_history(path, sensors=2, days=2, per_day=60, order="time")
    return path, bodies(path)


def overlap(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The reports the live pipeline received too (every other one of the export), and live reports the
    export does not hold."""
    both = rows[::2]
    live_only = [{**r, "event_id": f"live-{i}", "count": 1} for i, r in enumerate(rows[1::10])]
    return both, live_only


def send_standard(handler: Any, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), 25):
        batch = [QueuedMessage(body=json.dumps(r)) for r in rows[start : start + 25]]
        assert handler(sqs_event(batch), FakeContext())["batchItemFailures"] == []


def send_fifo(handler: Any, rows: list[dict[str, Any]], seq: Sequencer) -> None:
    for start in range(0, len(rows), 10):
        batch = []
        for row in rows[start : start + 10]:
            message = seq.message(row["sensor_id"])
            batch.append(QueuedMessage(**{**message.__dict__, "body": json.dumps(row)}))
        assert handler(sqs_event(batch), FakeContext())["batchItemFailures"] == []


def test_import_first_then_live_reports_that_repeat_rows_count_once_on_a_standard_queue(
    ddb: Any, tables: Tables, tmp_path: Path, ingest_handler: Any, export: tuple[Path, list[dict[str, Any]]]
) -> None:
    path, rows = export
    both, live_only = overlap(rows)
    file_import(ddb, tables).run(path, "jsonl", tmp_path / "r.jsonl")

    send_standard(ingest_handler, both + live_only)
    send_standard(ingest_handler, both)  # and the producer resends them

    assert day_counts(ddb, tables.table) == dict(counts_of(rows) + counts_of(live_only))


def test_live_first_then_the_import_counts_only_the_rows_the_pipeline_never_received(
    ddb: Any, tables: Tables, tmp_path: Path, ingest_handler: Any, export: tuple[Path, list[dict[str, Any]]]
) -> None:
    path, rows = export
    both, live_only = overlap(rows)
    send_standard(ingest_handler, both + live_only)  # past 40 a day: the live ledger's pages too

    done = file_import(ddb, tables).run(path, "jsonl", tmp_path / "r.jsonl")
    again = file_import(ddb, tables).run(path, "jsonl", tmp_path / "r.jsonl", again=True)

    assert day_counts(ddb, tables.table) == dict(counts_of(rows) + counts_of(live_only))
    assert done.figures.already == len(both) and done.figures.counted == len(rows) - len(both)
    assert done.figures.rejected == 0 and again.figures.writes == 0 and again.figures.already == len(rows)


def test_an_import_and_live_ingest_at_once_on_the_same_reports_count_each_once(
    ddb: Any, tables: Tables, tmp_path: Path, ingest_handler: Any, export: tuple[Path, list[dict[str, Any]]]
) -> None:
    path, rows = export
    both, live_only = overlap(rows)
    sender = threading.Thread(target=send_standard, args=(ingest_handler, both + live_only))

    sender.start()
    file_import(ddb, tables, chunk_rows=20).run(path, "jsonl", tmp_path / "r.jsonl")
    sender.join()
    send_standard(ingest_handler, both)  # once more, after both

    assert day_counts(ddb, tables.table) == dict(counts_of(rows) + counts_of(live_only))


def test_import_first_then_live_reports_that_repeat_rows_count_once_on_a_fifo_queue(
    ddb: Any, tables: Tables, tmp_path: Path, session: Any, fifo_dlq: DeadLetters, export: Any
) -> None:
    path, rows = export
    both, live_only = overlap(rows)
    handler, seq = fifo_handler(tables, session, fifo_dlq.url), Sequencer()
    file_import(ddb, tables).run(path, "jsonl", tmp_path / "r.jsonl")

    send_fifo(handler, both + live_only, seq)
    send_fifo(handler, both, seq)  # resent by the producer: new sequence numbers, the same event_ids

    assert day_counts(ddb, tables.table) == dict(counts_of(rows) + counts_of(live_only))


def test_live_first_in_ordered_mode_the_import_refuses_rows_naming_an_event_id_on_days_with_live_reports(
    ddb: Any, tables: Tables, tmp_path: Path, session: Any, fifo_dlq: DeadLetters, export: Any
) -> None:
    # Given live reports of ordered mode (which keep no identity) on the days of sensor 1, none of sensor 2
    path, rows = export
    live = [r for r in rows[::2] if r["sensor_id"] == 1]
    send_fifo(fifo_handler(tables, session, fifo_dlq.url), live, Sequencer())

    done = file_import(ddb, tables).run(path, "jsonl", tmp_path / "r.jsonl")

    # Then sensor 1's rows are refused with the reason, never counted twice; sensor 2's are counted
    refused = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert done.figures.rejected == len(refused) == sum(1 for r in rows if r["sensor_id"] == 1)
    assert done.figures.overlap_refused == done.figures.rejected
    assert all("live reports that the pipeline no longer knows all of" in r["reason"] for r in refused)
    assert "--overlap count" in refused[0]["reason"]
    sensor_two = {k: v for k, v in counts_of(rows).items() if k[0] == 2}
    assert day_counts(ddb, tables.table) == dict(counts_of(live) + Counter(sensor_two))

    # When the operator says the live pipeline never received them, they count
    counted = file_import(ddb, tables, overlap=Overlap.COUNT).run(path, "jsonl", tmp_path / "r.jsonl", again=True)
    assert counted.figures.counted == done.figures.rejected
    assert day_counts(ddb, tables.table) == dict(counts_of(live) + counts_of(rows))


def test_after_the_live_ledgers_pages_expired_only_rows_it_cannot_rule_out_are_refused(
    ddb: Any, tables: Tables, tmp_path: Path, ingest_handler: Any
) -> None:
    # Given 50 live reports a day, past the day item's own 40 hashes: the rest in the live ledger's pages
    path = tmp_path / "export.jsonl"
    write_history(path, sensors=2, days=2, per_day=100, order="time")
    rows = bodies(path)
    both, _ = overlap(rows)
    send_standard(ingest_handler, both)
    for item in scan_all(ddb, tables.ledger):  # the live ledger's pages and markers, expired (TTL)
        ddb.delete_item(TableName=tables.ledger, Key={"pk": item["pk"]})

    done = file_import(ddb, tables).run(path, "jsonl", tmp_path / "r.jsonl")

    # the reports in the day items' own 40 hashes are known; the others' pages are gone
    per_day = Counter((r["sensor_id"], r["timestamp"][:10]) for r in both)
    known = sum(min(40, n) for n in per_day.values())
    assert done.figures.already == known and done.figures.counted == 0
    assert done.figures.rejected == len(rows) - known
    assert day_counts(ddb, tables.table) == dict(counts_of(both))  # nothing counted twice


def test_a_live_write_on_a_day_without_imported_rows_stores_nothing_of_the_import(
    ddb: Any, tables: Tables, ingest_handler: Any
) -> None:
    rows = [{"sensor_id": 5, "timestamp": "2024-05-01T10:00:00Z", "event_id": f"e{i}", "count": 1} for i in range(3)]
    send_standard(ingest_handler, rows)

    (item,) = scan_all(ddb, tables.table)
    assert not {schema.IMPORT_SEQ, schema.IMPORT_IDS, schema.IMPORT_PAGES} & set(item)
