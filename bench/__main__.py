"""``python -m bench [--quick]``: throughput and cost of four counting strategies on DynamoDB Local.

Prints, per workload and strategy: messages per second, DynamoDB requests per message, write
units per message (from item sizes and DynamoDB's pricing rules), over- and undercount against
the truth, peak memory, and ratios against (a); then the summary path with and without
coalescing. Nothing here asserts on speed; ``--quick`` is CI's smoke run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.meter import PeakRss
from bench.strategies import STRATEGIES
from bench.workloads import Workload, backfill, realtime, skewed
from sensor_digest import layout
from sensor_digest.stream_filter import DayCount, matches_filter
from sensor_digest.summary import SummaryService, SummaryWriter
from sensor_digest_emulators.conflicts import ConflictEmulator
from sensor_digest_emulators.dynamodb_local import create_tables, running_engine
from sensor_digest_emulators.metering import RequestMeter
from sensor_digest_emulators.session import LocalSession
from sensor_digest_emulators.stream_reader import StreamReader
from sensor_digest_local.pipeline import route_service_logs
from sensor_digest_ops.queries import day_counts


def fresh_tables(client: Any, strategy: str, workload: str) -> dict[str, str]:
    suffix = f"{workload}-{strategy}-{uuid.uuid4().hex[:6]}"
    names = {"table": f"Bench-{suffix}", "ledger": f"BenchLedger-{suffix}", "idempotency": f"BenchIdem-{suffix}"}
    create_tables(client, names["table"], names["ledger"])
    if strategy == "b":
        client.create_table(
            TableName=names["idempotency"],
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        )
    return names


def run_one(meter: RequestMeter, key: str, workload: Workload, then: Any = None) -> dict[str, Any]:
    """One strategy on one workload, on a DynamoDB Local of its own: the engine slows down as its
    in-memory database grows, which would penalise whichever strategy ran later."""
    with running_engine(None) as engine:
        session = LocalSession({"dynamodb": engine.endpoint})
        meter.install(session)
        ConflictEmulator().install(session)  # DynamoDB's TransactionConflict, which DynamoDB Local lacks
        result = _measure(session, meter, key, workload)
        if then is not None:
            then(session.client("dynamodb"), engine.endpoint, result)
        return result


def _measure(session: LocalSession, meter: RequestMeter, key: str, workload: Workload) -> dict[str, Any]:
    label, strategy = STRATEGIES[key]
    client = session.client("dynamodb")
    tables = fresh_tables(client, key, workload.name)
    requests0, units0 = meter.snapshot()
    with PeakRss() as memory:
        started = time.perf_counter()
        strategy(session, tables, workload.deliveries, workload.batch_size)
        seconds = time.perf_counter() - started
    requests, units = (a - b for a, b in zip(meter.snapshot(), (requests0, units0), strict=True))
    counts = day_counts(client, tables["table"])
    n = len(workload.messages)
    return {
        "workload": workload.name,
        "strategy": key,
        "label": label,
        "messages": n,
        "deliveries": len(workload.deliveries),
        "seconds": seconds,
        "messages_per_s": n / seconds,
        "requests_per_message": requests / n,
        "write_units_per_message": units / n,
        "overcount": sum(max(0, c - workload.truth.get(k, 0)) for k, c in counts.items()),
        "undercount": sum(max(0, t - counts.get(k, 0)) for k, t in workload.truth.items()),
        "peak_rss_mb": memory.peak / 2**20,
        "rss_growth_mb": (memory.peak - memory.start) / 2**20,
        "table": tables["table"],
    }


class UncoalescedSummaryService(SummaryService):
    """The baseline of the summary's coalescing: one map upsert per stream record."""

    @staticmethod
    def plan(day_counts: list[tuple[int, DayCount]]) -> list[tuple[int, DayCount]]:
        return day_counts


