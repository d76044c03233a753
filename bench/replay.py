"""``python -m bench.replay OUT.json [--against OLD.json]``: the units of one fixed, serial replay, to
show that a change of structure leaves every write where it was.

The benchmark's own runs write concurrently (two invocations, eight workers, a random place on the
ring), so their units move a little from run to run. This replays W1-W4 (3,000 messages each), and
W1 and W4 with four readings a report (``W1+r4``, ``W4+r4``: every write of statistics),
through (c), (d), (e) and (g) with one invocation at a time, one worker and a seeded ring: the same
code paths give the same requests and units, to the last digit. Run it on the commit before a
change and on the one after (``--against`` the first's file) and any difference is printed; none
means the change moved no write. One invocation at a time is below the event source's minimum of
two, so the settings are set past the stack's rules here, and nowhere else.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from bench import runner
from bench.workloads import backfill, hot_sensor, realtime, skewed, with_readings
from sensor_digest_cdk.shape import PipelineShape

MESSAGES = 3_000
STRATEGIES = "cdeg"


def serial() -> PipelineShape:
    """The defaults with one invocation at a time and one worker (past the rules: see the module)."""
    settings = PipelineShape()
    for name in ("ingest_max_concurrency", "ingest_max_workers", "fifo_max_concurrency"):
        object.__setattr__(settings, name, 1)
    return settings


def replay() -> dict[str, list[float]]:
    settings = serial()
    checked = PipelineShape.__post_init__
    PipelineShape.__post_init__ = lambda self: None  # type: ignore[method-assign]  # runner.run copies it
    try:
        out = {}
        plain = (realtime(MESSAGES), skewed(MESSAGES), backfill(MESSAGES), hot_sensor(MESSAGES))
        for workload in (*plain, with_readings(plain[0], 4), with_readings(plain[3], 4)):
            for key in STRATEGIES:
                random.seed(0)
                r = runner.run(key, workload, settings)
                out[f"{workload.name} {key}"] = [
                    r["write_units_per_message"],
                    r["requests_per_message"],
                    r["read_units_per_message"],
                    r["overcount"],
                    r["undercount"],
                ]
                print(
                    f"{workload.name} ({key}): WCU, req, RRU per message, over, under = {out[f'{workload.name} {key}']}"
                )
        return out
    finally:
        PipelineShape.__post_init__ = checked  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replay", description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--against", type=Path, help="an earlier replay's file: print what differs")
    args = parser.parse_args(argv)
    out = replay()
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    if args.against:
        before = json.loads(args.against.read_text(encoding="utf-8"))
        moved = {k: (before.get(k), v) for k, v in out.items() if before.get(k) != v}
        print("identical to the earlier replay" if not moved else f"moved: {moved}")
        return 1 if moved else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
