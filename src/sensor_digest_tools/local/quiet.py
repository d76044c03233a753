"""The demo's silent sensor: one sensor of the traffic stops reporting at noon of the last day, and
the silence check (the deployed one's code) finds it.

``fall_silent`` moves that sensor's reports of the last day into its morning (their day, count,
identity and readings stay: the truth does not change), so its last report hour is at most ``11``.
``registered_silence`` registers it with a threshold of its own and runs the check as it would run
late that evening (``CHECKED_AT``): the demo's days are in the past, so the check's clock is set to
the traffic's last day, and the registry's to its midnight, the one thing not as deployed.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from zoneinfo import ZoneInfo

from sensor_digest.registry import Registry, SensorProfile
from sensor_digest.silence.check import SilenceCheck
from sensor_digest.silence.rules import Silent
from sensor_digest_tools.local.traffic import Traffic

QUIET_SENSOR = 0
QUIET_FROM_HOUR = 12
QUIET_THRESHOLD_HOURS = 3
CHECKED_AT = dt.time(23, 30)


def fall_silent(traffic: Traffic, sensor: int = QUIET_SENSOR) -> str | None:
    """Move ``sensor``'s reports of the traffic's last day before ``QUIET_FROM_HOUR``: the day it
    falls silent (``None``: the traffic has no valid report)."""
    days = sorted({day for _, day in traffic.truth})
    if not days:
        return None
    last = days[-1]
    for i, body in enumerate(traffic.bodies):
        if i in traffic.poison:
            continue
        report = json.loads(body)
        stamp = str(report.get("timestamp", ""))
        if report.get("sensor_id") == sensor and stamp.startswith(f"{last}T"):
            hour = int(stamp[11:13]) % QUIET_FROM_HOUR
            moved = f"{stamp[:11]}{hour:02d}{stamp[13:]}"
            # the timestamp alone is rewritten: the readings stay the exact numbers written
            traffic.bodies[i] = body.replace(json.dumps(stamp), json.dumps(moved), 1)
    return last


def registered_silence(client: Any, table: str, ledger: str, day: str, sensor: int = QUIET_SENSOR) -> list[Silent]:
    """Register ``sensor`` with its own threshold, then the silence check at ``CHECKED_AT`` of ``day``
    (UTC): the registered sensors silent then (only this one is registered)."""
    now = dt.datetime.combine(dt.date.fromisoformat(day), CHECKED_AT, tzinfo=dt.UTC)
    midnight = dt.datetime.combine(dt.date.fromisoformat(day), dt.time(0), tzinfo=dt.UTC)
    registry = Registry(table_name=table, ledger_table_name=ledger, client=client, clock=lambda: midnight)
    registry.register(
        SensorProfile(sensor, "quiet demo sensor", f"demo-quiet-{sensor}", silence_hours=QUIET_THRESHOLD_HOURS)
    )
    check = SilenceCheck(
        table_name=table, client=client, default_hours=None, default_zone=ZoneInfo("UTC"), clock=lambda: now
    )
    return check.run().silent
