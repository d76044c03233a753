"""What mends an item of the digest table that does not have the contract's shape (written by hand,
restored from elsewhere, or put there by another writer), in words a person can act on. The readers
name the item and what is wrong with it (``schema.MalformedItem``); these say what to do about it.

- A **day item** whose ``DataCount`` is no whole number, or is negative: nothing in the pipeline
  recomputes a day's count (the reports are gone; the ledger's markers record each counted
  message's count only while they live), so the count is set by hand, then the month's summary
  element is brought back to it by the exact rebuild (the summary path only ever raises an element).
  ``summary rebuild --exact`` alone does not mend it: it reads the day items, and cannot read this one.
- A **summary item** whose ``DailyCounts`` is no map or holds an element that is no number: the exact
  rebuild rewrites it from the sensor's day items.
- A **profile** (``Date = PROFILE``) whose ``SensorId`` is no sensor id (outside 0 to 2^53 - 1, or no
  whole number): no command takes such an id, so the item is removed by hand.
"""

from __future__ import annotations

from sensor_digest.store import schema


def day_item(sensor_id: int | str, day: str) -> str:
    """How to mend sensor ``sensor_id``'s day item of ``day``."""
    return (
        f"set its {schema.DATA_COUNT} to the day's count, a whole number of at least 0, by hand (an UpdateItem of "
        f"{schema.SENSOR_ID} {sensor_id}, {schema.DATE} {day} with SET {schema.DATA_COUNT} = :n), then run "
        f"`sensor-digest summary rebuild --exact --sensor {sensor_id}`"
    )


def summary_item(sensor_id: int | str) -> str:
    """How to mend one of sensor ``sensor_id``'s summary items."""
    return f"run `sensor-digest summary rebuild --exact --sensor {sensor_id}`: it rewrites the month from its day items"


def profile_id(raw_id: str) -> str:
    """How to remove a profile whose ``SensorId`` (``raw_id``, as DynamoDB keeps it) is no sensor id."""
    return (
        f"no sensor can have this id (0 to 2^53 - 1) and no command takes it: delete the item "
        f"({schema.SENSOR_ID} {raw_id}, {schema.DATE} {schema.PROFILE_SORT_KEY}) from the digest table by hand"
    )
