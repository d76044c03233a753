"""``python -m bench [--quick]``: cost and speed of four counting strategies, as the stack deploys them.

Every strategy is a Lambda handler run as the SQS event source runs it with the stack's settings
(``infra/settings.py``: batch size, maximum concurrency, worker threads, timeout) on a backlog,
against DynamoDB Local with DynamoDB's transaction conflicts emulated, twice: raw (this machine's
DynamoDB Local) and under the latency model of a networked DynamoDB
(``sensor_digest_tools.instruments.latency``). Prints messages per second, requests and write units per
message (ingest and summary apart), messages listed for a retry, over- and undercount, and ratios
against (a); then the summary path, the batch-size sweep with its table and plot, and the goals.
Nothing here asserts on speed; ``--quick`` is CI's smoke run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import sweep
from bench.esm import drain, drain_fifo, fifo_records
from bench.meter import PeakRss
from bench.strategies import FIFO_STRATEGIES, STRATEGIES
from bench.workloads import WORKLOADS, Workload, seed_days_under_way, seed_history
from sensor_digest import summary
from sensor_digest.config import SummarySettings
from sensor_digest.store import schema
from sensor_digest.store.reads import by_sensor, day_counts, scan_all, summaries
from sensor_digest.stream_filter import matches_filter
from sensor_digest_cdk.shape import Settings
from sensor_digest_tools import instruments
from sensor_digest_tools.aws.dynamodb_local import create_tables, running_engine
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.aws.stream_reader import StreamReader
from sensor_digest_tools.instruments.conflicts import ConflictEmulator
from sensor_digest_tools.instruments.latency import LatencyModel
from sensor_digest_tools.instruments.metering import RequestMeter
from sensor_digest_tools.lambda_runtime.events import FakeContext, sqs_record, stream_event
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from sensor_digest_tools.local.pipeline import route_service_logs

DEPLOYED = Settings()
MODELED = "acde"  # (b) is left out of the modeled pass: three writes per message, its place is clear raw
B_WORKLOADS = ("W1",)  # and it runs on W1 only, for the same reason


@dataclass
class Engine:
    session: LocalSession
    endpoint: str
    meter: RequestMeter
    conflicts: ConflictEmulator
    latency: LatencyModel | None

    @property
    def client(self) -> Any:
        return self.session.client("dynamodb")


@contextmanager
def engine(*, modeled: bool) -> Iterator[Engine]:
    """A DynamoDB Local of its own for each run (the engine slows down as its in-memory database
    grows, which would penalise whichever run came later), metered, with DynamoDB's transaction
    conflicts, and the latency model when ``modeled``."""
    with running_engine(None) as local:
        session = LocalSession({"dynamodb": local.endpoint})
        meter, conflicts = RequestMeter(), ConflictEmulator()
        latency = LatencyModel() if modeled else None
        instruments.install(session, meter=meter, conflicts=conflicts, latency=latency)
        yield Engine(session, local.endpoint, meter, conflicts, latency)


def fresh_tables(client: Any, strategy: str) -> dict[str, str]:
    suffix = uuid.uuid4().hex[:6]
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


def run(
    key: str,
    workload: Workload,
    settings: Settings,
    *,
    modeled: bool = False,
    history: bool = False,
    under_way: bool = False,
    summary_batches: tuple[int, ...] = (),
) -> dict[str, Any]:
    """One strategy on one workload at ``settings``: ingest through the event source, then (for
    ``summary_batches``) the summary path on the stream the run produced."""
    label, make = STRATEGIES[key]
    with engine(modeled=modeled) as e:
        tables = fresh_tables(e.client, key)
        baseline: Counter[tuple[int, str]] = Counter()
        if history:
            baseline = seed_history(e.client, tables["table"], workload.sensors)
        if under_way:
            baseline = seed_days_under_way(e.client, tables["table"], set(workload.truth))
        reader = StreamReader(e.endpoint, tables["table"], client=e.client) if summary_batches else None
        if reader:
            reader.poll()  # the history's own records are not the workload's
        handler = make(e.session, tables, settings)
        fifo = key in FIFO_STRATEGIES
        fifo_settings = replace(settings, queue_type="fifo") if fifo else settings
        batch_size, concurrency = fifo_settings.event_batch_size, fifo_settings.event_max_concurrency
        requests0, units0 = e.meter.snapshot()
        cancelled0, added0 = Counter(e.meter.cancelled_units), e.latency.added_seconds if e.latency else 0.0
        with PeakRss() as memory:
            if fifo:  # the workload's repeated deliveries become lost deletes: SQS FIFO repeats in order
                drained = drain_fifo(
                    handler,
                    fifo_records(workload.messages),
                    lost_deletes=workload.repeated_ids,
                    batch_size=batch_size,
                    concurrency=concurrency,
                    timeout_s=settings.ingest_timeout_seconds,
                )
            else:
                drained = drain(
                    handler,
                    [sqs_record(m) for m in workload.deliveries],
                    batch_size=batch_size,
                    concurrency=concurrency,
                    timeout_s=settings.ingest_timeout_seconds,
                )
        requests, units = (a - b for a, b in zip(e.meter.snapshot(), (requests0, units0), strict=True))
        cancelled = Counter(e.meter.cancelled_units)
        cancelled.subtract(cancelled0)
        counts = Counter(day_counts(e.client, tables["table"]))
        counts.subtract(baseline)
        n = len(workload.messages)
        result: dict[str, Any] = {
            "workload": workload.name,
            "strategy": key,
            "label": label,
            "mode": "model" if modeled else "raw",
            "history": history,
            "batch_size": batch_size,
            "concurrency": concurrency,
            "messages": n,
            "deliveries": len(workload.deliveries),
            "seconds": drained.seconds,
            "messages_per_s": n / drained.seconds,
            "requests_per_message": requests / n,
            "write_units_per_message": units / n,
            "cancelled_units_per_message": {cause: units / n for cause, units in cancelled.items() if units},
            "invocations": drained.invocations,
            "slowest_invocation_s": drained.slowest_invocation,
            "listed": drained.listed,
            "conflicts": e.conflicts.conflicts,
            "overcount": sum(max(0, c - workload.truth.get(k, 0)) for k, c in counts.items()),
            "undercount": sum(max(0, t - counts.get(k, 0)) for k, t in workload.truth.items()),
            "peak_rss_mb": memory.peak / 2**20,
        }
        if e.latency:  # the modeled delays alone, as many in flight as the handler keeps: no CPU at all
            # (a), (b): one write at a time; (c), (d): the workers; (e): a FIFO batch is mostly one
            # sensor-day, one write (a bound from below on its in-flight writes, so an upper estimate)
            in_flight = concurrency * (settings.ingest_max_workers if key in "cd" else 1)
            result["latency_bound_msg_per_s"] = n / ((e.latency.added_seconds - added0) / in_flight)
        if reader:
            clear = not (history or under_way)  # seeded summary items stay: they are the history
            result["summary"] = summary_path(e, reader, tables["table"], settings, summary_batches, n, clear)
        return result


def summary_path(
    e: Engine, reader: StreamReader, table: str, settings: Settings, batches: tuple[int, ...], n: int, clear: bool
) -> list[dict[str, Any]]:
    """The summary handler on the stream the ingest run produced, in stream batches of each size
    (the stream read as one shard, in order: the least coalescing a batch can see). ``clear``
    deletes the summary items between sizes, so each size starts from the same table."""
    records = [r for r in reader.poll() if matches_filter(r)]
    handler = lambda_handler(summary.build_service(SummarySettings(table_name=table), e.session))
    out = []
    for size in batches:
        if clear:
            for item in scan_all(e.client, table):
                if schema.is_summary(item):
                    e.client.delete_item(TableName=table, Key={k: item[k] for k in (schema.SENSOR_ID, schema.DATE)})
        requests0, units0 = e.meter.snapshot()
        started, failures = time.perf_counter(), 0
        for start in range(0, len(records), size):
            event = stream_event(records[start : start + size], reader.stream_arn)
            response = handler(event, FakeContext(timeout_ms=settings.summary_timeout_seconds * 1000))
            failures += len(response["batchItemFailures"])
        seconds = time.perf_counter() - started
        requests, units = (a - b for a, b in zip(e.meter.snapshot(), (requests0, units0), strict=True))
        days = by_sensor(day_counts(e.client, table))
        out.append(
            {
                "batch_size": size,
                "records": len(records),
                "records_per_s": len(records) / seconds,
                "writes_per_record": requests / len(records),
                "write_units_per_message": units / n,
                "failures": failures,
                "exact": summaries(e.client, table) == days,
            }
        )
    return out


def print_workload(results: list[dict[str, Any]], workload: Workload) -> None:
    base = next((r for r in results if r["strategy"] == "a"), results[0])
    header = (
        f"{'strategy':40} {'mode':>5} {'msg/s':>7} {'req/msg':>7} {'WCU/msg':>7} {'listed':>6} "
        f"{'confl':>6} {'over':>6} {'under':>5} {'MB':>4} {'x msg/s':>7} {'x req':>6} {'x WCU':>6}"
    )
    print(f"\n{workload.name} {workload.description}; {len(workload.deliveries):,} deliveries (5% duplicated)")
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


def _exact_on_every_workload(report: dict[str, Any], strategy: str, goal: str) -> list[tuple[str, str, bool]]:
    """The goal that ``strategy`` over- and undercounts nothing on any workload it ran (none: no goal)."""
    runs = [r for r in report["results"] if r["strategy"] == strategy]
    if not runs:
        return []
    measured = ", ".join(f"{r['workload']} {r['mode']}: {r['overcount']}/{r['undercount']}" for r in runs)
    return [(goal, measured, all(r["overcount"] == r["undercount"] == 0 for r in runs))]


def goals(report: dict[str, Any], settings: Settings) -> list[tuple[str, str, bool]]:
    """(goal, measured, met) at the stack's defaults, W1, under the latency model."""
    by = {(r["workload"], r["strategy"], r["mode"], r["history"]): r for r in report["results"]}
    out: list[tuple[str, str, bool]] = []
    out += _exact_on_every_workload(report, "c", "(c) exact on every workload")
    a, c = by.get(("W1", "a", "model", False)), by.get(("W1", "c", "model", False))
    if a and c:
        ratio = c["messages_per_s"] / a["messages_per_s"]
        out.append(("(c) >= 5x (a) messages/s, latency model", f"{ratio:.2f}x", ratio >= 5))
    if c:
        out.append(
            ("(c) <= 0.30 requests per message", f"{c['requests_per_message']:.3f}", c["requests_per_message"] <= 0.30)
        )
        out.append(
            (
                "(c) <= 2.6 WCU per message in ingest",
                f"{c['write_units_per_message']:.3f}",
                c["write_units_per_message"] <= 2.6,
            )
        )
    aged = by.get(("W1", "c", "raw", True))
    if aged and aged.get("summary"):
        s = next(s for s in aged["summary"] if s["batch_size"] == settings.summary_batch_size)
        total = aged["write_units_per_message"] + s["write_units_per_message"]
        out.append(
            (
                "(c) <= 3.5 WCU per message, ingest + summary, a year of history",
                f"{aged['write_units_per_message']:.3f} + {s['write_units_per_message']:.3f} = {total:.3f}",
                total <= 3.5 and s["exact"],
            )
        )
    out += _exact_on_every_workload(report, "e", "(e) FIFO exact on every workload")
    e = by.get(("W1", "e", "model", False)) or by.get(("W1", "e", "raw", False))
    if e:
        ledger = f" (the ledger's (c): {c['write_units_per_message']:.3f})" if c else ""
        out.append(
            (
                "(e) FIFO <= 1.1 WCU per message in ingest",
                f"{e['write_units_per_message']:.3f}{ledger}",
                e["write_units_per_message"] <= 1.1,
            )
        )
    hot = [r for r in report["results"] if r["workload"] == "W4" and r["strategy"] == "c"]
    if hot:
        out.append(
            (
                "W4: exact, no message listed for a conflict",
                "; ".join(
                    f"{r['mode']}: {r['conflicts']} conflicts, {r['listed']} listed, "
                    f"{r['overcount']}/{r['undercount']} over/under"
                    for r in hot
                ),
                all(r["listed"] == 0 and r["overcount"] == r["undercount"] == 0 for r in hot),
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="CI's smoke run: 1,000 messages of W1 and W4, a short sweep"
    )
    parser.add_argument("--messages", type=int, default=20_000, help="messages per workload (default 20,000)")
    parser.add_argument("--workloads", default="W1,W2,W3,W4")
    parser.add_argument("--strategies", default="a,b,c,d,e")
    parser.add_argument("--modes", default="raw,model", help="raw (DynamoDB Local as is), model (latency model)")
    parser.add_argument("--no-sweep", action="store_true", help="skip the batch-size sweep")
    parser.add_argument("--only-sweep", action="store_true", help="the batch-size sweep alone")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a stack setting other than the default (a context key, e.g. ingestBatchSize=100), printed",
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "latest.json")
    args = parser.parse_args(argv)
    n = 1_000 if args.quick else args.messages
    if args.quick:
        args.workloads = "W1,W4"
    overrides = dict(item.split("=", 1) for item in args.set)
    settings = Settings.from_context(overrides.get) if overrides else DEPLOYED
    print(
        f"SensorDigest benchmark, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, DynamoDB Local; {n:,} messages per workload; "
        f"as deployed: batches of {settings.ingest_batch_size:,}, {settings.ingest_max_concurrency} invocations "
        f"at once, {settings.ingest_max_workers} workers each, stream batches of {settings.summary_batch_size:,}; "
        f"FIFO (e): batches of {settings.fifo_batch_size}, no window, {settings.fifo_max_concurrency} at once"
    )
    if overrides:
        print(f"NOT THE DEFAULTS: {', '.join(args.set)}")
    report: dict[str, Any] = {"messages": n, "date": datetime.now(UTC).isoformat(), "overrides": overrides}
    report["results"] = []
    report["settings"] = {
        k: getattr(settings, k)
        for k in (
            "ingest_batch_size",
            "ingest_batching_window_seconds",
            "ingest_max_concurrency",
            "ingest_max_workers",
            "summary_batch_size",
            "summary_batching_window_seconds",
            "fifo_batch_size",
            "fifo_max_concurrency",
        )
    }
    route_service_logs(verbose=False)  # the handlers' warnings (conflicts, retries) would interleave the tables
    summary_sizes = tuple(sorted({100, 1_000, settings.summary_batch_size}))
    for name in [] if args.only_sweep else args.workloads.split(","):
        workload = WORKLOADS[name](n)
        results = []
        for mode in args.modes.split(","):
            for key in args.strategies.split(","):
                if (key == "b" and name not in B_WORKLOADS) or (mode == "model" and key not in MODELED):
                    continue
                young_summary = summary_sizes if name == "W1" and key in "ce" and mode == "raw" else ()
                results.append(run(key, workload, settings, modeled=mode == "model", summary_batches=young_summary))
        print_workload(results, workload)
        report["results"] += results
        ordered = next((r for r in results if r["strategy"] == "e" and r.get("summary")), None)
        if ordered:  # a FIFO batch writes a sensor-day per 10 messages: more stream records to coalesce
            print_summary(ordered, "W1 (e) FIFO, young sensors (no history)")
        if name == "W1" and "c" in args.strategies and "raw" in args.modes:
            young = next(r for r in results if r["strategy"] == "c" and r["mode"] == "raw")
            print_summary(young, "W1 (c), young sensors (no history)")
            aged = run("c", workload, settings, history=True, summary_batches=(settings.summary_batch_size,))
            report["results"].append(aged)
            print(
                f"\nW1 (c) with a year of history per sensor: {aged['write_units_per_message']:.3f} WCU and "
                f"{aged['requests_per_message']:.3f} requests per message in ingest, "
                f"{aged['overcount']}/{aged['undercount']} over/under"
            )
            print_summary(aged, "W1 (c), a year of history per sensor")
    if "e" in args.strategies and not args.only_sweep:
        print("\nordered mode (e) on the sweep's shapes, a backlog with the day under way (batches of 10):")
        report["fifo_shapes"] = sweep.fifo_shapes(run, settings, quick=args.quick)
    if not args.no_sweep:
        report["sweep"] = sweep.run_sweep(
            run,
            settings,
            quick=args.quick,
            plot=None if args.quick else Path(__file__).parent.parent / "docs" / "batching.svg",
        )
    met = goals(report, settings)
    if met:
        print("\ngoals (W1 unless named; at the stack's defaults; speed under the latency model):")
        for goal, measured, ok in met:
            print(f"  {goal:64} {measured}: {'met' if ok else 'MISSED'}")
    report["goals"] = [{"goal": g, "measured": m, "met": ok} for g, m, ok in met]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(f"\nresults: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
