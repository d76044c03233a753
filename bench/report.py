"""What the benchmark prints and writes: the header with the settings it ran at, a table per
workload, the summary path, the goals, and the results file (``bench/results/latest.json``); the
sweep's plot goes to ``docs/batching.svg`` (``bench/sweep.py`` draws it), and a full run's results
page to ``docs/benchmark-results.md`` (``bench/pages.py`` renders it).
"""

from __future__ import annotations

import json
import os
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.plan import Plan
from bench.workloads import Workload

RESULTS = Path(__file__).parent / "results" / "latest.json"
PLOT = Path(__file__).parent.parent / "docs" / "batching.svg"


def print_header(plan: Plan) -> None:
    """When, where, how many messages, and the settings the runs use (told when not the defaults)."""
    n, settings = plan.messages, plan.settings
    print(
        f"SensorDigest benchmark, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, DynamoDB Local; {n:,} messages per workload; "
        f"as deployed: batches of {settings.ingest_batch_size:,}, {settings.ingest_max_concurrency} invocations "
        f"at once, {settings.ingest_max_workers} workers each, stream batches of {settings.summary_batch_size:,}; "
        f"FIFO (e): batches of {settings.fifo_batch_size}, no window, {settings.fifo_max_concurrency} at once"
    )
    if plan.overrides:
        print(f"NOT THE DEFAULTS: {', '.join(plan.sets)}")


def new_report(plan: Plan) -> dict[str, Any]:
    """The results file's record, before any run: messages, date, overrides, the settings."""
    report: dict[str, Any] = {
        "messages": plan.messages,
        "date": datetime.now(UTC).isoformat(),
        "overrides": plan.overrides,
        "machine": {
            "arch": platform.machine(),
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "engine": "DynamoDB Local",
        },
    }
    report["results"] = []
    report["settings"] = plan.reported_settings()
    return report


def print_workload(results: list[dict[str, Any]], workload: Workload) -> None:
    base = next((r for r in results if r["strategy"] == "a"), results[0])
    header = (
        f"{'strategy':40} {'mode':>5} {'msg/s':>7} {'req/msg':>7} {'WCU/msg':>7} {'listed':>6} "
        f"{'confl':>6} {'over':>6} {'under':>5} {'MB':>4} {'x msg/s':>7} {'x req':>6} {'x WCU':>6}"
    )
    repeated = f"{workload.duplicate_rate:.0%} duplicated"
    print(f"\n{workload.name} {workload.description}; {len(workload.deliveries):,} deliveries ({repeated})")
    print(header)
    print("-" * len(header))
    for r in results:
        same_mode = next((b for b in results if b["strategy"] == base["strategy"] and b["mode"] == r["mode"]), base)
        print(
            f"{r['label']:40} {r['mode']:>5} {r['messages_per_s']:7.0f} {r['requests_per_message']:7.3f} "
            f"{r['write_units_per_message']:7.3f} {r['listed']:6d} {r['conflicts']:6d} {r['overcount']:6d} "
            f"{r['undercount']:5d} {r['peak_rss_mb']:4.0f} "
            f"{r['messages_per_s'] / same_mode['messages_per_s']:7.2f} "
            f"{r['requests_per_message'] / same_mode['requests_per_message']:6.3f} "
            f"{r['write_units_per_message'] / same_mode['write_units_per_message']:6.3f}"
        )
    for r in results:
        notes = []
        if r["cancelled_units_per_message"]:
            causes = ", ".join(f"{c} {u:.3f}" for c, u in sorted(r["cancelled_units_per_message"].items()))
            notes.append(f"WCU/msg of cancelled transactions: {causes}")
        if "latency_bound_msg_per_s" in r:
            notes.append(f"latency-bound estimate {r['latency_bound_msg_per_s']:,.0f} msg/s")
        if notes:
            print(f"  {r['label'][:3]} {r['mode']}: " + "; ".join(notes))


def print_summary(result: dict[str, Any], title: str) -> None:
    print(f"\nsummary path, {title}: {result['summary'][0]['records']:,} stream records")
    for s in result["summary"]:
        total = result["write_units_per_message"] + s["write_units_per_message"]
        print(
            f"  stream batch {s['batch_size']:>5}: {s['writes_per_record']:.3f} writes per record, "
            f"{s['write_units_per_message']:.3f} WCU per message (ingest + summary {total:.3f}), "
            f"{s['records_per_s']:,.0f} records/s, {s['failures']} failures, "
            f"{'exact' if s['exact'] else 'NOT EXACT'}"
        )


def print_young_summaries(results: list[dict[str, Any]], *, ledger: bool) -> None:
    """The summary path of the workload's young sensors: (e) FIFO when it ran one, and (c) when
    ``ledger`` (it ran raw, and runs again with a year of history)."""
    ordered = next((r for r in results if r["strategy"] == "e" and r.get("summary")), None)
    if ordered:  # a FIFO batch writes a sensor-day per 10 messages: more stream records to coalesce
        print_summary(ordered, "W1 (e) FIFO, young sensors (no history)")
    if ledger:
        young = next(r for r in results if r["strategy"] == "c" and r["mode"] == "raw")
        print_summary(young, "W1 (c), young sensors (no history)")


def print_aged(aged: dict[str, Any]) -> None:
    """W1's (c) with a year of history per sensor: ingest, then its summary path."""
    print(
        f"\nW1 (c) with a year of history per sensor: {aged['write_units_per_message']:.3f} WCU and "
        f"{aged['requests_per_message']:.3f} requests per message in ingest, "
        f"{aged['overcount']}/{aged['undercount']} over/under"
    )
    print_summary(aged, "W1 (c), a year of history per sensor")


def print_fifo_shapes_heading() -> None:
    print("\nordered mode (e) on the sweep's shapes, a backlog with the day under way (batches of 10):")


def print_goals(met: list[tuple[str, str, bool]]) -> None:
    if met:
        print("\ngoals (W1 unless named; at the stack's defaults; speed under the latency model):")
        for goal, measured, ok in met:
            print(f"  {goal:64} {measured}: {'met' if ok else 'MISSED'}")


def write(report: dict[str, Any], out: Path) -> None:
    """The results file, and where it is."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"\nresults: {out}")
