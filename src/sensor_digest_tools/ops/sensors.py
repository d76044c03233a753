"""What ``sensors delete`` would do, read before it acts (its question, and ``--dry-run``).

``Registry.delete`` decides in its transaction; this reads the same two items, the profile and its
serial's sentinel, with the same rules, and changes nothing: the serial is freed when its sentinel
is absent or names this sensor, and stays taken when it names another (or no) sensor. A profile
without a profile's shape (written by hand) is deleted as it was read, as the registry does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sensor_digest.errors import MalformedItem
from sensor_digest.registry import SensorNotFound, SensorProfile, sentinel_owner
from sensor_digest.store import reads, schema


@dataclass(frozen=True)
class DeletionPlan:
    """The profile a delete would remove (``None`` and ``malformed`` saying why, for a malformed
    item), its serial, and whether the serial would be free again (else ``held_by``: the sensor its
    sentinel names, or ``None`` when it names none)."""

    sensor_id: int
    profile: SensorProfile | None
    malformed: str | None
    serial: str | None
    serial_freed: bool
    held_by: int | None = None
    sentinel: bool = True  # the serial has a sentinel in the ledger


def plan_delete(client: Any, table: str, ledger: str, sensor_id: int) -> DeletionPlan:
    """Read what deleting ``sensor_id`` would remove (``SensorNotFound`` when it is not registered)."""
    item = reads.get_item(client, table, schema.profile_key(sensor_id))
    if item is None:
        raise SensorNotFound(f"sensor {sensor_id} is not registered")
    profile, malformed = _profile(item)
    serial = item.get(schema.SERIAL, {}).get("S") if isinstance(item.get(schema.SERIAL), dict) else None
    if serial is None:
        return DeletionPlan(sensor_id, profile, malformed, serial=None, serial_freed=False)
    sentinel = reads.get_item(client, ledger, schema.sentinel_key(serial))
    if sentinel is None:  # no sentinel: nothing the registry could free (another sensor may hold it)
        return DeletionPlan(sensor_id, profile, malformed, serial=serial, serial_freed=False, sentinel=False)
    owner = sentinel_owner(sentinel)
    if owner == sensor_id:
        return DeletionPlan(sensor_id, profile, malformed, serial=serial, serial_freed=True)
    return DeletionPlan(sensor_id, profile, malformed, serial=serial, serial_freed=False, held_by=owner)


def _profile(item: dict[str, Any]) -> tuple[SensorProfile | None, str | None]:
    try:
        return SensorProfile.from_item(item), None
    except MalformedItem as bad:
        return None, str(bad)
