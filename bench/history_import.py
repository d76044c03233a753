"""``python -m bench.history_import``: the history import's goals, side by side in one run.

Each figure on a DynamoDB Local of its own, metered (``instruments.metering``: write units as the engine
and DynamoDB's rules charge them, read units from the requests), through the local import as
``sensor-digest import FILE`` runs it (``ops/history.py``):

1. write units per report, digest and ledger tables together, of a history sorted by sensor and time
   with ``--per-day`` (>= 100) reports per sensor-day (goal: <= 0.05), and of the same reports in no
   order (goal: no more than live ingest, measured in step 3 on the same kind of reports);
2. read units per row of the same sorted file imported again (``--again``: every chunk looked up,
   nothing written; goal: <= 0.05);
3. the rate: rows per second of the import against reports per second through ``sensor-digest send``'s
   path (SendMessageBatch, ten at a time) and the local pipeline (ingest, then the stream's summary),
   drained; the send path on ``--send`` reports (a smaller number: it is about a hundred times slower);
   its write units per report are live ingest's (goal: the import >= 10x);
4. memory: the peak resident memory (``VmHWM``) of a process importing a file of ``--memory-rows``
   rows and of one five times smaller, both past the two chunks the import holds (goal: bounded, the same
   for both).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from zoneinfo import ZoneInfo

from bench import runner
from sensor_digest.history.record import Figures
from sensor_digest.store.reads import day_counts
from sensor_digest_tools.local.demo import send_traffic
from sensor_digest_tools.local.history import HistoryTruth, write_history
from sensor_digest_tools.local.pipeline import LocalPipeline, PipelineOptions
from sensor_digest_tools.ops.history import FileImport


def file_import(client: Any, tables: dict[str, str]) -> FileImport:
    return FileImport.over(client, tables["table"], tables["ledger"], zone=ZoneInfo("UTC"))


@dataclass
class Imported:
    rows: int
    reports: int
    seconds: float
    write_units: int
    read_units: float
    figures: Figures
    exact: bool


def imported(path: Path, fmt: str, truth: HistoryTruth, *, again: bool = False) -> list[Imported]:
    """Import ``path`` into fresh tables (and, with ``again``, once more), each pass metered."""
    out = []
    with runner.engine(modeled=False) as e, tempfile.TemporaryDirectory() as scratch:
        tables = runner.fresh_tables(e.client, "import")
        for n in range(2 if again else 1):
            e.meter.reset()
            started = time.perf_counter()
            outcome = file_import(e.client, tables).run(path, fmt, Path(scratch) / f"rejected-{n}.jsonl", again=n > 0)
            seconds = time.perf_counter() - started
            f = outcome.figures
            exact = Counter(day_counts(e.client, tables["table"])) == truth.counts
            out.append(Imported(f.rows, truth.valid, seconds, e.meter.write_units, e.meter.read_units, f, exact))
    return out


@dataclass
class Sent:
    reports: int
    seconds: float
    write_units: int
    exact: bool


def sent_live(path: Path, truth: Counter[tuple[int, str]]) -> Sent:
    """The same reports (a JSON lines file) through ``send``'s path and the local pipeline, drained."""

    traffic = SimpleNamespace(bodies=path.read_text(encoding="utf-8").splitlines(), poison=set())
    with LocalPipeline(PipelineOptions()) as pipeline:
        started = time.perf_counter()
        send_traffic(pipeline.sqs(), str(pipeline.target.queue_url), traffic, backlog=pipeline.in_queue)  # type: ignore[arg-type]
        pipeline.wait_until_drained()
        seconds = time.perf_counter() - started
        exact = Counter(day_counts(pipeline.dynamodb(), str(pipeline.target.table))) == truth
        return Sent(len(traffic.bodies), seconds, pipeline.meter.write_units, exact)


