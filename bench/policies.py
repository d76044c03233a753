"""``python -m bench.policies [--quick] [--repeat N] [--out FILE]``: what each of the counter's savings
earns (``sensor_digest.counting.policies``).

(c) runs as the stack deploys it, under the latency model, with every policy on and then with each
one off, on the workloads where a policy can act:

- W1 (200 busy sensors, a new day) at the stack's two invocations at once, and at 10 (the documented
  raised concurrency): where invocations meet (ring order, deferral) and where a day found
  missing was created meanwhile (the missing-day bet);
- W4 (one hot sensor, many identity pages) at the defaults: where frozen pages are read again.

Each configuration runs ``--repeat`` times (3 by default) in this one run, and the table prints the
mean write units, read units and dollars per million messages with the ratio of each policy-off row
to the all-on row of its workload and concurrency. A policy earns its place when switching it off
costs more than 5% in write units or dollars somewhere here (docs/benchmarks.md, "What each mechanism
earns"). Nothing is asserted: figures only.
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import runner
from bench.prices import dollars_per_million
from bench.strategies import POLICY_STRATEGIES
from bench.workloads import QUICK_MESSAGES, hot_sensor, realtime
from sensor_digest_cdk.shape import PipelineShape

RAISED = runner.RAISED_CONCURRENCY


def configurations(quick: bool) -> list[tuple[str, Any, int]]:
    """(label, workload, concurrency) of each place a policy can act."""
    settings = PipelineShape()
    w1 = realtime(QUICK_MESSAGES if quick else runner.CONCURRENCY_MESSAGES)
    w4 = hot_sensor(QUICK_MESSAGES if quick else 5_000)
    return [
        ("W1", w1, settings.ingest_max_concurrency),
        ("W1", w1, RAISED),
        ("W4", w4, settings.ingest_max_concurrency),
    ]


def measure(key: str, workload: Any, concurrency: int, repeat: int) -> dict[str, Any]:
    settings = replace(PipelineShape(), ingest_max_concurrency=concurrency)
    runs = [runner.run(key, workload, settings, modeled=True) for _ in range(repeat)]
    wru = statistics.mean(r["write_units_per_message"] for r in runs)
    rru = statistics.mean(r["read_units_per_message"] for r in runs)
    return {
        "strategy": key,
        "workload": workload.name,
        "concurrency": concurrency,
        "runs": repeat,
        "write_units_per_message": wru,
        "write_units_spread": max(r["write_units_per_message"] for r in runs)
        - min(r["write_units_per_message"] for r in runs),
        "read_units_per_message": rru,
        "dollars_per_million": dollars_per_million({"write_units_per_message": wru, "read_units_per_message": rru}),
        "exact": all(r["overcount"] == 0 and r["undercount"] == 0 for r in runs),
        "conflicts": statistics.mean(r["conflicts"] for r in runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 messages a workload (a smoke run)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each configuration (default 3)")
    parser.add_argument("--out", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    rows: list[dict[str, Any]] = []
    print(f"{'configuration':<44} {'WRU/msg':>8} {'±':>6} {'RRU/msg':>8} {'$/M':>6} {'WRU x':>6} {'$ x':>6}  exact")
    for name, workload, concurrency in configurations(args.quick):
        base = measure("c", workload, concurrency, args.repeat)
        rows.append(base)
        print(_line(f"{name}, {concurrency} at once, all on", base, base))
        for key in POLICY_STRATEGIES:
            row = measure(key, workload, concurrency, args.repeat)
            rows.append(row)
            print(_line(f"{name}, {concurrency} at once, {key[2:]} off", row, base))
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")


def _line(label: str, row: dict[str, Any], base: dict[str, Any]) -> str:
    wru, dollars = row["write_units_per_message"], row["dollars_per_million"]
    return (
        f"{label:<44} {wru:8.3f} {row['write_units_spread']:6.3f} {row['read_units_per_message']:8.3f} "
        f"{dollars:6.2f} {wru / base['write_units_per_message']:6.2f} {dollars / base['dollars_per_million']:6.2f}"
        f"  {'yes' if row['exact'] else 'NO'}"
    )


if __name__ == "__main__":
    main()
