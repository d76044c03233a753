"""``python -m bench.reads``: what the compact ledger's identities in day items cost the readers.

A day item of the compact ledger holds up to 40 identity hashes (``Ids``, about 500 bytes) beside its
count; readers never return them, but DynamoDB charges a ``Query`` for every byte of the items it
reads (a projection does not lower it). This runs one sensor through a year of busy days (41
reports a day: a full day item, the worst case) through ingest as deployed, once with the compact
ledger (c) and once with the per-message ledger (g), whose day items hold the count alone, then
reads the year as the read API does (its days route: one eventually consistent ``Query``) and as
``summary rebuild`` does (one strongly consistent ``Query`` of the sensor's day items), and prints
the read units DynamoDB Local reports for each, the bytes read, and the ratio.

It also prints where trimming a past day's identities would pay: a trim is one ``UpdateItem``
(1 write unit, and a stream record for the summary), and saves the identities' share of each later
eventually consistent read of that day.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from typing import Any

from bench import runner
from bench.prices import PRICE_PER_MILLION
from bench.strategies import STRATEGIES
from sensor_digest.store import reads, schema
from sensor_digest.store.sizes import item_bytes
from sensor_digest_cdk.shape import PipelineShape
from sensor_digest_tools.lambda_runtime.events import FakeContext, QueuedMessage, sqs_event

SENSOR = 42
FIRST_DAY = dt.date(2025, 1, 1)


def _messages(days: int, per_day: int) -> list[QueuedMessage]:
    out = []
    for d in range(days):
        day = (FIRST_DAY + dt.timedelta(days=d)).isoformat()
        for i in range(per_day):
            body = {"sensor_id": SENSOR, "timestamp": f"{day}T{i % 24:02d}:00:00Z", "event_id": f"{day}-{i}"}
            out.append(QueuedMessage(body=json.dumps(body), message_id=f"m-{day}-{i}"))
    return out


def measure(key: str, days: int, per_day: int) -> dict[str, Any]:
    """Ingest a year of one sensor with strategy ``key``, then its readers' read units."""
    with runner.engine(modeled=False) as e:
        tables = runner.fresh_tables(e.client, key)
        handler = STRATEGIES[key][1](e.session, tables, PipelineShape())
        messages = _messages(days, per_day)
        for start in range(0, len(messages), 1_000):
            answer = handler(sqs_event(messages[start : start + 1_000]), FakeContext())
            assert answer == {"batchItemFailures": []}, answer
        first, last = FIRST_DAY.isoformat(), (FIRST_DAY + dt.timedelta(days=days - 1)).isoformat()
        e.meter.reset()
        page = reads.sensor_items_page(e.client, tables["table"], SENSOR, first, last, limit=days)
        api_units = e.meter.read_units
        e.meter.reset()
        rebuilt = reads.sensor_days(e.client, tables["table"], SENSOR, "0000-00-00", "9999-12-31")
        rebuild_units = e.meter.read_units
        assert len(page.items) == len(rebuilt) == days
        assert all(count == per_day for _, count in rebuilt)
        ids_bytes = sum(
            item_bytes({k: v for k, v in item.items() if k in (schema.IDS, schema.ID_PAGE)}) for item in page.items
        )
        return {
            "strategy": key,
            "label": STRATEGIES[key][0],
            "days": days,
            "reports_per_day": per_day,
            "bytes_read": sum(item_bytes(item) for item in page.items),
            "identity_bytes": ids_bytes,
            "api_read_units": api_units,
            "rebuild_read_units": rebuild_units,
        }


def trim_break_even(identity_bytes_per_day: float) -> float:
    """Eventually consistent reads of one day item after which removing its identities (one write
    unit) would have paid: each such read saves ``identity_bytes_per_day / 4 KB`` half-units."""
    saved_per_read = identity_bytes_per_day / 4096 * 0.5 * PRICE_PER_MILLION["read"]
    return PRICE_PER_MILLION["write"] / saved_per_read if saved_per_read else float("inf")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.reads", description=__doc__)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--per-day", type=int, default=41, help="reports a day (41: a full day item)")
    args = parser.parse_args(argv)
    rows = [measure(key, args.days, args.per_day) for key in ("c", "g")]
    print(f"one sensor, {args.days} days of {args.per_day} reports, read back as the readers read it (raw)")
    print(f"{'strategy':44} {'bytes read':>10} {'of them ids':>11} {'read API RRU':>12} {'rebuild RRU':>11}")
    for r in rows:
        print(
            f"{r['label']:44} {r['bytes_read']:10,} {r['identity_bytes']:11,} "
            f"{r['api_read_units']:12.1f} {r['rebuild_read_units']:11.1f}"
        )
    c, g = rows
    print(
        f"(c)/(g): read API {c['api_read_units'] / g['api_read_units']:.1f}x, "
        f"rebuild {c['rebuild_read_units'] / g['rebuild_read_units']:.1f}x; a trim of a day's identities "
        f"would pay after {trim_break_even(c['identity_bytes'] / c['days']):,.0f} eventually consistent reads of it"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
