"""``python -m bench.resend``: the duplicate path's speed against the first sending.

A producer that re-sends reports it already sent (the same ``event_id``s in new SQS messages: a
replay after an outage, a retried export) sends first deliveries that ingest must find counted. This
sends W1 (10,000 messages by default) through ingest as deployed, under the latency model, then the
same reports again as new messages, and prints messages per second, requests and write units per
message of each pass, the ratio, and whether the counts stayed exact. Strategies: (c) the compact
ledger, (g) the per-message ledger.
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import replace
from typing import Any

from bench import runner
from bench.esm import drain
from bench.strategies import STRATEGIES
from bench.workloads import realtime
from sensor_digest.store.reads import day_counts
from sensor_digest_cdk.shape import PipelineShape
from sensor_digest_tools.lambda_runtime.events import sqs_record


def measure(key: str, n: int, settings: PipelineShape) -> dict[str, Any]:
    workload = realtime(n)
    again = [replace(m, message_id=f"again-{m.message_id}") for m in workload.messages]
    out: dict[str, Any] = {"strategy": key, "label": STRATEGIES[key][0], "messages": n}
    with runner.engine(modeled=True) as e:
        tables = runner.fresh_tables(e.client, key)
        handler = STRATEGIES[key][1](e.session, tables, settings)
        for name, messages in (("first", workload.messages), ("again", again)):
            e.meter.reset()
            drained = drain(
                handler,
                [sqs_record(m) for m in messages],
                batch_size=settings.ingest_batch_size,
                concurrency=settings.ingest_max_concurrency,
                timeout_s=settings.ingest_timeout_seconds,
            )
            requests, units = e.meter.snapshot()
            out[name] = {
                "messages_per_s": n / drained.seconds,
                "requests_per_message": requests / n,
                "write_units_per_message": units / n,
                "listed": drained.listed,
            }
        out["exact"] = Counter(day_counts(e.client, tables["table"])) == workload.truth
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.resend", description=__doc__)
    parser.add_argument("--messages", type=int, default=10_000)
    args = parser.parse_args(argv)
    settings = PipelineShape()
    print(f"W1, {args.messages:,} reports sent, then sent again as new messages; as deployed, latency model")
    for key in ("c", "g"):
        r = measure(key, args.messages, settings)
        first, again = r["first"], r["again"]
        print(
            f"{r['label']:50} first {first['messages_per_s']:7,.0f} msg/s "
            f"{first['write_units_per_message']:.3f} WRU/msg; "
            f"again {again['messages_per_s']:7,.0f} msg/s {again['write_units_per_message']:.3f} WRU/msg "
            f"{again['requests_per_message']:.3f} req/msg; again/first speed "
            f"{again['messages_per_s'] / first['messages_per_s']:.2f}x; exact: {'yes' if r['exact'] else 'NO'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
