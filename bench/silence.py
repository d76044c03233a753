"""``python -m bench.silence``: what one silence check costs, per 1,000 registered sensors.

The check (``sensor_digest/silence/check.py``) reads only: a ``Query`` of the ``Profiles`` index
per 100 sensors, a ``BatchGetItem`` of their profiles (their own thresholds), of their day items of
today, of yesterday's for those with no report today, of the month summaries of those with no
report on either day and of the day those name, and a ``Query`` of a sensor's partition for each
sensor they leave open. This registers ``--sensors`` sensors on DynamoDB Local, gives them day
items as ingest writes them (a full day item: 40 identities and 24 hours, about 880 bytes, the
largest a day item gets) and their month summaries, runs the check at three moments of a fleet's day and prints
the read units DynamoDB Local's metering reports for each (``BatchGetItem`` and ``GetItem`` counted
from the request as DynamoDB charges them; a ``Query`` as the engine reports it), per check and per
1,000 sensors, with the price at on-demand rates.

``--at-scale N`` (100,000 by default) measures what a check of a large fleet takes: ``N`` sensors
registered, each silent for days (its last report four days ago, at the start of a month: its day
item and its month summary as the pipeline leaves them), checked three ways on the same data: as
before this release (one older-day ``Query`` per sensor, one at a time), with the ``Query``s
``READ_WORKERS`` at once, and as the check runs now (the month summaries first, a ``Query`` only for
what they leave open): wall time, the check's own CPU time (this process; DynamoDB Local runs in
its own), requests and read units; raw on DynamoDB Local, then under the latency model of a
networked DynamoDB (``sensor_digest_tools.instruments.latency``: the delays a check in a Region waits
on). The deployed check's timeout and memory are ``SILENCE``'s in
``infra/sensor_digest_cdk/lambda_function.py``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from zoneinfo import ZoneInfo

from bench import runner
from bench.peer import PRICE_PER_MILLION
from sensor_digest.registry import SensorProfile
from sensor_digest.silence.check import CONNECTIONS, READ_WORKERS, SilenceCheck
from sensor_digest.store import schema
from sensor_digest.store.dynamo import make_client
from sensor_digest_tools import instruments
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.instruments.latency import LatencyModel
from sensor_digest_tools.instruments.metering import RequestMeter

NOW = dt.datetime(2025, 6, 2, 12, 30, tzinfo=dt.UTC)
TODAY, YESTERDAY, LAST_WEEK = "2025-06-02", "2025-06-01", "2025-05-26"
DAYS_AGO = "2025-05-29"  # --at-scale: every sensor's last report, four days before NOW
REGISTERED = "2025-01-01T00:00:00Z"
FULL_IDS = [bytes([i]) * 12 for i in range(40)]  # a full page 0: the largest day item

# (label, share reporting today, share whose last report was yesterday, the rest: a week ago)
MOMENTS = (
    ("every sensor reported today", 1.0, 0.0),
    ("none today yet: 90% last reported yesterday, 10% a week ago", 0.0, 0.9),
    ("every sensor silent for a week", 0.0, 0.0),
)


def summary_items(days: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The month summary items the pipeline's summary function keeps for these day items."""
    months: dict[tuple[int, str], dict[str, int]] = {}
    for item in days:
        sensor, day, count = schema.day_count_of_item(item) or (0, "", 0)
        months.setdefault((sensor, day[:7]), {})[day] = count
    return [schema.summary_item(sensor, month, counts) for (sensor, month), counts in months.items()]


def day_item(sensor: int, day: str) -> dict[str, Any]:
    item = schema.day_item(sensor, day, 240, {f"{h:02d}": 10 for h in range(24)})
    item[schema.IDS] = {"BS": FULL_IDS}
    item[schema.ID_PAGE] = {"N": "0"}
    return item


def put_all(client: Any, table: str, items: list[dict[str, Any]], workers: int = 1) -> None:
    def put(start: int) -> None:
        batch = {table: [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]}
        while batch:
            batch = client.batch_write_item(RequestItems=batch).get("UnprocessedItems") or {}

    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(put, range(0, len(items), 25)))


