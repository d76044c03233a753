"""The tables a test gets (``Tables``, made by the ``tables`` fixture), and reading them back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sensor_digest.store import schema
from sensor_digest.store.identities import identity_hash
from sensor_digest.store.reads import by_sensor, day_counts, scan_all, summaries
from sensor_digest.store.sizes import item_bytes

__all__ = [
    "Tables",
    "by_sensor",
    "day_counts",
    "identities",
    "largest_item",
    "ledger_pages",
    "markers",
    "recorded",
    "scan_all",
    "summaries",
]


@dataclass(frozen=True)
class Tables:
    table: str
    ledger: str


def identities(client: Any, tables: Tables) -> int:
    """How many identities the compact ledger holds: the hashes in day items and in ledger pages."""
    items = scan_all(client, tables.table) + scan_all(client, tables.ledger)
    return sum(len(item.get(schema.IDS, {}).get("BS", [])) for item in items)


def ledger_pages(client: Any, tables: Tables) -> int:
    """How many ledger pages the compact ledger wrote: the identities that did not fit in their day item."""
    keys = (str(item[schema.LEDGER_KEY]["S"]) for item in scan_all(client, tables.ledger))
    return sum(1 for key in keys if key.startswith(schema.ID_PAGE_PREFIX))


def recorded(client: Any, tables: Tables, sensor_id: int, day: str, event_id: str) -> bool:
    """Whether the ledger holds this report as counted: its identity hash in the sensor-day's day
    item or ledger pages (the compact ledger), or its marker ``MSG#<sensor_id>#<event_id>``."""
    digest = identity_hash(event_id)
    page_prefix = f"{schema.ID_PAGE_PREFIX}{sensor_id}#{day}#"
    for item in scan_all(client, tables.ledger):
        key = str(item[schema.LEDGER_KEY]["S"])
        if key == schema.marker_id(sensor_id, event_id):
            return True
        if key.startswith(page_prefix) and digest in item.get(schema.IDS, {}).get("BS", []):
            return True
    for item in scan_all(client, tables.table):
        if item.get(schema.SENSOR_ID) == {"N": str(sensor_id)} and item.get(schema.DATE) == {"S": day}:
            return digest in item.get(schema.IDS, {}).get("BS", [])
    return False


def markers(client: Any, tables: Tables) -> list[str]:
    """The per-message markers' keys (``MSG#<sensor_id>#<event_id>``), sorted."""
    keys = (str(item[schema.LEDGER_KEY]["S"]) for item in scan_all(client, tables.ledger))
    return sorted(k for k in keys if k.startswith(schema.MARKER_PREFIX))


def largest_item(client: Any, tables: Tables) -> int:
    """The size of the largest item of both tables, by DynamoDB's rules (bytes)."""
    items = scan_all(client, tables.table) + scan_all(client, tables.ledger)
    return max((item_bytes(item) for item in items), default=0)
