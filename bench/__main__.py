"""``python -m bench [--quick]``: cost and speed of four counting strategies, as the stack deploys them.

Every strategy is a Lambda handler run as the SQS event source runs it with the stack's settings
(``sensor_digest_cdk/shape.py``, ``PipelineShape``: batch size, maximum concurrency, worker threads,
timeout) on a backlog, against DynamoDB Local with DynamoDB's transaction conflicts emulated, twice: raw (this machine's
DynamoDB Local) and under the latency model of a networked DynamoDB
(``sensor_digest_tools.instruments.latency``). Prints messages per second, requests and write units per
message (ingest and summary apart), messages listed for a retry, over- and undercount, and ratios
against (a); then the summary path, the batch-size sweep with its table and plot, and the goals.
Nothing here asserts on speed; ``--quick`` is a smoke run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench import pages, peer, report, runner, sweep
from bench.goals import concurrency_goals, goals
from bench.plan import Plan
from bench.workloads import WORKLOADS
from sensor_digest_tools.local.pipeline import route_service_logs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 500 messages a workload, a short sweep")
    parser.add_argument("--messages", type=int, default=20_000, help="messages per workload (default 20,000)")
    parser.add_argument("--workloads", default="W1,W2,W3,W4,F")
    parser.add_argument("--strategies", default="a,b,c,d,e,g")
    parser.add_argument("--modes", default="raw,model", help="raw (DynamoDB Local as is), model (latency model)")
    parser.add_argument("--no-sweep", action="store_true", help="skip the batch-size sweep")
    parser.add_argument("--only-sweep", action="store_true", help="the batch-size sweep alone")
    parser.add_argument(
        "--only-peer",
        action="store_true",
        help="the comparison with Powertools' batch + idempotency alone (new day and day under way)",
    )
    parser.add_argument("--no-peer", action="store_true", help="skip the comparison with Powertools")
    parser.add_argument(
        "--no-concurrency", action="store_true", help="skip (c) on W1 at 10 invocations at once against the default"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a stack setting other than the default (a context key, e.g. ingestBatchSize=100), printed",
    )
    parser.add_argument("--out", type=Path, default=report.RESULTS)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    plan = Plan.of(
        quick=args.quick,
        messages=args.messages,
        workloads=args.workloads,
        strategies=args.strategies,
        modes=args.modes,
        sets=args.set,
        no_sweep=args.no_sweep or args.only_peer,
        only_sweep=args.only_sweep,
        only_peer=args.only_peer,
        no_peer=args.no_peer,
        no_concurrency=args.no_concurrency,
    )
    report.print_header(plan)
    record = report.new_report(plan)
    route_service_logs(verbose=False)  # the handlers' warnings (conflicts, retries) would interleave the tables
    for name in plan.workload_names():
        workload = WORKLOADS[name](plan.messages)
        results = runner.run_planned(plan, name, workload)
        report.print_workload(results, workload)
        record["results"] += results
        report.print_young_summaries(results, ledger=plan.ages(name))
        if plan.ages(name):
            aged = runner.run_aged(workload, plan.settings)
            record["results"].append(aged)
            report.print_aged(aged)
    if plan.peer:
        record["peer"] = peer.run_peer(plan.settings, quick=plan.quick)
    if plan.concurrency:
        print("\nraised concurrency: (c) on W1, latency model")
        record["concurrency"] = runner.run_concurrency(plan.settings, quick=plan.quick)
    if plan.fifo_shapes:
        report.print_fifo_shapes_heading()
        record["fifo_shapes"] = sweep.fifo_shapes(runner.run, plan.settings, quick=plan.quick)
    if plan.sweep:
        record["sweep"] = sweep.run_sweep(
            runner.run, plan.settings, quick=plan.quick, plot=None if plan.quick else report.PLOT
        )
    met = goals(record, plan.settings) + peer.peer_goals(record.get("peer", []))
    met += concurrency_goals(record.get("concurrency", []))
    report.print_goals(met)
    record["goals"] = [{"goal": g, "measured": m, "met": ok} for g, m, ok in met]
    report.write(record, args.out)
    whole = all(getattr(args, k) == parser.get_default(k) for k in ("workloads", "strategies", "modes", "messages"))
    if whole and not (plan.quick or args.only_sweep or args.only_peer or args.no_sweep or args.no_peer):
        print(f"results page: {pages.write_page(record)}")  # a whole run only: a partial one would replace it
    else:
        print("results page left as it is (not a whole run)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
