"""``python -m bench.alarms [--quick] [--out FILE]``: what alarm rules cost ingest, side by side in one
run, and how long a report takes to become its event on the local pipeline.

(c) runs as the stack deploys it (its defaults, under the latency model) on W1+r1 (200 busy sensors)
and F+r1 (a fleet of 50,000, a report per sensor-day), each with one temperature reading a report
(15.0 to 30.0), three times: without rules; with one fleet rule no value breaches (above 100: no
transition); and with one that some values breach (above 29.5, clear at 28). The table prints write
and read units per message with their ratios to the run without rules, the alarm writes, and
whether every count was exact. Goals (issue #48): no rule, identical; one rule without transitions,
at most 1.05x the write units; read units per message at F at most 0.5 with rules on.

Then the local pipeline (``LocalPipeline``, the demo's engine and queue) carries reports that each
make a transition: from the send to the event on the local bus, p50 and p99. Figures only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from bench import runner
from bench.workloads import QUICK_MESSAGES, fleet, realtime, with_readings
from sensor_digest.alarms.rules import AlarmRule, RuleSet
from sensor_digest.alarms.store import RuleStore
from sensor_digest_cdk.shape import PipelineShape
from sensor_digest_tools.local.pipeline import LocalPipeline, PipelineOptions, route_service_logs

RULE = {"name": "hot", "reading": "temperature", "sensors": "*", "condition": "above"}
VARIANTS: tuple[tuple[str, dict[str, Any] | None], ...] = (
    ("no rule", None),
    ("one rule, no transition", {**RULE, "threshold": 100}),
    ("one rule, transitions", {**RULE, "threshold": 29.5, "clear": 28}),
)


def costs(quick: bool) -> list[dict[str, Any]]:
    rows = []
    n = QUICK_MESSAGES if quick else None
    for workload in (with_readings(realtime(n or 20_000), 1), with_readings(fleet(n or 4_000), 1)):
        print(f"\n{workload.name}: {workload.description}; (c) at the stack's defaults, latency model")
        print(f"{'rules':26} {'WRU/msg':>8} {'ratio':>6} {'RRU/msg':>8} {'ratio':>6} {'alarm writes':>12}  exact")
        base: dict[str, Any] | None = None
        for label, raw in VARIANTS:
            rules = None if raw is None else RuleSet.of([AlarmRule.parse(raw)])
            result = runner.run("c", workload, PipelineShape(), modeled=True, rules=rules)
            base = base or result
            exact = result["overcount"] == 0 and result["undercount"] == 0
            w, r = result["write_units_per_message"], result["read_units_per_message"]
            print(
                f"{label:26} {w:8.3f} {w / base['write_units_per_message']:5.2f}x {r:8.3f} "
                f"{r / base['read_units_per_message']:5.2f}x {result['alarm_writes']:12d}  {'yes' if exact else 'no'}"
            )
            rows.append({**result, "rules": label})
    return rows


def latency(reports: int) -> dict[str, Any]:
    """Send -> event on the local pipeline: each report flips its own sensor's alarm."""
    route_service_logs(False)
    with LocalPipeline(PipelineOptions()) as pipeline:
        target = pipeline.target
        RuleStore(ledger_table_name=str(target.ledger), client=pipeline.dynamodb()).save(
            RuleSet.of([AlarmRule.parse({**RULE, "threshold": 30})]), expected=0, by="bench", now=0
        )
        sent: dict[int, float] = {}
        for i in range(reports):
            body = {"sensor_id": i, "event_id": f"lat-{i}", "timestamp": time.time(), "readings": {"temperature": 31}}
            pipeline.sqs().send_message(QueueUrl=target.queue_url, MessageBody=json.dumps(body))
            sent[i] = time.monotonic()
            time.sleep(0.01)
        deadline = time.monotonic() + 120
        seen: dict[int, float] = {}
        while len(seen) < reports and time.monotonic() < deadline:
            for event, arrived in zip(pipeline.events.events, pipeline.events.arrivals, strict=False):
                seen.setdefault(int(event["detail"]["sensor_id"]), arrived)
            time.sleep(0.005)
    lags = sorted(seen[i] - sent[i] for i in seen)
    q = statistics.quantiles(lags, n=100, method="inclusive") if len(lags) > 1 else lags * 99
    figures = {"reports": reports, "events": len(lags), "p50_s": q[49], "p99_s": q[98], "max_s": lags[-1]}
    print(
        f"\nsend -> event on the local pipeline: {len(lags)} of {reports} reports, "
        f"p50 {figures['p50_s']:.2f} s, p99 {figures['p99_s']:.2f} s, max {figures['max_s']:.2f} s"
    )
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.alarms", description=__doc__)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_MESSAGES} messages a workload")
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    figures = {"costs": costs(args.quick), "latency": latency(50 if args.quick else 300)}
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
