"""The benchmark's goals, checked on its results: (goal, measured, met) for each that the runs made
can tell (W1 unless named; at the stack's defaults; speed under the latency model).
"""

from __future__ import annotations

from typing import Any

from sensor_digest_cdk.shape import PipelineShape


def _exact_on_every_workload(report: dict[str, Any], strategy: str, goal: str) -> list[tuple[str, str, bool]]:
    """The goal that ``strategy`` over- and undercounts nothing on any workload it ran (none: no goal)."""
    runs = [r for r in report["results"] if r["strategy"] == strategy]
    if not runs:
        return []
    measured = ", ".join(f"{r['workload']} {r['mode']}: {r['overcount']}/{r['undercount']}" for r in runs)
    return [(goal, measured, all(r["overcount"] == r["undercount"] == 0 for r in runs))]


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
