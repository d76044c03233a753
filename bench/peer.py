"""The comparison with the exactly-once a user would otherwise pick: Powertools' ``BatchProcessor``
with ``idempotent_function`` (b) against this project's ledger mode (c), side by side in one run.

The workload is ``workloads.peer`` (4,000 messages, 200 sensors, one day, 10% delivered twice with
``ApproximateReceiveCount`` 2), under the latency model with DynamoDB's transaction conflicts
emulated, in two phases: a **new day** (no day item exists yet: the first writes of every
sensor-day, from both concurrent invocations at once) and a **day under way** (every day item and
its month's summary item exist). Each phase runs at the stack's defaults and again at batches of
10 (the size Powertools' documentation shows), so the figures say where ours is not the cheapest.

Dollars are DynamoDB on-demand request prices (``PRICE_PER_MILLION``) times the metered units:
write units as ``instruments.metering`` counts them (cancelled transactions charged in full, shown
apart), read units computed from the requests. Speed is measured under the latency model, so the
ratio (c)/(b) is the figure to read, not either one alone.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bench import runner
from bench.workloads import Workload, peer
from sensor_digest_cdk.shape import PipelineShape

# DynamoDB on-demand, us-east-1, $ per million request units (AWS's price list since November 2024)
PRICE_PER_MILLION = {"write": 0.625, "read": 0.125}
PHASES = ("new day", "day under way")
POWERTOOLS_BATCH = 10
TARGET = 0.85  # (c)'s dollars at most this share of (b)'s, both phases, at the defaults


def dollars_per_million(result: dict[str, Any]) -> float:
    """DynamoDB dollars per million messages of a run."""
    writes, reads = float(result["write_units_per_message"]), float(result["read_units_per_message"])
    return writes * PRICE_PER_MILLION["write"] + reads * PRICE_PER_MILLION["read"]


def settings_variants(settings: PipelineShape, quick: bool) -> list[tuple[str, PipelineShape]]:
    deployed = ("as deployed", settings)
    if quick:
        return [deployed]
    return [deployed, (f"batches of {POWERTOOLS_BATCH}", replace(settings, ingest_batch_size=POWERTOOLS_BATCH))]


def run_peer(settings: PipelineShape, *, quick: bool = False, messages: int = 4_000) -> list[dict[str, Any]]:
    """(b) and (c) on the peer workload, each phase, at each settings variant, under the latency model."""
    workload = peer(1_000 if quick else messages)
    rows = []
    for variant, at in settings_variants(settings, quick):
        for phase in PHASES:
            for key in "bc":
                result = runner.run(key, workload, at, modeled=True, under_way=phase == PHASES[1])
                result.update(
                    phase=phase,
                    variant=variant,
                    dollars_per_million=dollars_per_million(result),
                )
                rows.append(result)
    print_peer(rows, workload)
    return rows


def pairs(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """((b), (c)) of each variant and phase, in the order they ran."""
    out = []
    for b in (r for r in rows if r["strategy"] == "b"):
        c = next(r for r in rows if r["strategy"] == "c" and (r["variant"], r["phase"]) == (b["variant"], b["phase"]))
        out.append((b, c))
    return out


def print_peer(rows: list[dict[str, Any]], workload: Workload) -> None:
    print(
        f"\n{workload.name} {workload.description}; {len(workload.deliveries):,} deliveries "
        f"({workload.duplicate_rate:.0%} delivered twice), latency model, conflicts emulated"
    )
    header = (
        f"{'settings':14} {'phase':14} {'strategy':34} {'msg/s':>6} {'WRU/msg':>7} {'cancel':>6} "
        f"{'RRU/msg':>7} {'$/M msg':>7} {'listed':>6} {'over':>5} {'under':>5}"
    )
    print(header)
    print("-" * len(header))
    for b, c in pairs(rows):
        for r in (b, c):
            cancelled = sum(r["cancelled_units_per_message"].values())
            print(
                f"{r['variant']:14} {r['phase']:14} {r['label']:34} {r['messages_per_s']:6.0f} "
                f"{r['write_units_per_message']:7.3f} {cancelled:6.3f} {r['read_units_per_message']:7.3f} "
                f"{r['dollars_per_million']:7.3f} {r['listed']:6d} {r['overcount']:5d} {r['undercount']:5d}"
            )
        causes = ", ".join(f"{k} {v:.3f}" for k, v in sorted(c["cancelled_units_per_message"].items())) or "none"
        print(
            f"{'':29} (c)/(b): dollars {ratio(c, b, 'dollars_per_million'):.2f}x, "
            f"msg/s {ratio(c, b, 'messages_per_s'):.2f}x; (c)'s cancelled WRU/msg: {causes}"
        )


def ratio(c: dict[str, Any], b: dict[str, Any], key: str) -> float:
    return float(c[key]) / float(b[key]) if b[key] else float("inf")


def peer_goals(rows: list[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    """(goal, measured, met): at the defaults, (c)'s dollars at most ``TARGET`` of (b)'s on both
    phases, and (c) exact."""
    out = []
    for b, c in pairs(rows):
        if b["variant"] != "as deployed":
            continue
        share = ratio(c, b, "dollars_per_million")
        out.append(
            (
                f"peer, {c['phase']}: (c) <= {TARGET}x (b)'s DynamoDB $",
                f"{c['dollars_per_million']:.3f} / {b['dollars_per_million']:.3f} = {share:.2f}x, "
                f"msg/s {ratio(c, b, 'messages_per_s'):.1f}x",
                share <= TARGET,
            )
        )
    exact = [c for _, c in pairs(rows)]
    out.append(
        (
            "peer: (c) exact in every phase and setting",
            ", ".join(f"{c['overcount']}/{c['undercount']}" for c in exact),
            all(c["overcount"] == c["undercount"] == 0 for c in exact),
        )
    )
    return out
