"""Batch size and batching window against write units and lag: the measurements the defaults rest on.

The sweep runs the exactly-once handler on a backlog (every batch full) at several batch sizes,
for three traffic shapes, and measures write units and requests per message in the steady state:
the day is under way (its day items exist), so what a day's first writes cost is left to W1. How full a batch
gets under live traffic is then a **model**, stated with it: Lambda reads a queue with several
pollers (five to begin with, AWS's documented start), each gathering its own batch until it holds
``batch_size`` messages or the batching window ends, so at ``rate`` messages per second a batch
holds about ``min(batch_size, rate * window / 5)`` messages and its first message waits about
``min(window, batch_size * 5 / rate)`` seconds. Write units at a batch that size are interpolated
(log-linear) from the measured sweep of W1's shape.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.plot import Panel, Series, svg
from bench.workloads import shape
from sensor_digest_cdk.shape import PipelineShape

POLLERS = 5
SHAPES = {20: "few sensors, often (20)", 200: "W1's 200 sensors", 50_000: "many sensors, rarely (50,000)"}
BATCHES = (10, 100, 500, 1_000, 2_500, 10_000)
RATES = (20, 200, 2_000)  # messages per second
WINDOWS = (1, 5, 10, 20, 30, 60, 120)


def batch_fill(batch_size: int, window: float, rate: float) -> float:
    return max(1.0, min(batch_size, rate * window / POLLERS))


def batch_lag(batch_size: int, window: float, rate: float) -> float:
    return min(window, batch_size * POLLERS / rate)


def interpolate(curve: list[tuple[int, float]], n: float) -> float:
    """Log-linear between the measured points; flat beyond them."""
    xs = [x for x, _ in curve]
    if n <= xs[0]:
        return curve[0][1]
    if n >= xs[-1]:
        return curve[-1][1]
    i = bisect.bisect_right(xs, n)
    (x0, y0), (x1, y1) = curve[i - 1], curve[i]
    t = (math.log(n) - math.log(x0)) / (math.log(x1) - math.log(x0))
    return y0 + t * (y1 - y0)


def run_sweep(
    run: Callable[..., dict[str, Any]], settings: PipelineShape, *, quick: bool, plot: Path | None
) -> dict[str, Any]:
    n = 1_000 if quick else 10_000
    shapes = {200: SHAPES[200]} if quick else SHAPES
    batches = (100, 1_000) if quick else BATCHES
    measured: dict[int, list[dict[str, Any]]] = {}
    print(
        f"\nbatch-size sweep: (c) on a backlog of {n:,} messages per shape (every batch full), the day under way "
        "(its day items exist), raw"
    )
    print(f"{'shape':32} " + " ".join(f"{b:>13,}" for b in batches))
    for sensors, label in shapes.items():
        workload = shape(sensors, n)
        rows = [
            run(
                "c",
                workload,
                replace(settings, ingest_batch_size=b),
                under_way=True,
                summary_batches=(settings.summary_batch_size,) if b == settings.ingest_batch_size else (),
            )
            for b in batches
        ]
        measured[sensors] = [
            {
                "batch_size": b,
                "write_units_per_message": r["write_units_per_message"],
                "requests_per_message": r["requests_per_message"],
                "exact": r["overcount"] == r["undercount"] == 0,
                "summary_write_units_per_message": r["summary"][0]["write_units_per_message"]
                if "summary" in r
                else None,
            }
            for b, r in zip(batches, rows, strict=True)
        ]
        cells = " ".join(
            f"{m['write_units_per_message']:5.2f} / {m['requests_per_message']:5.3f}" for m in measured[sensors]
        )
        print(f"{label:32} {cells}")
    print("  (cells: write units / requests per message)")
    for sensors, rows in measured.items():
        at_default = next(m for m in rows if m["summary_write_units_per_message"] is not None)
        ingest, summary = at_default["write_units_per_message"], at_default["summary_write_units_per_message"]
        print(
            f"  {SHAPES[sensors]}, at the default batch size: summary {summary:.3f} WCU per message "
            f"(stream batches of {settings.summary_batch_size:,}), ingest + summary {ingest + summary:.3f}"
        )
    curve = [(m["batch_size"], m["write_units_per_message"]) for m in measured[200]]
    windows = []
    print(
        f"\nwindow and lag at batch size {settings.ingest_batch_size:,} (model: {POLLERS} pollers; W1's shape; "
        "cells: messages per batch, WCU per message, first message's wait in s)"
    )
    print(f"{'window s':>9} " + " ".join(f"{f'{r:,} msg/s':>24}" for r in RATES))
    for w in WINDOWS:
        row = []
        for r in RATES:
            fill = batch_fill(settings.ingest_batch_size, w, r)
            wcu, lag = interpolate(curve, fill), batch_lag(settings.ingest_batch_size, w, r)
            windows.append({"window": w, "rate": r, "fill": fill, "write_units_per_message": wcu, "lag_s": lag})
            row.append(f"{fill:7,.0f} {wcu:6.2f} {lag:7.1f}")
        print(f"{w:9d} " + " ".join(f"{c:>24}" for c in row))
    if plot is not None:
        panels = [
            Panel(
                "Backlog: every batch full (measured)",
                "batch size (messages)",
                "write units per message",
                [
                    Series(SHAPES[s], [(m["batch_size"], m["write_units_per_message"]) for m in rows])
                    for s, rows in measured.items()
                ],
            ),
            Panel(
                "Live traffic, 200 msg/s over 200 sensors (model)",
                "batching window (s) = the first message's longest wait",
                "write units per message",
                [
                    Series(
                        f"batch size {b:,}",
                        [(w, interpolate(curve, batch_fill(b, w, 200))) for w in WINDOWS],
                        dashed=b != settings.ingest_batch_size,
                    )
                    for b in (100, settings.ingest_batch_size, 10_000)
                ],
            ),
        ]
        plot.parent.mkdir(parents=True, exist_ok=True)
        plot.write_text(svg(panels))
        print(f"plot: {plot}")
    return {"measured": measured, "windows": windows, "pollers": POLLERS}


def fifo_shapes(run: Callable[..., dict[str, Any]], settings: PipelineShape, *, quick: bool) -> list[dict[str, Any]]:
    """Ordered mode (e) on the sweep's three shapes, on a backlog with the day under way. A FIFO
    batch holds at most 10 messages, so there is no batch size to choose: what differs is how many
    of a batch's messages share a sensor-day (many when few sensors send often, one each when
    many sensors send rarely)."""
    n = 1_000 if quick else 10_000
    out = []
    for sensors, label in ({200: SHAPES[200]} if quick else SHAPES).items():
        result = run("e", shape(sensors, n), settings, under_way=True)
        out.append({"sensors": sensors, "label": label, **result})
        print(
            f"  (e) FIFO, {label:32} {result['write_units_per_message']:.3f} WCU/msg, "
            f"{result['requests_per_message']:.3f} req/msg, {result['overcount']}/{result['undercount']} over/under"
        )
    return out