def peak_memory(path: Path) -> int:
    """The peak resident memory (bytes) of a process of its own importing ``path`` into fresh tables:
    its ``VmHWM`` (the high-water mark of its own memory since it began). Not ``ru_maxrss``: Linux
    keeps a process's ``ru_maxrss`` across the fork and exec that start it, so a child of a large
    parent reports the parent's peak, whatever it did itself."""
    code = (
        "import sys; from pathlib import Path; from bench import runner;"
        "from bench.history_import import file_import\n"
        "with runner.engine(modeled=False) as e:\n"
        "    t = runner.fresh_tables(e.client, 'import')\n"
        "    file_import(e.client, t).run(Path(sys.argv[1]), 'jsonl', Path(sys.argv[1] + '.rejected'))\n"
        "    print(next(l for l in open('/proc/self/status') if l.startswith('VmHWM:')).split()[1])\n"
    )
    done = subprocess.run(  # noqa: S603 - this interpreter and this module's own code
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    return int(done.stdout.split()[-1]) * 1024  # VmHWM: kB


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.history_import", description=__doc__)
    parser.add_argument("--sensors", type=int, default=100)
    parser.add_argument("--days", type=int, default=10)
    parser.add_argument("--per-day", type=int, default=100, help="reports per sensor-day (>= 100 for the goal)")
    parser.add_argument("--send", type=int, default=5_000, help="reports through send and the local pipeline")
    parser.add_argument("--memory-rows", type=int, default=250_000, help="rows of the larger file (>= 200,000)")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=("unsorted", "memory"),
        help="leave a measurement out (a run of a million reports for the rate alone)",
    )
    parser.add_argument("--json", action="store_true", help="the figures as one JSON object")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-import-") as scratch:
        folder = Path(scratch)
        sizes = {"sensors": args.sensors, "days": args.days, "per_day": args.per_day}
        sorted_truth = write_history(folder / "sorted.jsonl", **sizes, order="sorted")
        if "unsorted" not in args.skip:
            random_truth = write_history(folder / "random.jsonl", **sizes, order="random")
        first, again = imported(folder / "sorted.jsonl", "jsonl", sorted_truth, again=True)
        unsorted = None if "unsorted" in args.skip else imported(folder / "random.jsonl", "jsonl", random_truth)[0]
        per_sensor_day = max(1, args.send // (args.per_day * 20))
        small = write_history(folder / "send.jsonl", sensors=20, days=per_sensor_day, per_day=args.per_day)
        live = sent_live(folder / "send.jsonl", small.counts)
        memory: dict[str, dict[str, int]] = {}
        if "memory" not in args.skip:
            big_rows = args.memory_rows
            write_history(folder / "big.jsonl", sensors=max(1, big_rows // 10_000), days=100, per_day=100)
            write_history(folder / "fifth.jsonl", sensors=max(1, big_rows // 50_000), days=100, per_day=100)
            for name in ("big.jsonl", "fifth.jsonl"):
                lines = sum(1 for _ in (folder / name).open())
                memory[name] = {"rows": lines, "bytes": (folder / name).stat().st_size}
                memory[name]["peak_rss"] = peak_memory(folder / name)
    live_rate = live.reports / live.seconds
    figures = {
        "date": datetime.now(UTC).date().isoformat(),
        "command": "python -m bench.history_import " + " ".join(argv if argv is not None else sys.argv[1:]),
        "sorted": {
            "reports": first.reports,
            "write_units_per_report": first.write_units / first.reports,
            "rows_per_s": first.rows / first.seconds,
            "exact": first.exact,
        },
        "unsorted": None
        if unsorted is None
        else {
            "reports": unsorted.reports,
            "write_units_per_report": unsorted.write_units / unsorted.reports,
            "rows_per_s": unsorted.rows / unsorted.seconds,
            "exact": unsorted.exact,
        },
        "again": {
            "rows": again.rows,
            "read_units_per_row": again.read_units / again.rows,
            "write_units": again.write_units,
            "counted": again.figures.counted,
            "exact": again.exact,
        },
        "live": {
            "reports": live.reports,
            "reports_per_s": live_rate,
            "write_units_per_report": live.write_units / live.reports,
            "exact": live.exact,
        },
        "speedup": (first.rows / first.seconds) / live_rate,
        "memory": memory,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    mb = 1024 * 1024
    s, u, a, live_f = figures["sorted"], figures["unsorted"], figures["again"], figures["live"]
    print(f"history import, {figures['date']}: {args.sensors} sensors x {args.days} days x {args.per_day} a day")
    print(f"{'':34}{'reports':>10}{'WCU/report':>12}{'rows/s':>10}  exact")
    print(f"{'import, sorted by sensor and time':34}{s['reports']:>10,}{s['write_units_per_report']:>12.4f}"
          f"{s['rows_per_s']:>10,.0f}  {s['exact']}")  # fmt: skip
    if u is not None:
        print(f"{'import, no order':34}{u['reports']:>10,}{u['write_units_per_report']:>12.4f}"
              f"{u['rows_per_s']:>10,.0f}  {u['exact']}")  # fmt: skip
    print(f"{'send + local pipeline (live)':34}{live_f['reports']:>10,}{live_f['write_units_per_report']:>12.4f}"
          f"{live_f['reports_per_s']:>10,.0f}  {live_f['exact']}")  # fmt: skip
    print(f"re-run of the sorted file: {a['read_units_per_row']:.4f} read units a row, {a['write_units']} write "
          f"units, {a['counted']} counted, exact {a['exact']}")  # fmt: skip
    print(f"rate: the import {figures['speedup']:.1f}x send + the local pipeline")
    for name, m in memory.items():
        print(f"memory: {name} ({m['rows']:,} rows, {m['bytes'] / mb:,.0f} MB): peak RSS {m['peak_rss'] / mb:,.0f} MB")
    ok = s["write_units_per_report"] <= 0.05 and a["read_units_per_row"] <= 0.05 and figures["speedup"] >= 10
    ok = ok and (u is None or u["write_units_per_report"] <= live_f["write_units_per_report"])
    measured = "" if not args.skip else f" (of those measured: {', '.join(args.skip)} left out)"
    print(("goals met" if ok else "a goal is missed") + measured)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
