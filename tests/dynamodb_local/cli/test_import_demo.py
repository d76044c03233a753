"""``sensor-digest import-demo`` (cli/history.py over local/history_demo.py): a generated history file,
with readings, imported into a fresh local pipeline and checked against its truth. Engine: DynamoDB
Local (the session's, through ``AWS_ENDPOINT_URL_DYNAMODB``), moto's SQS in process."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from sensor_digest_tools.local.history_demo import ImportDemoOptions, run_import_demo
from tests.support.cli import invoke


def test_the_import_demo_checks_counts_hours_readings_summaries_and_rejections_and_passes(
    ddb_endpoint: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", ddb_endpoint)

    done = invoke(
        "import-demo", "--sensors", "3", "--days", "2", "--per-day", "120", "--poison", "4", "--format", "csv",
        "--keep", str(tmp_path),
    )  # fmt: skip

    assert done.exit_code == 0, done.output
    assert "counts and hours of 6 sensor-days against the truth: ok" in done.stdout
    # a temperature in every row, a humidity in half: 12 sensor-day readings, their CSV columns imported
    assert (
        "readings' statistics of 12 sensor-day readings read back through the read API against the truth "
        "(count, sum, min, max exact; mean, stddev within 1e-12): ok"
    ) in " ".join(done.stdout.split())
    assert (tmp_path / "history.csv").read_text().startswith("sensor_id,timestamp,count,event_id,readings.temperature,")
    assert "the same file again: 0 counted, 720 found counted before: ok" in done.stdout
    assert len((tmp_path / "history.rejected.jsonl").read_text().splitlines()) == 4


def test_the_import_demo_fails_when_the_tables_differ_from_the_truth(ddb_endpoint: str) -> None:
    # an unsorted history, so that its chunks hold many sensor-days; then the truth is told one report more
    result = run_import_demo(
        ImportDemoOptions(sensors=2, days=2, per_day=60, poison=1, order="random", engine_endpoint=ddb_endpoint)
    )
    assert result.ok, result.problems

    result.truth.counts[(1, "2023-01-01")] += 1

    assert not result.counts_exact and not result.ok
    result.truth.counts[(1, "2023-01-01")] -= 1
    assert result.ok

    # and when the truth holds one more temperature, the readings' check names the sensor-day
    result.truth.readings[(2, "2023-01-02", "temperature")].add(Decimal("21.5"))

    assert not result.readings_exact and not result.ok
    assert [d for d in result.readings_differences if d.startswith("sensor 2, 2023-01-02, temperature: count")]
