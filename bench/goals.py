"""The benchmark's goals, checked on its results: (goal, measured, met) for each that the runs made
can tell (W1 unless named; at the stack's defaults; speed under the latency model).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.prices import dollars_per_million
from sensor_digest_cdk.shape import PipelineShape


def exactness(runs: list[dict[str, Any]], name: Callable[[dict[str, Any]], str]) -> tuple[str, bool]:
    """Over/under of ``runs`` in a few words: the runs that missed by name (``name(run)``), the rest
    counted; and whether every run was exact."""
    missed = [r for r in runs if r["overcount"] or r["undercount"]]
    said = [f"{name(r)}: {r['overcount']}/{r['undercount']}" for r in missed]
    exact = len(runs) - len(missed)
    if exact:
        said.append(f"0/0 over/under in {'each of' if not missed else 'the other'} {exact} run(s)")
    return ", ".join(said), not missed


def _exact_on_every_workload(report: dict[str, Any], strategy: str, goal: str) -> list[tuple[str, str, bool]]:
    """The goal that ``strategy`` over- and undercounts nothing on any workload it ran (none: no goal)."""
    runs = [r for r in report["results"] if r["strategy"] == strategy]
    if not runs:
        return []
    measured, met = exactness(runs, lambda r: f"{r['workload']} {r['mode']}")
    return [(goal, measured, met)]


def goals(report: dict[str, Any], settings: PipelineShape) -> list[tuple[str, str, bool]]:
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
    for name, limit in (("W1", 1.0), ("W3", 2.0)):
        run = by.get((name, "c", "model", False))
        if run:
            out.append(
                (
                    f"{name}: (c) <= {limit} WCU per message in ingest",
                    f"{run['write_units_per_message']:.3f}",
                    run["write_units_per_message"] <= limit,
                )
            )
    out += _against_per_message(by)
    sized = [r for r in report["results"] if r["strategy"] == "c" and "largest_item_bytes" in r]
    if sized:
        largest = max(r["largest_item_bytes"] for r in sized)
        out.append(
            (
                "(c): every item under 1 KB in every run (so each write is one unit per item, two in a transaction)",
                f"largest {largest:,} bytes",
                largest <= 1024,
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


def _against_per_message(by: dict[tuple[Any, ...], dict[str, Any]]) -> list[tuple[str, str, bool]]:
    """(c) against (g), the per-message ledger it replaced, in the same run: W4's write units no worse,
    W1's messages per second no lower (latency model)."""
    out = []
    c4, g4 = by.get(("W4", "c", "model", False)), by.get(("W4", "g", "model", False))
    if c4 and g4:
        out.append(
            (
                "W4: (c) WCU per message no more than (g)'s (the per-message ledger)",
                f"{c4['write_units_per_message']:.3f} vs {g4['write_units_per_message']:.3f}",
                c4["write_units_per_message"] <= g4["write_units_per_message"],
            )
        )
    c1, g1 = by.get(("W1", "c", "model", False)), by.get(("W1", "g", "model", False))
    if c1 and g1:
        out.append(
            (
                "W1: (c) messages/s no lower than (g)'s",
                f"{c1['messages_per_s']:,.0f} vs {g1['messages_per_s']:,.0f}",
                c1["messages_per_s"] >= g1["messages_per_s"],
            )
        )
    return out


def concurrency_goals(rows: list[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    """(c) at 10 invocations at once within 15% of its write units at the default, exact."""
    if len(rows) != 2:
        return []
    default, raised = rows
    share = raised["write_units_per_message"] / default["write_units_per_message"]
    dollars = dollars_per_million(raised) / dollars_per_million(default)
    return [
        (
            f"W1 at {raised['concurrency']} invocations at once: (c) WCU per message within 15% of "
            f"{default['concurrency']} (the default), exact",
            f"{raised['write_units_per_message']:.3f} / {default['write_units_per_message']:.3f} = {share:.2f}x "
            f"(dollars, the reads of {raised['concurrency']} cold containers included: {dollars:.2f}x), "
            f"{raised['overcount']}/{raised['undercount']} over/under",
            share <= 1.15 and raised["overcount"] == raised["undercount"] == 0,
        )
    ]
