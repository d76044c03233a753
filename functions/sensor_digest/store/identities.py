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

TOKEN_BYTES = 8
"""Bytes of an import token (64 bits): a day item holds one per chunk of an imported object counted
on it (docs/import.md)."""
IMPORT_TOKENS = 32
"""How many import tokens a day item holds (``Imports``: 8 bytes each, about 300 bytes with the set's
own): a day item of the import, with its hours, stays under 1 KB, so its write costs one unit. Past
them, a chunk's token is a ledger item written in the same transaction as the count."""
_TOKEN_PERSON = b"sensor-digest.im"


def identity_hash(event_id: str) -> bytes:
    """The stored identity of a report of one sensor-day: 12 bytes of BLAKE2b of its ``event_id``
    (or origin ``messageId``); the sensor and the day are the keys of the items that hold it."""
    return hashlib.blake2b(event_id.encode("utf-8"), digest_size=ID_BYTES, person=_PERSON).digest()


def import_token(object_id: bytes, first: int, last: int, part: int = 0) -> bytes:
    """The token of one write of the import: part ``part`` of the reports of rows ``first`` to ``last``
    (their positions in the object) of the object ``object_id`` on one sensor-day (the day item that
    holds the token names the sensor-day). A function of the object and the row positions only, so
    that importing the object again makes the same tokens."""
    text = f"{first}:{last}:{part}".encode("ascii")
    return hashlib.blake2b(object_id + text, digest_size=TOKEN_BYTES, person=_TOKEN_PERSON).digest()


def collision_chance(reports_in_day: int) -> float:
    """The chance that one report of a sensor-day holding ``reports_in_day`` reports is taken for
    another (an upper bound: each other hash equal to its own with chance 2**-96)."""
    return float(reports_in_day) / float(2 ** (8 * ID_BYTES))
