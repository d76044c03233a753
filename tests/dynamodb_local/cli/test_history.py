"""``sensor-digest import FILE``: a history file into named tables (cli/history.py), the summary on
stdout (``--json``), the rejected rows beside the file, the exit codes. Engine: DynamoDB Local."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sensor_digest_tools.local.history import write_history
from tests.support.cli import invoke
from tests.support.tables import Tables, day_counts


def test_import_counts_a_file_into_the_tables_and_says_what_it_did_as_json(
    tables: Tables, ddb: Any, tmp_path: Path
) -> None:
    history = tmp_path / "fleet.csv"
    truth = write_history(history, sensors=3, days=2, per_day=50, fmt="csv", poison=3)

    done = invoke("import", str(history), "--table", tables.table, "--ledger", tables.ledger, "--json")

    assert done.exit_code == 0  # rejected rows are no failure: they are in the error report
    answer = json.loads(done.stdout)
    assert (answer["counted"], answer["rejected"], answer["rows"]) == (truth.valid, 3, truth.rows)
    assert answer["errors"] == str(tmp_path / "fleet.csv.rejected.jsonl")
    assert len(Path(answer["errors"]).read_text().splitlines()) == 3
    assert day_counts(ddb, tables.table) == dict(truth.counts)


def test_import_again_counts_nothing_twice_and_a_whole_import_is_not_read_again(
    tables: Tables, ddb: Any, tmp_path: Path
) -> None:
    history = tmp_path / "fleet.jsonl"
    truth = write_history(history, sensors=2, days=2, per_day=40)
    where = ("--table", tables.table, "--ledger", tables.ledger)
    first = invoke("import", str(history), *where)

    second = invoke("import", str(history), *where)
    third = invoke("import", str(history), *where, "--again", "--json")

    assert first.stdout.startswith(f"imported {history}: {truth.rows} rows, {truth.valid} counted, 0 counted")
    assert "imported whole before" in second.stdout and "nothing to do" in second.stdout
    assert json.loads(third.stdout)["counted"] == 0 and json.loads(third.stdout)["already"] == truth.valid
    assert day_counts(ddb, tables.table) == dict(truth.counts)


@pytest.mark.parametrize(
    ("name", "content", "code", "said"),
    [
        ("missing.jsonl", None, 2, "no such file"),
        ("history.txt", "x\n", 2, "cannot tell its format"),
        ("history.csv", "id,time\n1,2\n", 1, "must name sensor_id and timestamp"),
    ],
)
def test_import_refuses_what_it_cannot_read_in_one_line(
    tables: Tables, tmp_path: Path, name: str, content: str | None, code: int, said: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content)

    refused = invoke("import", str(path), "--table", tables.table, "--ledger", tables.ledger)

    assert refused.exit_code == code and refused.stdout == ""
    assert said in refused.stderr


def test_import_of_an_s3_object_needs_a_stack(tables: Tables) -> None:
    refused = invoke("import", "s3://bucket/history.jsonl", "--table", tables.table)

    assert refused.exit_code == 2 and "give --stack NAME" in refused.stderr


def test_import_json_of_a_file_imported_whole_before_counts_nothing_now_and_shows_the_earlier_import_apart(
    tables: Tables, tmp_path: Path
) -> None:
    history = tmp_path / "fleet.jsonl"
    truth = write_history(history, sensors=2, days=1, per_day=30)
    where = ("--table", tables.table, "--ledger", tables.ledger)
    first = json.loads(invoke("import", str(history), *where, "--json").stdout)

    second = json.loads(invoke("import", str(history), *where, "--json").stdout)

    assert first["counted"] == truth.valid and first["imported_before"] is None
    assert (second["counted"], second["rows"], second["already"]) == (0, 0, 0)
    before = second["imported_before"]
    assert (before["objects"], before["counted"]) == (1, truth.valid) and before["finished_at"]
