"""``sensor-digest import-demo``: a generated history file imported into the local pipeline, checked
against its truth: every sensor-day's count and hours, its readings' statistics read back through the
read API (as ``make demo`` checks them: ``readings_check``), the month summaries the stream built from
them, every poison row in the error report, and a second import of the same file counting nothing."""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

from sensor_digest.history.record import Figures
from sensor_digest.store import schema
from sensor_digest.store.reads import by_sensor, day_counts, scan_all, summaries
from sensor_digest_tools.local.history import HistoryTruth, Order, write_history
from sensor_digest_tools.local.pipeline import LocalPipeline, PipelineOptions
from sensor_digest_tools.local.readings_check import ReadBack, differences, read_back
from sensor_digest_tools.local.traffic import DEMO_READINGS
from sensor_digest_tools.ops.history import FileImport


@dataclass(frozen=True)
class ImportDemoOptions:
    """What the history demo writes (``sensor-digest import-demo --help``)."""

    sensors: int = 10
    days: int = 3
    per_day: int = 150  # reports per sensor-day
    poison: int = 5  # rows the import must reject
    fmt: str = "jsonl"
    order: Order = "sorted"
    seed: int = 7
    engine_endpoint: str | None = None


@dataclass
class ImportDemoResult:
    options: ImportDemoOptions
    truth: HistoryTruth
    first: Figures
    again: Figures
    counts: dict[tuple[int, str], int]
    hours: dict[tuple[int, str], Counter[str]]
    summaries: dict[int, dict[str, int]]
    read: ReadBack  # the readings' statistics, as the read API answered them
    rejected_lines: int
    elapsed_s: float
    problems: list[str] = field(default_factory=list)

    @property
    def counts_exact(self) -> bool:
        return self.counts == dict(self.truth.counts) and self.hours == self.truth.hours

    @property
    def readings_differences(self) -> list[str]:
        """How the readings' statistics read back differ from the truth, one line each (none: exact)."""
        return differences(self.truth.readings, self.read)

    @property
    def readings_exact(self) -> bool:
        return bool(self.truth.readings) and not self.readings_differences

    @property
    def summaries_exact(self) -> bool:
        return self.summaries == by_sensor(self.counts)

    @property
    def rejected_reported(self) -> bool:
        return self.first.rejected == self.truth.poison == self.rejected_lines

    @property
    def again_counted_nothing(self) -> bool:
        return self.again.counted == 0

    @property
    def ok(self) -> bool:
        return (
            self.counts_exact
            and self.readings_exact
            and self.summaries_exact
            and self.rejected_reported
            and self.again_counted_nothing
            and not self.problems
        )


def _hours(client: object, table: str) -> dict[tuple[int, str], Counter[str]]:
    out: dict[tuple[int, str], Counter[str]] = {}
    for item in scan_all(client, table):
        found = schema.day_count_of_item(item)
        if found is not None:
            sensor, day, _ = found
            out[(sensor, day)] = Counter(schema.hour_counts_of_item(item) or {})
    return out


def run_import_demo(options: ImportDemoOptions, folder: Path | None = None) -> ImportDemoResult:
    """Write the history into ``folder`` (a temporary one by default), import it twice into a fresh
    local pipeline (the second time with ``again``: every chunk looked up, nothing counted), wait for
    the stream to build the month summaries, and read everything back."""
    with tempfile.TemporaryDirectory(prefix="sensor-digest-import-demo-") as scratch:
        where = folder or Path(scratch)
        history = where / f"history.{options.fmt}"
        truth = write_history(
            history,
            sensors=options.sensors,
            days=options.days,
            per_day=options.per_day,
            order=options.order,
            fmt=options.fmt,
            poison=options.poison,
            seed=options.seed,
            readings=DEMO_READINGS,
        )
        with LocalPipeline(PipelineOptions(seed=options.seed), engine_endpoint=options.engine_endpoint) as pipeline:
            target = pipeline.target
            table, ledger, client = str(target.table), str(target.ledger), pipeline.dynamodb()

            def importer() -> FileImport:
                return FileImport.over(client, table, ledger, zone=ZoneInfo("UTC"))

            started = time.monotonic()
            report = where / "history.rejected.jsonl"
            first = importer().run(history, options.fmt, report)
            again = importer().run(history, options.fmt, where / "again.rejected.jsonl", again=True)
            elapsed = time.monotonic() - started
            problems = [] if pipeline.wait_until_drained(timeout=300) else ["the stream did not catch up in 300 s"]
            problems += [f"the pipeline: {exc}" for exc in pipeline.errors]
            rejected = report.read_text(encoding="utf-8").splitlines() if report.exists() else []
            days = sorted({day for _, day in truth.counts})
            sensors = sorted({sensor for sensor, _ in truth.counts})
            return ImportDemoResult(
                options=options,
                truth=truth,
                first=first.figures,
                again=again.figures,
                counts=day_counts(client, table),
                hours=_hours(client, table),
                summaries=summaries(client, table),
                read=read_back(client, table, sensors, days[0], days[-1]),
                rejected_lines=sum(1 for line in rejected if json.loads(line).get("line")),
                elapsed_s=elapsed,
                problems=problems,
            )
