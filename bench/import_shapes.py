"""``python -m bench.import_shapes``: the history import at the shapes nobody plans for, each measured.

Each shape on a DynamoDB Local of its own, metered (write units by DynamoDB's size rules, read units from
the requests), through the local import as ``sensor-digest import FILE`` runs it:

- ``busy day``: one sensor-day of ``--busy-rows`` rows (100,000), 8 readings each, in no order and sorted;
- ``million``: one sensor-day of 1,000,000 rows with 8 readings, in no order (``--million``);
- ``fleet``: ``--fleet-sensors`` sensors (50,000) x 24 reports of one day with one reading, in no order.

For each: write units per row (goals: <= 0.1 in no order, <= 0.05 sorted), the rate, read units per row of
the same file imported again (goal: <= 0.05), the day item's size after it and what of it is the
import's, the write units a later live report would cost on it (the day item's size, the larger of before
and after: goal <= 2) beside a day of the same readings counted live, the peak memory of the importing
process, and whether every count and statistic is exact.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from bench import runner
from bench.history_import import file_import, peak_memory
from sensor_digest.store import schema, sizes, tally
from sensor_digest.store.reads import day_counts, scan_all

NAMES = ("temperature", "humidity", "pressure", "voltage", "current", "co2", "pm25", "noise")
DAY = "2024-06-01"


@dataclass
class Truth:
    counts: dict[tuple[int, str], int]
    sums: dict[tuple[int, str, str], Decimal]
    rows: int


def write_shape(path: Path, *, sensors: int, per_day: int, names: int, shuffled: bool, seed: int = 3) -> Truth:
    """Rows of ``sensors`` sensors, ``per_day`` each on one day, ``names`` readings a row (exact decimals
    of two places), shuffled or by sensor and time; the truth they add up to."""
    rng = random.Random(seed)
    rows: list[tuple[int, int, list[str]]] = []
    for sensor in range(1, sensors + 1):
        seconds = sorted(rng.randrange(86_400) for _ in range(per_day))
        for second in seconds:
            values = [f"{rng.randint(-4000, 9999) / 100:.2f}" for _ in range(names)]
            rows.append((sensor, second, values))
    if shuffled:
        rng.shuffle(rows)
    truth = Truth({}, {}, len(rows))
    with path.open("w", encoding="utf-8") as out:
        for i, (sensor, second, values) in enumerate(rows):
            stamp = f"{DAY}T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}Z"
            readings = ",".join(f'"{n}":{v}' for n, v in zip(NAMES, values, strict=False))
            out.write(f'{{"sensor_id":{sensor},"timestamp":"{stamp}","event_id":"r{i}","readings":{{{readings}}}}}\n')
            truth.counts[(sensor, DAY)] = truth.counts.get((sensor, DAY), 0) + 1
            for name, value in zip(NAMES, values, strict=False):
                key = (sensor, DAY, name)
                truth.sums[key] = truth.sums.get(key, Decimal(0)) + Decimal(value)
    return truth


def exact(client: Any, table: str, truth: Truth) -> bool:
    if day_counts(client, table) != truth.counts:
        return False
    for item in scan_all(client, table):
        found = schema.day_count_of_item(item)
        if found is None:
            continue
        sensor, day, _ = found
        for name, kept in tally.readings_of_item(item).items():
            if kept.day().total != truth.sums[(sensor, day, name)]:
                return False
    return True


IMPORTS = {schema.IMPORT_SEQ, schema.IMPORT_IDS, schema.IMPORT_PAGES}


@dataclass
class Shape:
    name: str
    rows: int
    write_units_per_row: float
    rows_per_s: float
    rerun_read_units_per_row: float
    day_item_bytes: int
    import_bytes: int
    live_report_write_units: int
    live_only_write_units: int
    peak_rss_mb: float
    exact: bool


def measure(name: str, path: Path, truth: Truth) -> Shape:
    with runner.engine(modeled=False) as e, tempfile.TemporaryDirectory() as scratch:
        tables = runner.fresh_tables(e.client, "import")
        e.meter.reset()
        started = time.perf_counter()
        file_import(e.client, tables).run(path, "jsonl", Path(scratch) / "r.jsonl")
        seconds = time.perf_counter() - started
        writes = e.meter.write_units
        e.meter.reset()
        file_import(e.client, tables).run(path, "jsonl", Path(scratch) / "r.jsonl", again=True)
        reads = e.meter.read_units
        items = [i for i in scan_all(e.client, tables["table"]) if schema.DATA_COUNT in i]
        largest = max(items, key=sizes.item_bytes)
        size = sizes.item_bytes(largest)
        live_only = sizes.item_bytes({k: v for k, v in largest.items() if k not in IMPORTS})
        is_exact = exact(e.client, tables["table"], truth)
    return Shape(
        name,
        truth.rows,
        writes / truth.rows,
        truth.rows / seconds,
        reads / truth.rows,
        size,
        size - live_only,
        sizes.write_units(size),
        sizes.write_units(live_only),
        peak_memory(path) / 2**20,
        is_exact,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.import_shapes", description=__doc__)
    parser.add_argument("--busy-rows", type=int, default=100_000, help="rows of the busy sensor-day")
    parser.add_argument("--fleet-sensors", type=int, default=50_000, help="sensors of the shuffled fleet (24 a day)")
    parser.add_argument("--million", action="store_true", help="also a sensor-day of 1,000,000 rows")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    plan = [
        ("busy day, no order", {"sensors": 1, "per_day": args.busy_rows, "names": 8, "shuffled": True}),
        ("busy day, sorted", {"sensors": 1, "per_day": args.busy_rows, "names": 8, "shuffled": False}),
        ("fleet, no order", {"sensors": args.fleet_sensors, "per_day": 24, "names": 1, "shuffled": True}),
    ]
    if args.million:
        plan.append(("a million-row day, no order", {"sensors": 1, "per_day": 1_000_000, "names": 8, "shuffled": True}))
    shapes = []
    with tempfile.TemporaryDirectory(prefix="bench-shapes-") as folder:
        for name, shape in plan:
            path = Path(folder) / "rows.jsonl"
            truth = write_shape(path, **shape)  # type: ignore[arg-type]
            shapes.append(measure(name, path, truth))
    if args.json:
        print(json.dumps({"date": datetime.now(UTC).date().isoformat(), "shapes": [asdict(s) for s in shapes]}))
        return 0
    print(f"history import shapes, {datetime.now(UTC).date().isoformat()}")
    head = f"{'':30}{'rows':>10}{'WRU/row':>9}{'rows/s':>8}{'re-run RRU/row':>15}{'item B':>8}"
    print(head + f"{'of it import':>13}{'live WRU':>9}{'live-only':>10}{'peak MB':>8}  exact")
    for s in shapes:
        print(
            f"{s.name:30}{s.rows:>10,}{s.write_units_per_row:>9.4f}{s.rows_per_s:>8,.0f}"
            f"{s.rerun_read_units_per_row:>15.4f}{s.day_item_bytes:>8,}{s.import_bytes:>13,}"
            f"{s.live_report_write_units:>9}{s.live_only_write_units:>10}{s.peak_rss_mb:>8,.0f}  {s.exact}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
