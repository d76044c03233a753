"""``python -m bench.silence``: what one silence check costs, per 1,000 registered sensors.

The check (``sensor_digest/silence/check.py``) reads only: a ``Query`` of the ``Profiles`` index
per 100 sensors, a ``BatchGetItem`` of their profiles (their own thresholds), of their day items of
today, of yesterday's for those with no report today, and one ``Query`` of a sensor's partition for
each sensor with no report on either day. This registers ``--sensors`` sensors on DynamoDB Local,
gives them day items as ingest writes them (a full day item: 40 identities and 24 hours, about
850 bytes, the largest a day item gets), runs the check at three moments of a fleet's day and prints
the read units DynamoDB Local's metering reports for each (``BatchGetItem`` and ``GetItem`` counted
from the request as DynamoDB charges them; a ``Query`` as the engine reports it), per check and per
1,000 sensors, with the price at on-demand rates.
"""

from __future__ import annotations

import argparse
import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from bench import runner
from bench.peer import PRICE_PER_MILLION
from sensor_digest.registry import SensorProfile
from sensor_digest.silence.check import SilenceCheck
from sensor_digest.store import schema

NOW = dt.datetime(2025, 6, 2, 12, 30, tzinfo=dt.UTC)
TODAY, YESTERDAY, LAST_WEEK = "2025-06-02", "2025-06-01", "2025-05-26"
FULL_IDS = [bytes([i]) * 12 for i in range(40)]  # a full page 0: the largest day item

# (label, share reporting today, share whose last report was yesterday, the rest: a week ago)
MOMENTS = (
    ("every sensor reported today", 1.0, 0.0),
    ("none today yet: 90% last reported yesterday, 10% a week ago", 0.0, 0.9),
    ("every sensor silent for a week", 0.0, 0.0),
)


def day_item(sensor: int, day: str) -> dict[str, Any]:
    item = schema.day_item(sensor, day, 240, {f"{h:02d}": 10 for h in range(24)})
    item[schema.IDS] = {"BS": FULL_IDS}
    item[schema.ID_PAGE] = {"N": "0"}
    return item


def put_all(client: Any, table: str, items: list[dict[str, Any]]) -> None:
    for start in range(0, len(items), 25):
        batch = [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]
        client.batch_write_item(RequestItems={table: batch})


def measure(sensors: int, today: float, yesterday: float) -> dict[str, float]:
    with runner.engine(modeled=False) as e:
        table = runner.fresh_tables(e.client, "silence")["table"]
        profiles = [SensorProfile(s, f"s{s}", f"serial-{s}", silence_hours=6).item() for s in range(sensors)]
        days: list[dict[str, Any]] = []
        for s in range(sensors):
            share = s / sensors
            last = TODAY if share < today else YESTERDAY if share < today + yesterday else LAST_WEEK
            days += [day_item(s, d) for d in (LAST_WEEK, YESTERDAY, TODAY) if d <= last]
        put_all(e.client, table, profiles + days)
        check = SilenceCheck(
            table_name=table, client=e.client, default_hours=6, default_zone=ZoneInfo("UTC"), clock=lambda: NOW
        )
        e.meter.reset()
        found = check.run()
        assert found.checked == sensors
        return {"read_units": e.meter.read_units, "requests": found.requests, "silent": len(found.silent)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.silence", description=__doc__)
    parser.add_argument("--sensors", type=int, default=1000)
    args = parser.parse_args(argv)
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
