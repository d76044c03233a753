"""``python -m bench.engine_jit``: DynamoDB Local with the client JIT alone against Java's default.

``start_engine`` runs the engine with ``-XX:TieredStopAtLevel=1`` (C1 only). This sends the same W1
(10,000 messages by default) through ingest as deployed (the compact ledger, raw: no latency model)
on a fresh engine of each kind, one after the other, and prints each run's seconds, messages per
second and the engine's CPU seconds (its process's user and system time, read when it has
stopped), the ratios of C1 alone against the default, and whether both counted exactly.
"""

from __future__ import annotations

import argparse
import resource
import time
from collections import Counter
from typing import Any

from bench import runner
from bench.esm import drain
from bench.strategies import STRATEGIES
from bench.workloads import realtime
from sensor_digest.store.reads import day_counts
from sensor_digest_cdk.shape import PipelineShape
from sensor_digest_tools.aws.dynamodb_local import JIT_OPTION
from sensor_digest_tools.lambda_runtime.events import sqs_record

JITS: dict[str, tuple[str, ...]] = {"C1 alone (the default here)": (JIT_OPTION,), "Java's default (C1 then C2)": ()}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(java_options: tuple[str, ...], n: int, settings: PipelineShape) -> dict[str, Any]:
    workload = realtime(n)
    cpu_before, start = children_cpu(), time.perf_counter()
    with runner.engine(modeled=False, java_options=java_options) as e:
        tables = runner.fresh_tables(e.client, "c")
        handler = STRATEGIES["c"][1](e.session, tables, settings)
        drained = drain(
            handler,
            [sqs_record(m) for m in workload.messages],
            batch_size=settings.ingest_batch_size,
            concurrency=settings.ingest_max_concurrency,
            timeout_s=settings.ingest_timeout_seconds,
        )
        exact = Counter(day_counts(e.client, tables["table"])) == workload.truth
    seconds = time.perf_counter() - start  # the engine's start and stop included
    return {"seconds": seconds, "per_s": n / drained.seconds, "cpu": children_cpu() - cpu_before, "exact": exact}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.engine_jit", description=__doc__)
    parser.add_argument("--messages", type=int, default=10_000)
    args = parser.parse_args(argv)
    if args.messages < 1:
        parser.error("--messages takes a whole number of at least 1")
    settings = PipelineShape()
    print(f"W1, {args.messages:,} reports, ingest as deployed (compact ledger), raw DynamoDB Local")
    rows = {label: measure(options, args.messages, settings) for label, options in JITS.items()}
    for label, row in rows.items():
        print(
            f"  {label:30} {row['seconds']:6.1f} s  {row['per_s']:7.0f} msg/s  "
            f"engine CPU {row['cpu']:6.1f} s  exact: {row['exact']}"
        )
    c1, default = rows.values()
    time_ratio, cpu_ratio = c1["seconds"] / default["seconds"], c1["cpu"] / default["cpu"]
    print(f"  C1 alone / default: time {time_ratio:.2f}x, engine CPU {cpu_ratio:.2f}x")
    return 0 if all(row["exact"] for row in rows.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
