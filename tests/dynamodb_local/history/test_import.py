"""The history import's counting, through the local import of a file (``ops/history.py`` over
``history/`` and ``counting/history.py``), on DynamoDB Local: exact counts and hours, a re-run that
counts nothing twice and writes nothing, unsorted input past the day item's room for tokens, a killed
import resumed, two imports of one file at once, an import racing live ingest, hostile rows.
Engine: DynamoDB Local (moto's SQS for the live ingest's dead letters)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import replace
from decimal import Context, Decimal, localcontext
from pathlib import Path
from typing import Any

import pytest

from sensor_digest.config import IngestSettings
from sensor_digest.errors import UnreadableInput
from sensor_digest.history.record import Figures
from sensor_digest.profiles import SensorProfile
from sensor_digest.registry import Registry
from sensor_digest.store import schema, tally
from sensor_digest.store.identities import IMPORT_DAY_IDS
from sensor_digest.store.tally import HourStats
from sensor_digest_tools.ops.history import Progress
from tests.support.faults import Crash, FaultyClient
from tests.support.history import assert_matches, file_import, history_file
from tests.support.messages import FakeContext, QueuedMessage, sqs_event
from tests.support.tables import Tables, day_counts, scan_all


def rejected_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_sorted_history_counts_every_report_on_its_day_with_its_hours(
    ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    history, truth = history_file(tmp_path, "fleet.jsonl", sensors=4, days=3, per_day=120, poison=6)

    outcome = file_import(ddb, tables).run(history, "jsonl", tmp_path / "rejected.jsonl")

    assert_matches(ddb, tables, truth)
    assert (outcome.figures.counted, outcome.figures.rejected, outcome.figures.rows) == (truth.valid, 6, truth.rows)
    # one write per sensor-day and chunk: 12 sensor-days over 2 chunks of 1,000 rows
    assert outcome.figures.writes <= 12 + 2
    report = rejected_lines(tmp_path / "rejected.jsonl")
    lines = history.read_text().splitlines()
    assert len(report) == 6
    for entry in report:  # each names the line it is on, and why
        assert json.dumps(lines[entry["line"] - 1]) and lines[entry["line"] - 1] == entry["row"]
        assert entry["reason"]


def test_importing_the_file_again_counts_nothing_twice_and_writes_nothing(
    ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    history, truth = history_file(tmp_path, "fleet.jsonl", sensors=3, days=2, per_day=150, poison=2)
    first = file_import(ddb, tables).run(history, "jsonl", tmp_path / "r1.jsonl")

    again = file_import(ddb, tables).run(history, "jsonl", tmp_path / "r2.jsonl")  # rows were rejected: chunk by chunk

    assert_matches(ddb, tables, truth)
    assert again.before is None and again.figures.counted == 0 and again.figures.writes == 0
    assert again.figures.already == first.figures.counted
    assert again.figures.reads <= again.figures.rows * 0.05  # requests; a request reads up to 100 day items


def test_a_file_imported_whole_is_not_read_again(ddb: Any, tables: Tables, tmp_path: Path) -> None:
    history, truth = history_file(tmp_path, "clean.csv", sensors=2, days=2, per_day=50, fmt="csv")
    file_import(ddb, tables).run(history, "csv", tmp_path / "r.jsonl")

    again = file_import(ddb, tables).run(history, "csv", tmp_path / "r.jsonl")

    assert again.before is not None and again.before.figures.counted == truth.valid
    assert again.figures == Figures()  # nothing done now: the earlier figures are apart
    assert_matches(ddb, tables, truth)


def test_a_csv_history_counts_as_its_json_lines_twin(ddb: Any, tables: Tables, tmp_path: Path) -> None:
    history, truth = history_file(
        tmp_path, "fleet.csv", sensors=3, days=2, per_day=40, fmt="csv", poison=4, order="time"
    )

    outcome = file_import(ddb, tables, chunk_rows=100).run(history, "csv", tmp_path / "r.jsonl")

    assert_matches(ddb, tables, truth)
    assert outcome.figures.rejected == 4


def test_an_unsorted_history_past_the_day_items_room_counts_exactly_and_once(
    ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    # Given rows in no order, read in chunks so small that each sensor-day's rows are in many of them,
    # more rows a day than its day item keeps identities for
    history, truth = history_file(
        tmp_path, "shuffled.jsonl", sensors=2, days=1, per_day=IMPORT_DAY_IDS + 40, order="random"
    )
    importer = file_import(ddb, tables, chunk_rows=4)

    first = importer.run(history, "jsonl", tmp_path / "r.jsonl")
    rerun = importer.run(history, "jsonl", tmp_path / "r.jsonl", again=True)

    assert_matches(ddb, tables, truth)
    # each sensor-day written once, whatever the order: one page of its identities, none left in the item
    assert first.figures.writes == 2
    days = [i for i in scan_all(ddb, tables.table) if schema.IMPORT_SEQ in i]
    assert len(days) == 2 and all(schema.IMPORT_IDS not in i and len(i[schema.IMPORT_PAGES]["BS"]) == 1 for i in days)
    pages = [i for i in scan_all(ddb, tables.ledger) if str(i["pk"]["S"]).startswith(schema.IMPORT_PAGE_PREFIX)]
    assert len(pages) == 2 and all(schema.EXPIRES_AT not in p for p in pages)  # kept for good
    assert sum(len(p[schema.IDS]["BS"]) for p in pages) == truth.valid  # every row's identity, once
    assert rerun.figures.counted == 0 and rerun.figures.writes == 0


def test_a_killed_import_resumed_counts_every_report_once(ddb: Any, tables: Tables, tmp_path: Path) -> None:
    history, truth = history_file(tmp_path, "fleet.jsonl", sensors=5, days=2, per_day=100, order="time")
    writes = {"n": 0}

    def crash_at_the_eighth_write(operation: str, kwargs: dict[str, Any]) -> str | None:
        writes["n"] += 1
        return "crash" if writes["n"] == 8 else None  # 5 zone pins, then the days

    killed = file_import(FaultyClient(ddb, crash_at_the_eighth_write), tables, chunk_rows=50, workers=1)
    with pytest.raises(Crash):  # the process dies in the middle of the counting phase's writes
        killed.run(history, "jsonl", tmp_path / "r.jsonl")
    assert 0 < sum(day_counts(ddb, tables.table).values()) < sum(truth.counts.values())

    file_import(ddb, tables, chunk_rows=50).run(history, "jsonl", tmp_path / "r.jsonl")

    assert_matches(ddb, tables, truth)


def test_an_import_whose_writes_time_out_after_committing_conflict_and_throttle_counts_each_row_once(
    ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    # Given rows in no order, more a day than the day item keeps (pages, in transactions), and one write
    # call in two failing: its answer lost after it committed, a conflict, or throttling
    history, truth = history_file(
        tmp_path, "shuffled.jsonl", sensors=2, days=2, per_day=IMPORT_DAY_IDS + 30, order="random"
    )
    calls = {"n": 0}
    faults = ("timeout_after", None, "conflict", None, "throttle", None)

    def every_other_write(operation: str, kwargs: dict[str, Any]) -> str | None:
        calls["n"] += 1
        return faults[calls["n"] % len(faults)]

    faulty = FaultyClient(ddb, every_other_write)
    outcome = file_import(faulty, tables, chunk_rows=150, workers=1).run(history, "jsonl", tmp_path / "r.jsonl")

    assert_matches(ddb, tables, truth)
    assert faulty.injected["timeout_after"] > 0 and outcome.figures.counted + outcome.figures.already == truth.valid
    assert outcome.figures.rejected == 0


def test_an_import_stopped_between_chunks_and_run_again_counts_exactly(
    ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    history, truth = history_file(tmp_path, "fleet.jsonl", sensors=3, days=3, per_day=60)
    stop = threading.Event()
    told: list[int] = []

    def stop_after_two_chunks(progress: Progress) -> None:
        told.append(progress.figures.counted)
        if progress.figures.rows >= 200:
            stop.set()

    with pytest.raises(KeyboardInterrupt):
        file_import(ddb, tables, chunk_rows=100).run(
            history, "jsonl", tmp_path / "r.jsonl", on_progress=stop_after_two_chunks, stop=stop
        )
    rest = file_import(ddb, tables, chunk_rows=100).run(history, "jsonl", tmp_path / "r.jsonl")

    assert_matches(ddb, tables, truth)
    # what the stopped run last told as counted is all it counted (the chunk being written when it
    # stopped is told too: a stop said "0 counted so far" of a chunk that had counted)
    assert rest.figures.already == told[-1]


def test_two_imports_of_one_file_at_once_count_it_once(ddb: Any, tables: Tables, tmp_path: Path) -> None:
    history, truth = history_file(tmp_path, "fleet.jsonl", sensors=4, days=2, per_day=80, order="time")
    outcomes: list[Any] = []

    def run(name: str) -> None:
        outcomes.append(file_import(ddb, tables, chunk_rows=40).run(history, "jsonl", tmp_path / f"{name}.jsonl"))

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert_matches(ddb, tables, truth)
    assert sum(o.figures.counted for o in outcomes) == truth.valid  # each report counted by one of them


def test_an_import_racing_live_ingest_adds_up_exactly(
    ddb: Any, tables: Tables, tmp_path: Path, ingest_handler: Any
) -> None:
    # Given live reports of the same sensor-days as the history, each sent twice (a redelivery)
    history, truth = history_file(tmp_path, "fleet.jsonl", sensors=3, days=2, per_day=100, order="time")
    live = Counter[tuple[int, str]]()
    batches = []
    for b in range(6):
        messages = []
        for i in range(20):
            sensor, day = 1 + i % 3, f"2023-01-0{1 + i % 2}"
            body = {"sensor_id": sensor, "timestamp": f"{day}T12:00:00Z", "count": 2, "event_id": f"live-{b}-{i}"}
            messages.append(QueuedMessage(body=json.dumps(body)))
            live[(sensor, day)] += 2
        batches.append(messages)

    def again(messages: list[QueuedMessage], receive: int) -> dict[str, Any]:
        return sqs_event([replace(m, receive_count=receive) for m in messages])

    def ingest_live() -> None:
        for messages in batches:
            ingest_handler(sqs_event(messages), FakeContext())
            ingest_handler(again(messages, 2), FakeContext())  # the same messages again

    sender = threading.Thread(target=ingest_live)
    sender.start()
    file_import(ddb, tables, chunk_rows=30).run(history, "jsonl", tmp_path / "r.jsonl")
    sender.join()
    for messages in batches:  # once more, after both: each live report still counts once
        ingest_handler(again(messages, 3), FakeContext())

    assert_matches(ddb, tables, truth, extra=live)


def test_two_rows_of_one_event_id_in_a_chunk_are_one_report(ddb: Any, tables: Tables, tmp_path: Path) -> None:
    history = tmp_path / "repeats.jsonl"
    row = {"sensor_id": 9, "timestamp": "2022-03-04T05:06:07Z", "count": 4, "event_id": "same"}
    other = {**row, "event_id": "other", "count": 1}
    bare = {k: v for k, v in row.items() if k != "event_id"}  # no event_id: each line is its own report
    history.write_text("\n".join(json.dumps(r) for r in (row, row, other, bare, bare)) + "\n")

    outcome = file_import(ddb, tables).run(history, "jsonl", tmp_path / "r.jsonl")

    assert day_counts(ddb, tables.table) == {(9, "2022-03-04"): 4 + 1 + 4 + 4}
    assert outcome.figures.duplicates == 1


def test_hostile_rows_are_rejected_into_the_report_with_their_line_and_reason(
    ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    good = '{"sensor_id": 1, "timestamp": "2024-01-01T10:00:00Z"}'
    hostile = [
        '{"sensor_id": 1}',  # no timestamp
        "[" * 5000,  # nested too deep
        '{"sensor_id": 1, "timestamp": "2024-01-01T10:00:00Z", "count": 1e400}',
        '{"sensor_id": 1, "timestamp": "2024-01-01T10:00:00Z", "event_id": "\\u0007bell"}',
        "\x1b[31m not json",
        '{"sensor_id": 1, "timestamp": NaN}',
    ]
    history = tmp_path / "hostile.jsonl"
    raw = "\n".join([good, *hostile, good]).encode() + b"\n\xff\xfe not utf-8\n" + b"x" * (1024 * 1024 + 10) + b"\n"
    history.write_bytes(raw)

    outcome = file_import(ddb, tables).run(history, "jsonl", tmp_path / "r.jsonl")

    report = rejected_lines(tmp_path / "r.jsonl")
    assert [r["line"] for r in report] == [*range(2, 2 + len(hostile)), 9, 10]
    assert all(r["reason"] for r in report)
    assert "timestamp is required" in report[0]["reason"] and "UTF-8" in report[-2]["reason"]
    assert outcome.figures.rejected == len(hostile) + 2
    assert day_counts(ddb, tables.table) == {(1, "2024-01-01"): 2}


HOSTILE_CSV = [  # (line, counted or not)
    (b"\xef\xbb\xbfsensor_id,timestamp,count,event_id\r\n", None),  # the header, after a byte order mark
    (b"1,2024-01-01T00:00:00Z,1,a\n", True),
    (b'1,"2024-01-01T01:00:00Z,1,open\n', False),  # a quote left open: before, it swallowed the lines after it
    (b"1,2024-01-01T02:00:00Z,1,b\n", True),
    (b"1,2024-01-01T03:00:00Z,1,c\r\n", True),  # CRLF
    (b"\n", None),
    (b"\r\n", None),
    (b'1,2024-01-01T04:00:00Z,1",stray\n', False),  # a stray quote
    (b"1,2024-01-01T05:00:00Z,1,nul\x00\n", False),  # a NUL: a control character in event_id
    (b'1,"2024-01-01T06:00:00Z",1,"d"\n', True),
    (b"1,2024-01-01T07:00:00Z,1," + b"x" * (1024 * 1024 + 1) + b"\n", False),  # past the longest line
    (b"1,2024-01-01T08:00:00Z,1,\xff\xfe\n", False),  # not UTF-8
    (b"1,2024-01-01T09:00:00Z,1,e", True),  # the last line, without its line break
]
HOSTILE_JSONL = [
    (b'\xef\xbb\xbf{"sensor_id": 2, "timestamp": "2024-01-01T00:00:00Z", "event_id": "a"}\n', True),
    (b'{"sensor_id": 2, "timestamp": "2024-01-01T01:00:00Z", "event_id": "open\n', False),  # a string left open
    (b'{"sensor_id": 2, "timestamp": "2024-01-01T02:00:00Z", "event_id": "b"}\r\n', True),
    (b"   \n", None),
    (b"\n", None),
    (b'{"sensor_id": 2, "timestamp": "2024-01-01T03:00:00Z", "event_id": "c\x00"}\n', False),  # a raw NUL
    (b'{"sensor_id": 2, "timestamp": "2024-01-01T04:00:00Z", "event_id": "' + b"x" * (1024 * 1024) + b'"}\n', False),
    (b'{"sensor_id": 2, "timestamp": "2024-01-01T05:00:00Z", "event_id": "\xff"}\n', False),
    (b'{"sensor_id": 2, "timestamp": "2024-01-01T06:00:00Z", "event_id": "a"}\n', True),  # a's duplicate
    (b'{"sensor_id": 2, "timestamp": "2024-01-01T07:00:00Z"}', True),
]


@pytest.mark.parametrize(("fmt", "lines"), [("csv", HOSTILE_CSV), ("jsonl", HOSTILE_JSONL)])
def test_every_line_of_a_hostile_file_is_in_exactly_one_figure(
    ddb: Any, tables: Tables, tmp_path: Path, fmt: str, lines: list[tuple[bytes, bool | None]]
) -> None:
    path = tmp_path / f"hostile.{fmt}"
    path.write_bytes(b"".join(line for line, _ in lines))

    f = file_import(ddb, tables).run(path, fmt, tmp_path / "r.jsonl").figures

    bad = [n for n, (_, good) in enumerate(lines, start=1) if good is False]
    header = 1 if fmt == "csv" else 0
    assert [r["line"] for r in rejected_lines(tmp_path / "r.jsonl")] == bad and f.rejected == len(bad)
    assert f.counted + f.duplicates == sum(1 for _, good in lines if good)
    assert f.counted + f.already + f.duplicates + f.rejected == f.rows
    assert (f.rows, f.blank) == (len(lines) - header - f.blank, sum(1 for _, g in lines if g is None) - header)
    assert sum(day_counts(ddb, tables.table).values()) == f.counted


def test_a_day_item_that_refuses_the_count_rejects_its_rows_with_the_reason(
    ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    ddb.put_item(TableName=tables.table, Item={**schema.day_key(5, "2024-02-02"), "DataCount": {"S": "by hand"}})
    history = tmp_path / "h.jsonl"
    history.write_text(
        '{"sensor_id": 5, "timestamp": "2024-02-02T01:00:00Z"}\n{"sensor_id": 6, "timestamp": "2024-02-02T01:00:00Z"}\n'
    )

    outcome = file_import(ddb, tables).run(history, "jsonl", tmp_path / "r.jsonl")

    assert [r["line"] for r in rejected_lines(tmp_path / "r.jsonl")] == [1]
    assert outcome.figures.counted == 1 and outcome.figures.rejected == 1


def test_rows_without_readings_count_on_a_day_whose_readings_were_written_by_hand_and_the_others_say_why(
    ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    readings = {schema.READINGS: {"S": "by hand"}, schema.READINGS_COVER: {"N": "3"}}
    day = {**schema.day_key(5, "2024-02-02"), schema.DATA_COUNT: {"N": "3"}, **readings}
    ddb.put_item(TableName=tables.table, Item=day)
    history = tmp_path / "h.jsonl"
    rows = [
        {"sensor_id": 5, "timestamp": "2024-02-02T01:00:00Z", "readings": {"t": 1}},
        {"sensor_id": 5, "timestamp": "2024-02-02T02:00:00Z"},
        {"sensor_id": 5, "timestamp": "2024-02-02T03:00:00Z"},
    ]
    history.write_text("".join(json.dumps(r) + "\n" for r in rows))

    outcome = file_import(ddb, tables).run(history, "jsonl", tmp_path / "r.jsonl")

    (entry,) = rejected_lines(tmp_path / "r.jsonl")
    assert entry["line"] == 1 and "REMOVE Readings, ReadingsCover" in entry["reason"]
    assert outcome.figures.counted == 2 and day_counts(ddb, tables.table) == {(5, "2024-02-02"): 5}


def test_rows_of_a_reading_whose_statistics_would_pass_38_digits_alone_are_refused(
    ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    count, value = 10**20, Decimal("999999999.999999")
    with localcontext(Context(prec=60)):
        total, squares = format(count * value, "f"), format(count * value * value, "f")
    hour = {"L": [{"N": str(count)}, {"N": total}, {"N": str(value)}, {"N": str(value)}]}
    n = {"N": str(count)}
    item = {
        **schema.day_key(5, "2024-02-02"),
        schema.DATA_COUNT: n,
        schema.READINGS_COVER: n,
        schema.HOUR_COUNTS: {"M": {"01": n}},
        schema.READINGS: {"M": {"t": {"M": {"q": {"N": squares}, "01": hour}}}},
    }
    ddb.put_item(TableName=tables.table, Item=item)
    history = tmp_path / "h.jsonl"
    rows = [
        {"sensor_id": 5, "timestamp": "2024-02-02T01:00:00Z", "readings": {"t": 1.5}},
        {"sensor_id": 5, "timestamp": "2024-02-02T01:30:00Z", "readings": {"h": 40}},
        {"sensor_id": 5, "timestamp": "2024-02-02T02:00:00Z"},
    ]
    history.write_text("".join(json.dumps(r) + "\n" for r in rows))

    outcome = file_import(ddb, tables).run(history, "jsonl", tmp_path / "r.jsonl")

    (entry,) = rejected_lines(tmp_path / "r.jsonl")
    assert entry["line"] == 1 and "'t'" in entry["reason"] and "38 digits" in entry["reason"]
    assert "REMOVE Readings, ReadingsCover" in entry["reason"]
    assert outcome.figures.counted == 2 and day_counts(ddb, tables.table) == {(5, "2024-02-02"): count + 2}


@pytest.mark.parametrize(
    ("by_hand", "said"),
    [
        ({schema.IMPORT_SEQ: {"S": "one"}}, "ImportSeq"),
        ({schema.IMPORT_SEQ: {"N": "1"}, schema.IMPORT_PAGES: {"BS": [b"12345678"]}}, "page 3132333435363738"),
    ],
)
def test_a_day_item_whose_import_record_is_not_as_written_rejects_its_rows_with_the_repair(
    ddb: Any, tables: Tables, tmp_path: Path, by_hand: dict[str, Any], said: str
) -> None:
    day = {**schema.day_key(5, "2024-02-02"), schema.DATA_COUNT: {"N": "3"}}
    ddb.put_item(TableName=tables.table, Item={**day, **by_hand})
    history = tmp_path / "h.jsonl"
    history.write_text('{"sensor_id": 5, "timestamp": "2024-02-02T01:00:00Z"}\n')

    outcome = file_import(ddb, tables).run(history, "jsonl", tmp_path / "r.jsonl")

    (entry,) = rejected_lines(tmp_path / "r.jsonl")
    assert said in entry["reason"] and "REMOVE ImportIds, ImportPages, ImportSeq" in entry["reason"]
    assert outcome.figures.rejected == 1 and day_counts(ddb, tables.table) == {(5, "2024-02-02"): 3}


def test_a_day_of_eight_readings_in_every_hour_is_added_in_writes_that_fit(
    ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    # Given a sensor-day whose chunk after the first adds 8 readings to each of 24 hours: more than one
    # update expression holds (DynamoDB refuses one past 4 KB or 300 operators)
    names = [f"r{i}" for i in range(8)]
    lines = ["sensor_id,timestamp," + ",".join(f"readings.{n}" for n in names)]
    for rep in range(2):
        for hour in range(24):
            lines.append(f"4,2023-07-01T{hour:02d}:{10 + rep:02d}:00Z," + ",".join(f"{rep}.{i}" for i in range(8)))
    history = tmp_path / "readings.csv"
    history.write_text("\n".join(lines) + "\n", encoding="utf-8")

    outcome = file_import(ddb, tables, chunk_rows=24).run(history, "csv", tmp_path / "r.jsonl")

    assert (outcome.figures.counted, outcome.figures.rejected) == (48, 0)
    (item,) = [i for i in scan_all(ddb, tables.table) if schema.day_count_of_item(i)]
    kept = tally.readings_of_item(item)
    assert sorted(kept) == names
    assert all(kept[n].hours[f"{h:02d}"].count == 2 for n in names for h in range(24))  # both reports of each hour


def test_rows_of_unregistered_sensors_count_once_they_are_registered(
    ddb: Any, tables: Tables, tmp_path: Path, ingest_settings: IngestSettings
) -> None:
    history = tmp_path / "h.jsonl"
    history.write_text(
        '{"sensor_id": 1, "timestamp": "2024-02-02T23:30:00"}\n{"sensor_id": 2, "timestamp": "2024-02-02T23:30:00"}\n'
    )
    registry = Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb)
    registry.register(SensorProfile(sensor_id=1, name="one", serial="s-1", timezone="Asia/Tokyo"))
    first = file_import(ddb, tables, reject_unknown=True).run(history, "jsonl", tmp_path / "r.jsonl")
    assert first.figures.rejected == 1 and "not registered" in rejected_lines(tmp_path / "r.jsonl")[0]["reason"]

    registry.register(SensorProfile(sensor_id=2, name="two", serial="s-2", timezone="UTC"))
    again = file_import(ddb, tables, reject_unknown=True).run(history, "jsonl", tmp_path / "r.jsonl")

    # a wall-clock time is read in the sensor's own zone, as ingest reads it
    assert day_counts(ddb, tables.table) == {(1, "2024-02-02"): 1, (2, "2024-02-02"): 1}
    assert again.figures.counted == 1 and again.figures.already == 1 and again.figures.rejected == 0


def test_readings_columns_become_the_days_readings_statistics_across_chunks(
    ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    # chunks of 3 rows: the second and third chunks add to day items the first created (the update path)
    values = {7: ["21.5", "19", "23.25", "20", "18.5"], 8: ["-3", "4.5", "", "0.125"]}
    lines = ["sensor_id,timestamp,readings.temp_c"]
    lines += [f"{sensor},2023-03-01T0{i}:30:00Z,{v}" for sensor, vs in values.items() for i, v in enumerate(vs)]
    history = tmp_path / "readings.csv"
    history.write_text("\n".join(lines) + "\n", encoding="utf-8")

    outcome = file_import(ddb, tables, chunk_rows=3).run(history, "csv", tmp_path / "r.jsonl")

    assert (outcome.figures.counted, outcome.figures.rejected) == (9, 0)
    items = {schema.sensor_of_item(i): i for i in scan_all(ddb, tables.table) if schema.day_count_of_item(i)}
    for sensor, vs in values.items():
        kept = tally.readings_of_item(items[sensor])["temp_c"]
        expected = {f"0{i}": HourStats.one(Decimal(v)) for i, v in enumerate(vs) if v}
        assert kept.hours == expected  # an empty cell is no reading, the report still counts
        assert kept.squares == sum((Decimal(v) ** 2 for v in vs if v), Decimal(0))


def test_a_file_that_changes_while_it_is_imported_stops_the_import_before_any_row_of_the_change(
    ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    # Given a history without event_ids (each row is its file and line) that grows by a row while it is
    # imported, after the first chunk was counted
    history = tmp_path / "growing.jsonl"
    rows = [{"sensor_id": 1300, "timestamp": f"2024-06-01T{i % 24:02d}:00:00Z"} for i in range(400)]
    history.write_text("".join(json.dumps(row) + "\n" for row in rows))

    def grow(progress: Progress) -> None:
        if progress.lines == 100:
            with history.open("a") as more:
                more.write(json.dumps({"sensor_id": 1300, "timestamp": "2024-06-01T23:30:00Z"}) + "\n")

    # When it is imported
    with pytest.raises(UnreadableInput, match="the file changed while it was imported"):
        file_import(ddb, tables, chunk_rows=100).run(history, "jsonl", tmp_path / "r.jsonl", on_progress=grow)

    # Then no row was counted under the first content's name after the change: only the first chunk
    # counted (the change is another object: imported again, its rows count as its own)
    assert day_counts(ddb, tables.table).get((1300, "2024-06-01"), 0) <= 200
    counted_before = day_counts(ddb, tables.table).get((1300, "2024-06-01"), 0)
    file_import(ddb, tables, chunk_rows=100).run(history, "jsonl", tmp_path / "r.jsonl")
    assert day_counts(ddb, tables.table)[(1300, "2024-06-01")] == counted_before + 401


@pytest.mark.parametrize(
    ("by_hand", "attribute", "repair"),
    [
        ({schema.HASHED_COUNT: {"S": "x"}}, "HashedCount", "HashedCount"),
        ({schema.IDS: {"SS": ["a"]}}, "Ids", "binary set"),
        ({schema.ID_PAGE: {"S": "x"}}, "IdPage", "SET IdPage"),
        ({schema.ID_PAGE: {"N": "99"}}, "IdPage", "SET IdPage"),
        ({schema.DATA_COUNT: {"N": "-5"}}, "DataCount", "DataCount"),
        ({schema.READINGS_COVER: {"S": "x"}}, "ReadingsCover", "REMOVE Readings, ReadingsCover"),
        ({schema.HOUR_COUNTS: {"M": {"10": {"N": "9" * 38}}}}, "HourCounts", "REMOVE HourCounts"),
    ],
)
def test_a_day_whose_live_ledger_or_counts_were_edited_by_hand_refuses_its_rows_with_the_repair(
    ddb: Any, tables: Tables, tmp_path: Path, by_hand: dict[str, Any], attribute: str, repair: str
) -> None:
    # three live reports of the compact ledger, then an attribute edited by hand: the import cannot know
    # which of its rows they were, and counts none of them again
    day = {
        **schema.day_key(5, "2024-02-02"),
        schema.DATA_COUNT: {"N": "3"},
        schema.HASHED_COUNT: {"N": "3"},
        schema.ID_PAGE: {"N": "0"},
        schema.IDS: {"BS": [bytes([i]) * 12 for i in range(3)]},
    }
    ddb.put_item(TableName=tables.table, Item={**day, **by_hand})
    history = tmp_path / "h.jsonl"
    rows = [{"sensor_id": 5, "timestamp": "2024-02-02T10:00:00Z", "event_id": f"a-{i}"} for i in range(3)]
    history.write_text("".join(json.dumps(r) + "\n" for r in rows))

    outcome = file_import(ddb, tables).run(history, "jsonl", tmp_path / "r.jsonl")

    entries = rejected_lines(tmp_path / "r.jsonl")
    assert [e["line"] for e in entries] == [1, 2, 3]
    assert all(attribute in e["reason"] and repair in e["reason"] for e in entries), entries[0]["reason"]
    assert (outcome.figures.counted, outcome.figures.rejected) == (0, 3)
    item = ddb.get_item(TableName=tables.table, Key=schema.day_key(5, "2024-02-02"))["Item"]
    assert item[schema.DATA_COUNT] == {**day, **by_hand}[schema.DATA_COUNT]
