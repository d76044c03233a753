"""What mends an item of the digest table that does not have the contract's shape (written by hand,
restored from elsewhere, or put there by another writer), in words a person can act on. The readers
name the item and what is wrong with it (``schema.MalformedItem``); these say what to do about it.

- A **day item**, by the attribute at fault (``MalformedItem.attribute``):
  ``DataCount`` no whole number, negative, or too large to add to (its sum needs more than
  DynamoDB's 38 digits): nothing in the pipeline recomputes a day's count (the reports are gone;
  the ledger's markers record each counted message's count only while they live), so the count is
  set by hand, then the month's summary element is brought back to it by the exact rebuild (the
  summary path only ever raises an element); ``summary rebuild --exact`` alone does not mend it: it
  reads the day items, and cannot read this one.
  ``HourCounts`` no map of counts (or an element too large to add to): removed (the next report
  creates the map; the day's hours then read as incomplete). ``Ids`` no binary set, ``IdPage`` no
  page the day can have, ``HashedCount`` no number (or too large to add to): the compact ledger's
  own attributes, which only a write by hand puts wrong; each says what it must be (an identity
  page's ``Ids`` too, ``IDS#<sensor>#<day>#<page>`` in the ledger table). ``ReadingsRepairs``
  no whole number: set to one above any it held. ``ImportIds``,
  ``ImportPages``, ``ImportSeq`` not as the history import writes them, or a page they name gone:
  the import's own record of what it counted, put back or removed. The item too near 400 KB: the
  attributes that are not the contract's removed.
- A **summary item** whose ``DailyCounts`` is no map or holds an element that is no number: the exact
  rebuild rewrites it from the sensor's day items.
- A **profile** (``Date = PROFILE``) whose ``SensorId`` is no sensor id (outside 0 to 2^53 - 1, or no
  whole number): no command takes such an id, so the item is removed by hand.
"""

from __future__ import annotations

from sensor_digest.store import schema


def day_item(sensor_id: int | str, day: str, attribute: str | None = schema.DATA_COUNT) -> str:
    """How to mend sensor ``sensor_id``'s day item of ``day`` whose ``attribute`` is at fault
    (``None``: the item as a whole, too large to grow)."""
    where = f"{schema.SENSOR_ID} {sensor_id}, {schema.DATE} {day}"
    if attribute == schema.HOUR_COUNTS:
        return (
            f"remove its {schema.HOUR_COUNTS} by hand (an UpdateItem of {where} with REMOVE {schema.HOUR_COUNTS}): "
            "the next report creates the map again, and the day's hours read as incomplete"
        )
    if attribute == schema.IDS:
        return (
            f"its {schema.IDS} must be a binary set of 12-byte identity hashes (type BS), as ingest writes it: "
            f"put back the value ingest wrote, or, if none can be, set it to an empty set by removing it "
            f"(REMOVE {schema.IDS} on {where}: reports of the day counted before may then count again)"
        )
    if attribute == schema.ID_PAGE:
        return (
            f"its {schema.ID_PAGE} must be the number of the sensor-day's highest "
            f"{schema.ID_PAGE_PREFIX}{sensor_id}#{day}#<page> item in the ledger table, 0 when there is none "
            f"(an UpdateItem of {where} with SET {schema.ID_PAGE} = :page)"
        )
    if attribute == schema.SKIPPED_PAGES:
        return (
            f"its {schema.SKIPPED_PAGES} must be a whole number, the ledger pages ingest skipped when the item was put "
            f"back behind them: put back the value ingest wrote, or set it to its {schema.ID_PAGE} (an UpdateItem of "
            f"{where} with SET {schema.SKIPPED_PAGES} = {schema.ID_PAGE})"
        )
    if attribute in (schema.READINGS, schema.READINGS_COVER):
        return (
            f"remove its {schema.READINGS} and {schema.READINGS_COVER} by hand (an UpdateItem of {where} with "
            f"REMOVE {schema.READINGS}, {schema.READINGS_COVER} ADD {schema.READINGS_REPAIRS} :one, where :one is 1): "
            "the next report with readings creates them again, and the day's statistics read as covering only "
            "the reports counted since"
        )
    if attribute == schema.READINGS_REPAIRS:
        return (
            f"set its {schema.READINGS_REPAIRS} to a whole number above any it held (an UpdateItem of {where} with "
            f"SET {schema.READINGS_REPAIRS} = :n): it counts the repairs of the day's {schema.READINGS} by hand, "
            "and a container that saw another number reads the readings again"
        )
    if attribute == schema.HASHED_COUNT:
        return (
            f"remove its {schema.HASHED_COUNT} by hand (an UpdateItem of {where} with REMOVE {schema.HASHED_COUNT}): "
            "ingest then checks every report of the day against its marker too"
        )
    if attribute in (schema.IMPORT_IDS, schema.IMPORT_PAGES, schema.IMPORT_SEQ):
        return (
            f"its {schema.IMPORT_IDS}, {schema.IMPORT_PAGES} (binary sets) and {schema.IMPORT_SEQ} (a number) are "
            "the history import's record of the rows it counted on the day: put back what the import wrote (and the "
            f"{schema.IMPORT_PAGE_PREFIX}{sensor_id}#{day}#<page> items they name), or remove all three by hand "
            f"(REMOVE {schema.IMPORT_IDS}, {schema.IMPORT_PAGES}, {schema.IMPORT_SEQ} on {where}): rows imported "
            "before may then count again if imported again"
        )
    if attribute is None:
        return (
            f"the item has no room to grow: remove the attributes that are not the contract's "
            f"({schema.SENSOR_ID}, {schema.DATE}, {schema.DATA_COUNT}, {schema.HOUR_COUNTS}, {schema.READINGS}, "
            f"{schema.READINGS_COVER} and the ledger's {schema.IDS}, {schema.ID_PAGE}, {schema.HASHED_COUNT}, "
            f"{schema.SKIPPED_PAGES}) by hand (an UpdateItem of {where} with REMOVE); when its "
            f"{schema.READINGS} hold many names, REMOVE {schema.READINGS}, {schema.READINGS_COVER} (the day's "
            "statistics then cover only the reports counted since)"
        )
    return (
        f"set its {schema.DATA_COUNT} to the day's count, a whole number of at least 0, by hand (an UpdateItem of "
        f"{where} with SET {schema.DATA_COUNT} = :n), then run "
        f"`sensor-digest summary rebuild --exact --sensor {sensor_id}`"
    )


def id_page(sensor_id: int | str, day: str, page: int) -> str:
    """How to mend identity page ``page`` of sensor ``sensor_id``'s ``day`` whose ``Ids`` is no binary set."""
    return (
        f"its {schema.IDS} must be a binary set of 12-byte identity hashes (type BS), as ingest writes it: put back "
        f"the value ingest wrote to the ledger item {schema.ID_PAGE_PREFIX}{sensor_id}#{day}#{page}, or, if none can "
        f"be, REMOVE {schema.IDS} on it (reports of the day counted before may then count again)"
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
