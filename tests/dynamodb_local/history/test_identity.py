"""A row's identity in the history import (docs/import.md, "Row identity and exactly once"): its sensor
and ``event_id``, else its object and line; found whatever changed in the sensors' profiles since it
was counted, across chunks, and across files. Engine: DynamoDB Local."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sensor_digest.history.pins import ZonePins
from sensor_digest.profiles import SensorProfile
from sensor_digest.registry import Registry
from tests.support.history import file_import
from tests.support.tables import Tables, day_counts

NEAR_MIDNIGHT = [  # UTC instants on 2024-03-01 and 03-03; in another zone some fall on 03-02, where none did
    ("2024-03-01T23:30:00Z", 1),  # Asia/Tokyo (+9): 03-02
    ("2024-03-01T20:00:00+00:00", 2),  # Asia/Tokyo: 03-02
    ("2024-03-01T12:00:00Z", 3),
    (1709442000, 4),  # 2024-03-03T05:00:00Z as epoch seconds; Pacific/Honolulu (-10): 03-02
]


def history(path: Path, *, ids: bool, poison: bool = False, sensor: int = 1, prefix: str = "e") -> Path:
    rows = []
    for n, (timestamp, count) in enumerate(NEAR_MIDNIGHT):
        row: dict[str, Any] = {"sensor_id": sensor, "timestamp": timestamp, "count": count}
        if ids:
            row["event_id"] = f"{prefix}-{n}"
        rows.append(json.dumps(row))
    if poison:  # a rejected row: the second import goes through the file again, chunk by chunk
        rows.append('{"sensor_id": 1}')
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def registry(ddb: Any, tables: Tables) -> Registry:
    return Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb)


def rezone(ddb: Any, tables: Tables, sensor: int, zone: str) -> None:
    registry(ddb, tables).update(sensor, lambda p: replace(p, timezone=zone))


@pytest.mark.parametrize("zone", ["Asia/Tokyo", "Pacific/Honolulu"])
@pytest.mark.parametrize("ids", [False, True], ids=["object-and-line", "event-id"])
@pytest.mark.parametrize("how", ["again", "rejected-rows"])
def test_a_rerun_after_the_sensors_zone_changed_changes_no_count(
    ddb: Any, tables: Tables, tmp_path: Path, ids: bool, how: str, zone: str
) -> None:
    # Given a file imported while sensor 1 was registered in UTC
    registry(ddb, tables).register(SensorProfile(sensor_id=1, name="one", serial="s-1", timezone="UTC"))
    path = history(tmp_path / "h.jsonl", ids=ids, poison=how == "rejected-rows")
    first = file_import(ddb, tables).run(path, "jsonl", tmp_path / "r.jsonl")
    counted = day_counts(ddb, tables.table)
    assert counted == {(1, "2024-03-01"): 6, (1, "2024-03-03"): 4} and first.figures.zone_kept == 0

    # When its zone moves rows near midnight to a day that has none, and the file is imported again
    rezone(ddb, tables, 1, zone)
    again = file_import(ddb, tables).run(path, "jsonl", tmp_path / "r.jsonl", again=how == "again")

    # Then no count changed, every row is one found counted before, and the import says that its rows
    # kept the zone of the sensor's first import
    assert day_counts(ddb, tables.table) == counted
    assert (again.figures.counted, again.figures.already, again.figures.zone_kept) == (0, 4, 4)


def test_a_rerun_with_another_default_zone_changes_no_count(ddb: Any, tables: Tables, tmp_path: Path) -> None:
    # an unregistered sensor's rows are dated in the default zone (--timezone), which the second run changes
    path = history(tmp_path / "h.jsonl", ids=False)
    file_import(ddb, tables, zone="UTC").run(path, "jsonl", tmp_path / "r.jsonl")
    counted = day_counts(ddb, tables.table)

    again = file_import(ddb, tables, zone="Pacific/Honolulu").run(path, "jsonl", tmp_path / "r.jsonl", again=True)

    assert day_counts(ddb, tables.table) == counted and again.figures.counted == 0


def test_a_sensors_rows_keep_the_zone_of_its_first_import_in_every_later_file(
    ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    # a second file carrying the same reports (the same event_ids) after the zone changed finds them
    registry(ddb, tables).register(SensorProfile(sensor_id=1, name="one", serial="s-1", timezone="UTC"))
    file_import(ddb, tables).run(history(tmp_path / "a.jsonl", ids=True), "jsonl", tmp_path / "r.jsonl")
    rezone(ddb, tables, 1, "Asia/Tokyo")
    other = tmp_path / "b.jsonl"
    other.write_text(history(tmp_path / "b0.jsonl", ids=True).read_text() + "\n", encoding="utf-8")  # other content

    second = file_import(ddb, tables).run(other, "jsonl", tmp_path / "r.jsonl")

    assert day_counts(ddb, tables.table) == {(1, "2024-03-01"): 6, (1, "2024-03-03"): 4}
    assert (second.figures.counted, second.figures.already) == (0, 4)


def test_two_files_carrying_one_event_id_count_it_once(ddb: Any, tables: Tables, tmp_path: Path) -> None:
    # Given two exports that overlap: b holds a's reports (same sensor, event_id and time) and one more
    a = history(tmp_path / "a.jsonl", ids=True)
    b = tmp_path / "b.jsonl"
    extra = {"sensor_id": 1, "timestamp": "2024-03-01T08:00:00Z", "count": 5, "event_id": "new"}
    b.write_text(json.dumps(extra) + "\n" + a.read_text(), encoding="utf-8")

    file_import(ddb, tables).run(a, "jsonl", tmp_path / "ra.jsonl")
    second = file_import(ddb, tables).run(b, "jsonl", tmp_path / "rb.jsonl")

    assert day_counts(ddb, tables.table) == {(1, "2024-03-01"): 6 + 5, (1, "2024-03-03"): 4}
    assert (second.figures.counted, second.figures.already) == (1, 4)


def test_an_event_id_repeated_in_another_chunk_counts_once(ddb: Any, tables: Tables, tmp_path: Path) -> None:
    row = {"sensor_id": 3, "timestamp": "2022-05-06T07:08:09Z", "count": 2, "event_id": "twice"}
    filler = [{**row, "event_id": f"f{i}", "count": 1} for i in range(5)]
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [row, *filler, row]) + "\n", encoding="utf-8")

    outcome = file_import(ddb, tables, chunk_rows=3).run(path, "jsonl", tmp_path / "r.jsonl")

    assert day_counts(ddb, tables.table) == {(3, "2022-05-06"): 2 + 5}
    assert outcome.figures.counted == 6 and outcome.figures.already + outcome.figures.duplicates == 1


def test_one_event_id_of_two_sensors_is_two_reports(ddb: Any, tables: Tables, tmp_path: Path) -> None:
    # the identity is the sensor and its event_id, as for live reports
    rows = [{"sensor_id": s, "timestamp": "2022-05-06T07:08:09Z", "event_id": "same"} for s in (1, 2)]
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")

    file_import(ddb, tables).run(path, "jsonl", tmp_path / "r.jsonl")

    assert day_counts(ddb, tables.table) == {(1, "2022-05-06"): 1, (2, "2022-05-06"): 1}


def test_rows_without_event_id_in_two_files_are_reports_of_each(ddb: Any, tables: Tables, tmp_path: Path) -> None:
    # without event_id a row is its object and line: the same text in another file is another report
    a = history(tmp_path / "a.jsonl", ids=False)
    b = tmp_path / "b.jsonl"
    b.write_text("\n" + a.read_text(), encoding="utf-8")  # other content, same rows one line lower

    file_import(ddb, tables).run(a, "jsonl", tmp_path / "ra.jsonl")
    file_import(ddb, tables).run(b, "jsonl", tmp_path / "rb.jsonl")

    assert day_counts(ddb, tables.table) == {(1, "2024-03-01"): 12, (1, "2024-03-03"): 8}


def test_two_files_sharing_event_ids_imported_at_once_count_each_report_once(
    ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    rows = [
        {"sensor_id": 1 + i % 3, "timestamp": f"2023-06-0{1 + i % 2}T{i % 24:02d}:00:00Z", "event_id": f"r{i}"}
        for i in range(240)
    ]
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    b.write_text("\n".join(json.dumps(r) for r in reversed(rows)) + "\n", encoding="utf-8")
    outcomes: list[Any] = []

    def run(path: Path) -> None:
        outcomes.append(file_import(ddb, tables, chunk_rows=20).run(path, "jsonl", tmp_path / f"{path.name}.r"))

    threads = [threading.Thread(target=run, args=(p,)) for p in (a, b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sum(day_counts(ddb, tables.table).values()) == 240
    assert sum(o.figures.counted for o in outcomes) == 240


def test_two_imports_pinning_one_sensor_at_once_both_take_the_first_pin(ddb: Any, tables: Tables) -> None:
    # two imports that would date an unregistered sensor's rows in two zones (their --timezone): the one
    # that writes the pin second reads the first's from its refused write, and dates alike
    first, second = ZonePins(tables.ledger, ddb), ZonePins(tables.ledger, ddb)
    second.prefetch([7])  # read before the first pinned: none yet

    assert first.pin(7, "UTC") == "UTC"
    assert second.pin(7, "Asia/Tokyo") == "UTC" and second.get(7) == "UTC"
