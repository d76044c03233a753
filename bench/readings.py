"""``python -m bench.readings [--quick] [--repeat N] [--out FILE]``: what readings' statistics cost
ingest, side by side with the same reports without readings, in one run.

(c) runs as the stack deploys it (its defaults, under the latency model) on W1 (200 busy sensors)
and F (a fleet of 50,000 sensors, a report per sensor-day), each as is and with one and with four
readings a report (``workloads.with_readings``: the same reports, days and hours). The table prints
write units, read units and DynamoDB dollars per million messages, each with its ratio to the
workload without readings, the largest item written, and whether every count was exact. The goals
(issue #39): with one reading at most 1.10x the write units at W1 and F, with four at most 2.0x.
Nothing is asserted: figures only.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path
from typing import Any

from bench import runner
from bench.prices import dollars_per_million
from bench.workloads import QUICK_MESSAGES, Workload, fleet, realtime, shape, with_readings
from sensor_digest.store import schema
from sensor_digest.store.identities import DAY_IDS, ID_BYTES
from sensor_digest.store.sizes import WRITE_UNIT_BYTES, item_bytes
from sensor_digest_cdk.shape import PipelineShape

# What sizes() fills a day with: a report every 36 s (100 an hour), a reading named as people name
# them, with a typical thermometer's figures (a list in every hour: count, sum, minimum, maximum).
NAMES = ("temperature", "humidity", "pressure", "co2", "pm25", "voltage", "battery", "rssi")
READ_UNIT_BYTES = 4096


# W1 at the full benchmark's size (``python -m bench``'s default), where the goal's baseline comes from.
W1_MESSAGES = 20_000


def variants(quick: bool) -> list[tuple[Workload, list[Workload]]]:
    w1 = realtime(QUICK_MESSAGES if quick else W1_MESSAGES)
    f = fleet(QUICK_MESSAGES if quick else 4_000)
    return [(w1, [with_readings(w1, 1), with_readings(w1, 4)]), (f, [with_readings(f, 1), with_readings(f, 4)])]


def measure(workload: Workload, repeat: int) -> dict[str, Any]:
    runs = [runner.run("c", workload, PipelineShape(), modeled=True) for _ in range(repeat)]
    wru = statistics.mean(r["write_units_per_message"] for r in runs)
    rru = statistics.mean(r["read_units_per_message"] for r in runs)
    return {
        "workload": workload.name,
        "runs": repeat,
        "write_units_per_message": wru,
        "read_units_per_message": rru,
        "dollars_per_million": dollars_per_million({"write_units_per_message": wru, "read_units_per_message": rru}),
        "largest_item_bytes": max(r["largest_item_bytes"] for r in runs),
        "exact": all(r["overcount"] == 0 and r["undercount"] == 0 for r in runs),
    }


def peer(quick: bool) -> list[dict[str, Any]]:
    """(a) the blog's flow, (b) Powertools' batch + idempotency, each writing the statistics their way
    (``strategies.readings_updates``), and (c), on the large fleet with one reading a report, on a new
    day and with the day under way: DynamoDB dollars per million messages, and (c)'s share of (b)'s."""
    workload = with_readings(fleet(QUICK_MESSAGES if quick else 4_000), 1)
    rows = []
    print(f"\n{workload.name} {workload.description}, latency model")
    print(f"{'phase':14} {'strategy':44} {'WRU/msg':>8} {'RRU/msg':>8} {'$/M':>7}  exact")
    for phase, under_way in (("new day", False), ("day under way", True)):
        by_key = {}
        for key in "abc":
            result = runner.run(key, workload, PipelineShape(), modeled=True, under_way=under_way)
            result.update(phase=phase, dollars_per_million=dollars_per_million(result))
            by_key[key] = result
            rows.append(result)
            exact = "yes" if result["overcount"] == 0 and result["undercount"] == 0 else "no"
            print(
                f"{phase:14} {result['label']:44} {result['write_units_per_message']:8.3f} "
                f"{result['read_units_per_message']:8.3f} {result['dollars_per_million']:7.3f}  {exact}"
            )
        share = by_key["c"]["dollars_per_million"] / by_key["b"]["dollars_per_million"]
        print(f"{phase:14} (c) / (b) in DynamoDB dollars: {share:.2f}x (goal: at most 0.45x)")
    return rows


def full_day_item(names: int) -> dict[str, Any]:
    """A busy sensor's day item at the end of its day, in DynamoDB's form: 2,400 reports, each hour
    holding 100, its 40 identities (the rest in pages), and ``names`` readings in every hour."""
    hourly = {f"{h:02d}": {"N": "100"} for h in range(24)}
    item: dict[str, Any] = {
        schema.SENSOR_ID: {"N": "1234"},
        schema.DATE: {"S": "2026-11-27"},
        schema.DATA_COUNT: {"N": "2400"},
        schema.HASHED_COUNT: {"N": "2400"},
        schema.HOUR_COUNTS: {"M": hourly},
        schema.IDS: {"BS": [bytes([i]) * ID_BYTES for i in range(DAY_IDS)]},
        schema.ID_PAGE: {"N": "33"},
    }
    if names:
        hour = {"L": [{"N": "100"}, {"N": "2153.75"}, {"N": "18.25"}, {"N": "24.75"}]}
        kept = {
            name: {"M": {"q": {"N": "1109532.1875"}, **{f"{h:02d}": hour for h in range(24)}}} for name in NAMES[:names]
        }
        item[schema.READINGS] = {"M": kept}
        item[schema.READINGS_COVER] = {"N": "2400"}
    return item


def sizes() -> list[dict[str, Any]]:
    """The full day item's bytes and write units with 0, 1 and 8 readings (computed by DynamoDB's size
    rules, ``store/sizes.py``), and what a year of such days costs one eventually consistent ``Query``."""
    rows = []
    print(f"{'a full busy day':<22} {'bytes':>6} {'WRU':>4} {'a year: RRU':>12}")
    for names in (0, 1, 8):
        size = item_bytes(full_day_item(names))
        year = math.ceil(365 * size / READ_UNIT_BYTES) / 2
        row = {
            "readings": names,
            "bytes": size,
            "write_units": math.ceil(size / WRITE_UNIT_BYTES),
            "year_read_units": year,
        }
        rows.append(row)
        print(f"{names:>2} readings{'':<12} {size:6,} {row['write_units']:4} {year:12.1f}")
    return rows


# The aged shape's history: 40 days before the workload's day (May 31st) fill its month item, which
# is all the summary path writes; a year for 3,000 sensors (1.1 million items) is more than DynamoDB
# Local on a laptop scans in the run's time.
AGED_HISTORY_DAYS = 40


def aged(quick: bool) -> list[dict[str, Any]]:
    """Ingest and its summary path at 3,000 sensors with history (``runner.run_aged``: (c) raw, the
    stream batch at the stack's size), without readings and with one a report."""
    base = shape(3_000, QUICK_MESSAGES if quick else W1_MESSAGES)
    rows = []
    print(f"\n{'3,000 sensors, 40 days of history':<34} {'ingest':>7} {'summary':>8} {'total':>7} {'x':>5}  exact")
    for workload in (base, with_readings(base, 1)):
        result = runner.run_aged(workload, PipelineShape(), history_days=AGED_HISTORY_DAYS)
        summary = result["summary"][0]
        total = result["write_units_per_message"] + summary["write_units_per_message"]
        row = {
            "workload": workload.name,
            "ingest_write_units_per_message": result["write_units_per_message"],
            "summary_write_units_per_message": summary["write_units_per_message"],
            "total_write_units_per_message": total,
            "exact": result["overcount"] == 0 and result["undercount"] == 0 and summary["exact"],
        }
        rows.append(row)
        ratio = total / rows[0]["total_write_units_per_message"]
        print(
            f"{workload.name:<34} {row['ingest_write_units_per_message']:7.3f} "
            f"{row['summary_write_units_per_message']:8.3f} {total:7.3f} {ratio:5.2f}  "
            f"{'yes' if row['exact'] else 'NO'}"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 messages a workload (a smoke run)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each workload (default 2)")
    parser.add_argument("--out", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--peer", action="store_true", help="also the peer comparison on the fleet with a reading")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    rows = sizes()
    print(f"\n{'workload':<10} {'WRU/msg':>8} {'RRU/msg':>8} {'$/M':>6} {'WRU x':>6} {'$ x':>6} {'largest':>8}  exact")
    for base, readings in variants(args.quick):
        plain = measure(base, args.repeat)
        rows.append(plain)
        print(_line(plain, plain))
        for workload in readings:
            row = measure(workload, args.repeat)
            rows.append(row)
            print(_line(row, plain))
    rows += aged(args.quick)
    if args.peer:
        rows += peer(args.quick)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")


def _line(row: dict[str, Any], base: dict[str, Any]) -> str:
    wru, dollars = row["write_units_per_message"], row["dollars_per_million"]
    return (
        f"{row['workload']:<10} {wru:8.3f} {row['read_units_per_message']:8.3f} {dollars:6.3f} "
        f"{wru / base['write_units_per_message']:6.2f} {dollars / base['dollars_per_million']:6.2f} "
        f"{row['largest_item_bytes']:8,}  {'yes' if row['exact'] else 'NO'}"
    )


if __name__ == "__main__":
    main()
