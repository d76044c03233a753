"""The compact ledger's identities: what it stores of a counted report, and how many fit where.

A report's identity is its sensor and its ``event_id`` (the origin ``messageId`` when the body names
none). The compact ledger keeps each counted identity of a sensor-day as a 12-byte hash
(``identity_hash``: BLAKE2b, personalised) in the binary set ``Ids``:

- first in the day item itself (page 0), up to ``DAY_IDS`` hashes: the count and the identities
  are then one conditional ``UpdateItem``, no transaction, no second item;
- then in ledger page items ``IDS#<sensor_id>#<day>#<page>`` (pages 1, 2, ...), up to
  ``PAGE_IDS`` hashes each, written in the same ``TransactWriteItems`` as the count.

Both sizes keep every item under 1 KB, so no write ever costs more than one unit per item (two in
a transaction): a day item with a full page 0, a full day of ``HourCounts`` (24 counts of up to 16
digits), ``HashedCount`` and ``SkippedPages`` holds at most about 880 bytes, a full page about 920
(``tests/unit/test_identities.py`` computes both by DynamoDB's size rules, with a byte per element
to spare).

Two different identities of one sensor-day are taken for one report only if their hashes are
equal: for a report, the chance is at most ``n / 2**96`` where ``n`` is how many reports that
sensor-day holds, 1.3e-23 for a million reports in a day (``collision_chance``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

ID_BYTES = 12
"""Bytes of an identity hash (96 bits)."""
DAY_IDS = 40
"""How many identities the day item holds (page 0)."""
PAGE_IDS = 72
"""How many identities a ledger page item holds."""
WRITE_IDS = PAGE_IDS
"""The most messages one write carries: a write then spans at most two pages (the rest of the
current one and the start of the next), and its conditions stay far inside DynamoDB's 300 operators
and 4 KB per expression (each identity is one ``NOT contains(...)`` term, three operators)."""

_PERSON = b"sensor-digest.id"  # domain separation: these hashes mean nothing anywhere else

IMPORT_ID_BYTES = 8
"""Bytes of an imported row's identity hash (64 bits): kept for good, on the row's day (docs/import.md)."""
IMPORT_DAY_IDS = 160
"""How many imported rows' identities a day item holds itself (``ImportIds``, 1,280 bytes): a day
item of the import, with its hours, stays under 2 KB, so a sorted day of 100 reports is one write of
2 units. Past them, a write's identities are a ledger page of their own, written in the same
transaction as the count."""
IMPORT_PAGE_IDS = 20_000
"""The most identities one write of the import carries (a page of them is at most 160 KB)."""
_IMPORT_PERSON = b"sensor-digest.ii"


def identity_hash(event_id: str) -> bytes:
    """The stored identity of a report of one sensor-day: 12 bytes of BLAKE2b of its ``event_id``
    (or origin ``messageId``); the sensor and the day are the keys of the items that hold it."""
    return hashlib.blake2b(event_id.encode("utf-8"), digest_size=ID_BYTES, person=_PERSON).digest()


def import_event_hash(event_id: str) -> bytes:
    """An imported row's identity when it names an ``event_id``: 8 bytes of BLAKE2b of it (the day
    item or page that holds it names the sensor and the day)."""
    return hashlib.blake2b(b"e" + event_id.encode("utf-8"), digest_size=IMPORT_ID_BYTES, person=_IMPORT_PERSON).digest()


def import_row_hash(object_id: bytes, position: int) -> bytes:
    """An imported row's identity when it names no ``event_id``: its object and its place there (its
    position among the object's rows, which is its line)."""
    place = position.to_bytes(8, "big")
    return hashlib.blake2b(b"p" + object_id + place, digest_size=IMPORT_ID_BYTES, person=_IMPORT_PERSON).digest()


def import_page_id(identities: Sequence[bytes]) -> bytes:
    """The id of a page of imported identities: 8 bytes of BLAKE2b of them, sorted."""
    return hashlib.blake2b(b"".join(sorted(identities)), digest_size=IMPORT_ID_BYTES, person=_IMPORT_PERSON).digest()


def import_collision_chance(rows_in_day: int) -> float:
    """The chance that an imported row of a sensor-day holding ``rows_in_day`` identities is taken for
    another (an upper bound: each other hash equal to its own with chance 2**-64)."""
    return float(rows_in_day) / float(2 ** (8 * IMPORT_ID_BYTES))


def collision_chance(reports_in_day: int) -> float:
    """The chance that one report of a sensor-day holding ``reports_in_day`` reports is taken for
    another (an upper bound: each other hash equal to its own with chance 2**-96)."""
    return float(reports_in_day) / float(2 ** (8 * ID_BYTES))
