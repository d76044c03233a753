"""The benchmark's results page: ``docs/benchmark-results.md`` rendered from a results file, with the
run's date, machine and settings, so the site's figures are the latest run's and never typed by hand.

A full ``python -m bench`` writes the page after its results file; ``python -m bench.pages FILE``
renders it from any results file (``bench/results/latest.json`` by default). The results file is
kept beside the page (``docs/benchmark-results.json``, offered for download), and
``tests/repository/test_docs_site.py`` holds the committed page to its rendering. The sweep's plot is
``docs/batching.svg`` (``bench/sweep.py`` draws it in a full run).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.prices import dollars_per_million

PAGE = Path(__file__).parent.parent / "docs" / "benchmark-results.md"
RESULTS = Path(__file__).parent / "results" / "latest.json"
WORKLOADS = {
    "W1": "real time: 200 sensors, one day (2% late)",
    "W2": "skewed: Zipf(1.2) over 1,000 sensors",
    "W3": "backfill: 200 sensors, 30 days",
    "W4": "hot sensor",
    "F": "large fleet: 50,000 sensors, one report each per batch",
}
FLEETS = {"P": "200 sensors", "F": "50,000 sensors"}
SETTINGS = {
    "ingest_batch_size": "ingest batch size",
    "ingest_batching_window_seconds": "ingest batching window (s)",
    "ingest_max_concurrency": "ingest invocations at once",
    "ingest_max_workers": "worker threads per ingest invocation",
    "summary_batch_size": "stream batch size",
    "summary_batching_window_seconds": "stream batching window (s)",
    "fifo_batch_size": "FIFO (e): batch size",
    "fifo_max_concurrency": "FIFO (e): invocations at once",
}


def _machine(report: dict[str, Any]) -> str:
    machine = report.get("machine")
    if not machine:
        return "not recorded in this results file (written before the benchmark recorded it)"
    return f"{machine['arch']}, {machine['cores']} cores, Python {machine['python']}, {machine['engine']}" + (
        f" ({machine['host']})" if machine.get("host") else ""
    )


def _results_table(results: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| workload | strategy | mode | msg/s | req/msg | WCU/msg | RRU/msg | largest item (B) | listed | conflicts "
        "| over | under | × msg/s | × WCU |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for workload in dict.fromkeys(r["workload"] for r in results):
        rows = [r for r in results if r["workload"] == workload and not r.get("history")]
        first = True
        for r in rows:
            base = next((b for b in rows if b["strategy"] == "a" and b["mode"] == r["mode"]), r)
            name = f"{workload} {WORKLOADS.get(workload, '')}".strip() if first else ""
            first = False
            lines.append(
                f"| {name} | {r['label']} | {r['mode']} | {r['messages_per_s']:,.0f} | "
                f"{r['requests_per_message']:.3f} | {r['write_units_per_message']:.3f} | "
                f"{r.get('read_units_per_message', 0):.3f} | {_bytes(r)} | {r['listed']:,} | "
                f"{r['conflicts']:,} | {r['overcount']:,} | {r['undercount']:,} | "
                f"{r['messages_per_s'] / base['messages_per_s']:.2f} | "
                f"{r['write_units_per_message'] / base['write_units_per_message']:.3f} |"
            )
    return lines


def _bytes(r: dict[str, Any]) -> str:
    return f"{r['largest_item_bytes']:,}" if "largest_item_bytes" in r else "–"


def _cancelled(r: dict[str, Any]) -> float:
    """Write units per message of a run's cancelled transactions, whatever their cause."""
    return float(sum((r.get("cancelled_units_per_message") or {}).values()))


def _table(header: str, align: str, rows: list[list[str]]) -> list[str]:
    """A Markdown table: its header row, its alignment row, a row per list of cells."""
    return [header, align, *("| " + " | ".join(cells) + " |" for cells in rows)]