def summary_path(client: Any, endpoint: str, table: str, meter: RequestMeter) -> list[dict[str, Any]]:
    records = [r for r in StreamReader(endpoint, table).poll() if matches_filter(r)]
    out = []
    for batch_size in (100, 1000):
        for coalesce in (True, False):
            for item in client.get_paginator("scan").paginate(TableName=table):
                for i in item["Items"]:
                    if layout.is_summary(i):
                        client.delete_item(TableName=table, Key={k: i[k] for k in (layout.SENSOR_ID, layout.DATE)})
            kind = SummaryService if coalesce else UncoalescedSummaryService
            service = kind(writer=SummaryWriter(table_name=table, client=client))
            requests0, _ = meter.snapshot()
            started = time.perf_counter()
            for start in range(0, len(records), batch_size):
                service.process(records[start : start + batch_size])
            seconds = time.perf_counter() - started
            requests = meter.snapshot()[0] - requests0
            out.append(
                {
                    "batch_size": batch_size,
                    "coalesce": coalesce,
                    "records": len(records),
                    "records_per_s": len(records) / seconds,
                    "writes_per_record": requests / len(records),
                }
            )
    return out


def print_workload(results: list[dict[str, Any]], workload: Workload) -> None:
    print(
        f"\n{workload.name} {workload.description}; {len(workload.deliveries):,} deliveries (5% duplicated), "
        f"batches of {workload.batch_size:,} for (c) and (d)"
    )
    base = next((r for r in results if r["strategy"] == "a"), results[0])
    header = (
        f"{'strategy':44} {'msg/s':>8} {'req/msg':>8} {'WCU/msg':>8} {'over':>6} {'under':>6} "
        f"{'peak MB':>8} {'x msg/s':>8} {'x req':>7} {'x WCU':>7}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r['label']:44} {r['messages_per_s']:8.0f} {r['requests_per_message']:8.3f} "
            f"{r['write_units_per_message']:8.3f} {r['overcount']:6d} {r['undercount']:6d} {r['peak_rss_mb']:8.0f} "
            f"{r['messages_per_s'] / base['messages_per_s']:8.2f} "
            f"{r['requests_per_message'] / base['requests_per_message']:7.3f} "
            f"{r['write_units_per_message'] / base['write_units_per_message']:7.3f}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="500 messages per workload: CI's smoke run")
    parser.add_argument("--messages", type=int, default=20_000, help="messages per workload (default 20,000)")
    parser.add_argument("--workloads", default="W1,W2,W3")
    parser.add_argument("--strategies", default="a,b,c,d")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "latest.json")
    args = parser.parse_args(argv)
    n = 500 if args.quick else args.messages
    makers = {"W1": realtime, "W2": skewed, "W3": backfill}
    print(
        f"SensorDigest benchmark, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, DynamoDB Local; {n:,} messages per workload"
    )
    report: dict[str, Any] = {"messages": n, "date": datetime.now(UTC).isoformat(), "results": [], "summary": []}
    meter = RequestMeter()  # installed on each engine's session (run_one)
    route_service_logs(verbose=False)  # the handlers' warnings (faults, retries) would interleave the tables

    def measure_summary(client: Any, endpoint: str, result: dict[str, Any]) -> None:
        report["summary"] = summary_path(client, endpoint, result["table"], meter)

    for name in args.workloads.split(","):
        workload = makers[name](n)
        results = []
        for key in args.strategies.split(","):
            then = measure_summary if (name == "W1" and key == "c") else None
            results.append(run_one(meter, key, workload, then))
        print_workload(results, workload)
        report["results"] += results
    if report["summary"]:
        print("\nsummary path on the stream of W1 (c): per stream batch, coalesced per sensor-day or not")
        for s in report["summary"]:
            print(
                f"  batch {s['batch_size']:>5}, coalesce {'on ' if s['coalesce'] else 'off'}: "
                f"{s['records']:,} records, {s['records_per_s']:8.0f} records/s, "
                f"{s['writes_per_record']:.3f} writes per record"
            )
    w1 = {r["strategy"]: r for r in report["results"] if r["workload"] == "W1"}
    if {"a", "c", "d"} <= set(w1):
        c, a, d = w1["c"], w1["a"], w1["d"]
        exact_everywhere = all(
            r["overcount"] == r["undercount"] == 0 for r in report["results"] if r["strategy"] == "c"
        )
        print("\ngoals (W1):")
        print(f"  (c) exact on every workload:           {'met' if exact_everywhere else 'MISSED'}")
        print(f"  (c) >= 5x (a) messages/s:              {c['messages_per_s'] / a['messages_per_s']:.2f}x")
        print(f"  (c) <= 0.25 requests per message:      {c['requests_per_message']:.3f}")
        print(f"  (c) <= 2.3 write units per message:    {c['write_units_per_message']:.3f}")
        print(f"  (d) <= 0.25 write units per message:   {d['write_units_per_message']:.3f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(f"\nresults: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
