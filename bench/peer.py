"""The comparison with the exactly-once a user would otherwise pick: Powertools' ``BatchProcessor``
with ``idempotent_function`` (b) against this project's compact ledger (c), side by side in one run
with the blog's at-least-once flow (a) and the per-message ledger (g) that (c) replaced.

Two fleets: ``workloads.peer`` (4,000 messages, 200 busy sensors, one day) and ``workloads.fleet``
(4,000 messages, 50,000 sensors: about one report per sensor-day in a batch), each with 10% of its
messages delivered twice (``ApproximateReceiveCount`` 2), under the latency model with DynamoDB's
transaction conflicts emulated, in two phases: a **new day** (no day item exists yet: the first
writes of every sensor-day, from both concurrent invocations at once) and a **day under way** (every
sensor-day's first report counted before by the same strategy, and its month's summary item
written). Each phase runs at the stack's defaults and again at batches of 10 (the size Powertools'
documentation shows), so the figures say where ours is not the cheapest.

Dollars are DynamoDB on-demand request prices (``PRICE_PER_MILLION``) times the metered units:
write units as ``instruments.metering`` counts them (cancelled transactions charged in full, shown
apart), read units computed from the requests. Speed is measured under the latency model, so the
ratio (c)/(b) is the figure to read, not either one alone.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bench import runner
from bench.goals import exactness
from bench.prices import PRICE_PER_MILLION, dollars_per_million
from bench.workloads import QUICK_MESSAGES, Workload, fleet, peer
from sensor_digest_cdk.shape import PipelineShape

PHASES = ("new day", "day under way")
POWERTOOLS_BATCH = 10
TARGET = 0.45  # (c)'s dollars at most this share of (b)'s, both phases, both fleets, at the defaults
TARGET_SMALL_BATCHES = 1.0  # and at most (b)'s at batches of 10
STRATEGIES = "abcg"


def settings_variants(settings: PipelineShape, quick: bool) -> list[tuple[str, PipelineShape]]:
    deployed = ("as deployed", settings)
    if quick:
        return [deployed]
    return [deployed, (f"batches of {POWERTOOLS_BATCH}", replace(settings, ingest_batch_size=POWERTOOLS_BATCH))]


def run_peer(settings: PipelineShape, *, quick: bool = False, messages: int = 4_000) -> list[dict[str, Any]]:
    """(a), (b), (c) and (g) on both fleets, each phase, at each settings variant, under the latency model."""
    n = QUICK_MESSAGES if quick else messages
    rows = []
    for workload in (peer(n), fleet(n)):
        for variant, at in settings_variants(settings, quick):
            for phase in PHASES:
                for key in STRATEGIES:
                    result = runner.run(key, workload, at, modeled=True, under_way=phase == PHASES[1])
                    result.update(phase=phase, variant=variant, dollars_per_million=dollars_per_million(result))
                    rows.append(result)
        print_peer([r for r in rows if r["workload"] == workload.name], workload)
    return rows


def pairs(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """((b), (c)) of each fleet, variant and phase, in the order they ran."""
    out = []
    for b in (r for r in rows if r["strategy"] == "b"):
        c = next(r for r in rows if r["strategy"] == "c" and _case(r) == _case(b))
        out.append((b, c))
    return out


def _case(r: dict[str, Any]) -> tuple[str, str, str]:
    return r["workload"], r["variant"], r["phase"]


def print_peer(rows: list[dict[str, Any]], workload: Workload) -> None:
    print(
        f"\n{workload.name} {workload.description}; {len(workload.deliveries):,} deliveries "
        f"({workload.duplicate_rate:.0%} delivered twice), latency model, conflicts emulated"
    )
    header = (
        f"{'settings':14} {'phase':14} {'strategy':50} {'msg/s':>6} {'WRU/msg':>7} {'cancel':>6} "
        f"{'RRU/msg':>7} {'$/M msg':>7} {'listed':>6} {'over':>5} {'under':>5}"
    )
    print(header)
    print("-" * len(header))
    for b, c in pairs(rows):
        for r in (r for r in rows if _case(r) == _case(b)):
            cancelled = sum(r["cancelled_units_per_message"].values())
            print(
                f"{r['variant']:14} {r['phase']:14} {r['label']:50} {r['messages_per_s']:6.0f} "
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
    """(goal, measured, met): (c)'s dollars at most ``TARGET`` of (b)'s at the defaults and at most
    ``TARGET_SMALL_BATCHES`` at batches of 10, on both fleets and phases; (c) exact everywhere."""
    out = []
    for b, c in pairs(rows):
        target = TARGET if b["variant"] == "as deployed" else TARGET_SMALL_BATCHES
        share = ratio(c, b, "dollars_per_million")
        out.append(
            (
                f"peer, {c['workload']} {c['variant']}, {c['phase']}: (c) <= {target}x (b)'s DynamoDB $",
                f"{c['dollars_per_million']:.3f} / {b['dollars_per_million']:.3f} = {share:.2f}x, "
                f"msg/s {ratio(c, b, 'messages_per_s'):.1f}x",
                share <= target,
            )
        )
    measured, met = exactness(
        [r for r in rows if r["strategy"] in "bcg"],
        lambda r: f"{r['workload']}{r['strategy']} {r['variant']}, {r['phase']}",
    )
    out.append(("peer: (b), (c), (g) exact in every fleet, phase and setting", measured, met))
    return out + fleet_goals(rows)


def fleet_goals(rows: list[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    """The large fleet with the day under way, as deployed: (c) at most 1.1 write units per message,
    and its reads cost no more than its writes save against the per-message ledger (g)."""
    out = []
    fleet_under_way = [r for r in rows if _case(r) == ("F", "as deployed", PHASES[1])]
    c = next((r for r in fleet_under_way if r["strategy"] == "c"), None)
    g = next((r for r in fleet_under_way if r["strategy"] == "g"), None)
    if c is not None:
        out.append(
            (
                "large fleet, day under way: (c) <= 1.1 WRU per message",
                f"{c['write_units_per_message']:.3f}",
                c["write_units_per_message"] <= 1.1,
            )
        )
    if c is not None and g is not None:
        saved = (g["write_units_per_message"] - c["write_units_per_message"]) * PRICE_PER_MILLION["write"]
        spent = c["read_units_per_message"] * PRICE_PER_MILLION["read"]
        out.append(
            (
                "large fleet, day under way: (c)'s reads cost no more than its writes save against (g)",
                f"reads ${spent:.3f} per M msg, writes saved ${saved:.3f} per M msg",
                spent <= saved,
            )
        )
    return out
