"""What of the digest table's stream matters to the summary path, defined once.

``DAY_ITEM_FILTER`` is the Lambda event filter pattern the stack puts on the stream event
source; the local runtime applies the very same pattern (``matches_filter``) before it hands
a batch to the summary handler, and the handler checks it again (``day_count_of``) because a
filter is an optimisation, not a guarantee.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sensor_digest.errors import MalformedItem
from sensor_digest.store import schema
from sensor_digest.store.schema import is_day

DAY_ITEM_FILTER: dict[str, Any] = {
    "eventName": ["INSERT", "MODIFY"],
    "dynamodb": {"NewImage": {schema.DATA_COUNT: {"N": [{"exists": True}]}}},
}
"""Only inserts and updates of day items (their new image has ``DataCount``) reach the summary."""

ALARM_FILTER: dict[str, Any] = {
    "eventName": ["INSERT", "MODIFY"],
    "dynamodb": {"NewImage": {schema.ANNOUNCE: {"N": [{"exists": True}]}}},
}
"""Only writes of alarm items that made transitions (their new image has ``Announce``) reach the announcer."""


@dataclass(frozen=True)
class DayCount:
    sensor_id: int
    day: str
    count: int


def day_count_of(record: Mapping[str, Any]) -> DayCount | None:
    """The day item a stream record carries, or ``None`` for anything that is not a day item."""
    if record.get("eventName") not in ("INSERT", "MODIFY"):
        return None
    image = (record.get("dynamodb") or {}).get("NewImage") or {}
    try:
        found = schema.day_count_of_item(image)
    except (MalformedItem, KeyError, TypeError, ValueError, AttributeError):
        return None
    if found is None:
        return None
    sensor_id, day, count = found
    if not is_day(day):
        return None
    return DayCount(sensor_id=sensor_id, day=day, count=count)


def matches_filter(record: Mapping[str, Any], pattern: Mapping[str, Any] = DAY_ITEM_FILTER) -> bool:
    """Lambda's event filtering for the subset of its syntax SensorDigest uses.

    A pattern key maps to a nested pattern (recurse), or to a list of allowed values where
    ``{"exists": true|false}`` tests presence; every key must match.
    """
    for key, rule in pattern.items():
        present = isinstance(record, Mapping) and key in record
        value = record.get(key) if present else None
        if isinstance(rule, Mapping):
            if not present or not matches_filter(value, rule):  # type: ignore[arg-type]
                return False
            continue
        if not any(_matches_value(present, value, allowed) for allowed in rule):
            return False
    return True


def _matches_value(present: bool, value: Any, allowed: Any) -> bool:
    if isinstance(allowed, Mapping) and "exists" in allowed:
        return present is bool(allowed["exists"])
    return present and value == allowed