def measure(sensors: int, today: float, yesterday: float) -> dict[str, float]:
    with runner.engine(modeled=False) as e:
        table = runner.fresh_tables(e.client, "silence")["table"]
        profiles = [SensorProfile(s, f"s{s}", f"serial-{s}", silence_hours=6).item() for s in range(sensors)]
        days: list[dict[str, Any]] = []
        for s in range(sensors):
            share = s / sensors
            last = TODAY if share < today else YESTERDAY if share < today + yesterday else LAST_WEEK
            days += [day_item(s, d) for d in (LAST_WEEK, YESTERDAY, TODAY) if d <= last]
        put_all(e.client, table, profiles + days + summary_items(days))
        check = SilenceCheck(
            table_name=table, client=e.client, default_hours=6, default_zone=ZoneInfo("UTC"), clock=lambda: NOW
        )
        e.meter.reset()
        found = check.run()
        assert found.checked == sensors
        return {"read_units": e.meter.read_units, "requests": found.requests, "silent": len(found.silent)}


def timed_check(endpoint: str, table: str, workers: int, modeled: bool, summaries: bool) -> dict[str, float]:
    """One check of the whole fleet by a session of its own (metered; the latency model when
    ``modeled``), with ``workers`` older-day ``Query``s at once, the month summaries read first or not."""
    session, meter = LocalSession({"dynamodb": endpoint}), RequestMeter()
    instruments.install(session, meter=meter, latency=LatencyModel() if modeled else None)
    check = SilenceCheck(
        table_name=table,
        client=make_client(session, max_pool_connections=CONNECTIONS),
        default_hours=6,
        default_zone=ZoneInfo("UTC"),
        clock=lambda: NOW,
        workers=workers,
    )
    check.days.use_summaries = summaries
    wall, cpu = time.perf_counter(), time.process_time()
    found = check.run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert not found.unchecked, found.unchecked[:3]
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "requests": found.requests,
        "read_units": meter.read_units,
        "silent": len(found.silent),
        "checked": found.checked,
    }


def at_scale(sensors: int) -> None:
    """``--at-scale``: a fleet silent for days, checked before and after, raw and modeled (see the module)."""
    with runner.engine(modeled=False) as e:
        table = runner.fresh_tables(e.client, "silence")["table"]
        started = time.perf_counter()
        profiles = [
            SensorProfile(s, f"s{s}", f"serial-{s}", silence_hours=6, registered_at=REGISTERED).item()
            for s in range(sensors)
        ]
        days = [day_item(s, DAYS_AGO) for s in range(sensors)]
        put_all(e.client, table, profiles + days + summary_items(days), workers=8)
        seeded = time.perf_counter() - started
        print(f"{sensors:,} registered sensors, each last reported {DAYS_AGO} ({seeded:.0f} s to seed)")
        heads = ("wall (s)", "CPU (s)", "requests", "RRU", "silent")
        print(f"{'engine':9} {'the check':40} " + " ".join(f"{h:>9}" for h in heads))
        ways = (
            ("before: a Query per sensor, one at a time", 1, False),
            (f"a Query per sensor, {READ_WORKERS} at once", READ_WORKERS, False),
            (f"now: summaries, then Querys {READ_WORKERS} at once", READ_WORKERS, True),
        )
        for modeled in (False, True):
            for label, workers, summaries in ways:
                r = timed_check(e.endpoint, table, workers, modeled, summaries)
                assert r["checked"] == sensors and r["silent"] == sensors
                print(
                    f"{'modeled' if modeled else 'raw':9} {label:40} {r['wall_s']:9.1f} {r['cpu_s']:9.1f} "
                    f"{r['requests']:9,.0f} {r['read_units']:9,.0f} {r['silent']:9,.0f}",
                    flush=True,
                )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.silence", description=__doc__)
    parser.add_argument("--sensors", type=int, default=1000)
    parser.add_argument("--at-scale", type=int, nargs="?", const=100_000, default=None, metavar="N")
    args = parser.parse_args(argv)
    if args.at_scale:
        at_scale(args.at_scale)
        return 0
    per = 1000 / args.sensors
    print(f"one silence check of {args.sensors:,} registered sensors (raw, DynamoDB Local's metering)")
    print(f"{'moment':60} {'requests':>8} {'silent':>6} {'RRU':>8} {'RRU/1,000':>9} {'$/1,000':>10}")
    for label, today, yesterday in MOMENTS:
        r = measure(args.sensors, today, yesterday)
        units = r["read_units"] * per
        print(
            f"{label:60} {r['requests']:8.0f} {r['silent']:6.0f} {r['read_units']:8.1f} {units:9.1f} "
            f"{units * PRICE_PER_MILLION['read'] / 1e6:10.7f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