def _concurrency(rows: list[dict[str, Any]]) -> list[str]:
    header = (
        "| invocations at once | messages | msg/s | req/msg | WCU/msg | of which cancelled | RRU/msg | $ per million "
        "| conflicts | over | under | × WCU | × $ |"
    )
    base, base_dollars = rows[0]["write_units_per_message"], dollars_per_million(rows[0])
    cells = [
        [
            f"{r['concurrency']}",
            f"{r['messages']:,}",
            f"{r['messages_per_s']:,.0f}",
            f"{r['requests_per_message']:.3f}",
            f"{r['write_units_per_message']:.3f}",
            f"{_cancelled(r):.3f}",
            f"{r['read_units_per_message']:.3f}",
            f"{dollars_per_million(r):.3f}",
            f"{r['conflicts']:,}",
            f"{r['overcount']:,}",
            f"{r['undercount']:,}",
            f"{r['write_units_per_message'] / base:.3f}",
            f"{dollars_per_million(r) / base_dollars:.3f}",
        ]
        for r in rows
    ]
    return _table(header, "|" + "---:|" * 13, cells)


def _summaries(results: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| run | stream records | stream batch | writes per record | summary WCU per message | "
        "ingest + summary WCU per message | exact |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        for s in r.get("summary", []):
            history = "a year of history each" if r.get("history") else "young (no history)"
            lines.append(
                f"| {r['workload']} {r['label']} {r['mode']}, {history} | {s['records']:,} | {s['batch_size']:,} | "
                f"{s['writes_per_record']:.3f} | {s['write_units_per_message']:.3f} | "
                f"{r['write_units_per_message'] + s['write_units_per_message']:.3f} | "
                f"{'yes' if s['exact'] else 'NO'} |"
            )
    return lines if len(lines) > 2 else []


def _fifo_shapes(shapes: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| sensors | msg/s | req/msg | WCU/msg | over | under |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {s['sensors']:,} | {s['messages_per_s']:,.0f} | {s['requests_per_message']:.3f} | "
        f"{s['write_units_per_message']:.3f} | {s['overcount']:,} | {s['undercount']:,} |"
        for s in shapes
    ]
    return lines


def _sweep(sweep: dict[str, Any]) -> list[str]:
    measured = sweep["measured"]
    batches = [m["batch_size"] for m in next(iter(measured.values()))]
    lines = [
        "| sensors | " + " | ".join(f"{b:,}" for b in batches) + " |",
        "|---:|" + "---:|" * len(batches),
    ]
    for sensors, rows in measured.items():
        cells = " | ".join(f"{m['write_units_per_message']:.2f} / {m['requests_per_message']:.3f}" for m in rows)
        lines.append(f"| {int(sensors):,} | {cells} |")
    return lines


def _fleet(r: dict[str, Any]) -> str:
    workload = str(r.get("workload", "P"))
    return FLEETS.get(workload, workload)


def _peer(rows: list[dict[str, Any]]) -> list[str]:
    header = (
        "| fleet | settings | phase | strategy | msg/s | WRU/msg | of which cancelled | RRU/msg "
        "| DynamoDB $ per M msg | over | under |"
    )
    cells = [
        [
            _fleet(r),
            r["variant"],
            r["phase"],
            r["label"],
            f"{r['messages_per_s']:,.0f}",
            f"{r['write_units_per_message']:.3f}",
            f"{_cancelled(r):.3f}",
            f"{r['read_units_per_message']:.3f}",
            f"{r['dollars_per_million']:.3f}",
            f"{r['overcount']:,}",
            f"{r['undercount']:,}",
        ]
        for r in rows
    ]
    return _table(header, "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|", cells)


def render(report: dict[str, Any], source: str = "benchmark-results.json") -> str:
    """The page's Markdown for one results file (``source``: its name beside the page)."""
    settings = report.get("settings", {})
    overrides = report.get("overrides") or {}
    out = [
        "# Latest benchmark results",
        "",
        '!!! info "Generated: do not edit"',
        f"    Rendered by `bench/pages.py` from [`{source}`]({source}), the results file of a `python -m bench` run.",
        "    A full run writes this page again; [Benchmarks](benchmarks.md) explains the method, the",
        "    strategies (a)–(g), the workloads and how to read the figures.",
        "",
        f"- **Run**: {report['date']} (UTC), {report['messages']:,} messages per workload"
        + (f"; {report['merged']}" if report.get("merged") else ""),
        f"- **Machine**: {_machine(report)}",
        "- **Settings**: " + (", ".join(f"{SETTINGS.get(k, k)} {v:,}" for k, v in settings.items()) or "not recorded"),
        "- **Defaults?** "
        + ("NOT THE DEFAULTS: " + ", ".join(f"{k}={v}" for k, v in overrides.items()) if overrides else "yes"),
        "",
        "## Ingest, per workload",
        "",
        '"listed" counts messages a batch response listed, "over" and "under" are in data points, '
        "× columns are against (a) in the same mode; *raw* is DynamoDB Local on the machine, *model* adds the "
        "latency model of a networked DynamoDB.",
        "",
        *_results_table(report.get("results", [])),
    ]
    bounds = [r for r in report.get("results", []) if "latency_bound_msg_per_s" in r]
    if bounds:
        out += ["", "Latency-bound estimates (the modeled delays alone, no CPU), messages per second: "]
        out[-1] += "; ".join(f"{r['workload']} {r['label']}: {r['latency_bound_msg_per_s']:,.0f}" for r in bounds) + "."
    summaries = _summaries(report.get("results", []))
    if summaries:
        out += ["", "## Summary path", "", *summaries]
    if report.get("peer"):
        out += [
            "",
            "## Against Powertools idempotency",
            "",
            "The peer workloads (4,000 messages, one day, 10% redelivered: 200 busy sensors, and a fleet of 50,000 "
            "sensors), latency model; dollars are DynamoDB's on-demand request prices "
            "([Benchmarks](benchmarks.md#against-the-peer-powertools-idempotency)).",
            "",
            *_peer(report["peer"]),
        ]
    if report.get("concurrency"):
        out += [
            "",
            "## Raised concurrency",
            "",
            "(c) on W1 at the stack's default invocations at once and at 10, latency model; × WCU and × $ are "
            "against the default. Every invocation slot is a container of its own, cold when the run starts: "
            "the read units are mostly what a container reads once in its life, each sensor's profile (one "
            "strongly consistent unit) and each day item it writes (half a unit), so 10 cold containers read "
            "about five times what 2 do ([Benchmarks](benchmarks.md#raised-concurrency)).",
            "",
            *_concurrency(report["concurrency"]),
        ]
    if report.get("fifo_shapes"):
        out += ["", "## Ordered mode (e) on the sweep's shapes", "", *_fifo_shapes(report["fifo_shapes"])]
    if report.get("sweep"):
        out += ["", "## Batch-size sweep", "", "(c) on a backlog, the day under way, raw; cells: write units / "]
        out[-1] += "requests per message."
        out += ["", *_sweep(report["sweep"])]
    out += [
        "",
        "![Write units per message against batch size (measured) and batching window (model)](batching.svg)",
        "",
        "The plot is the latest full sweep's (`bench/sweep.py` draws `docs/batching.svg`)"
        + ("." if report.get("sweep") else "; this results file holds no sweep."),
    ]
    if report.get("goals"):
        out += ["", "## Goals", "", "| goal | measured | |", "|---|---|---|"]
        out += [f"| {g['goal']} | {g['measured']} | {'met' if g['met'] else 'MISSED'} |" for g in report["goals"]]
    return "\n".join(out) + "\n"


def write_page(report: dict[str, Any], page: Path = PAGE) -> Path:
    """The page, and the results file it is rendered from beside it (same name, ``.json``)."""
    source = page.with_suffix(".json")
    source.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    page.write_text(render(report, source.name), encoding="utf-8")
    return page


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pages", description=__doc__)
    parser.add_argument("results", nargs="?", type=Path, default=RESULTS)
    parser.add_argument("--page", type=Path, default=PAGE)
    args = parser.parse_args(argv)
    report = json.loads(args.results.read_text(encoding="utf-8"))
    print(f"page: {write_page(report, args.page)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
