"""The history import's writes of a sensor-day (docs/import.md): its guard on a day item it adds to
(``Imported``), a new day item (``import_create``), a page of imported identities (``import_page_put``).

The history import keeps each counted row's identity (8 bytes) for good, on the day it counted on,
in the same write as its count: in the day item's ``ImportIds`` while it has room, else in pages
``IMPIDS#<sensor>#<day>#<page id>`` written in the same transaction and named in the day item's
``ImportPages`` (the item's own ``ImportIds`` move into the first such page, so the item keeps 8
bytes a page). Every import write adds one to ``ImportSeq`` and rests on ``ImportSeq`` and
``DataCount`` being what the writer read: a write is refused whenever another import, or live
ingest, wrote the day since. So what the writer knows of the day's imported identities (the day
item's, and its pages', immutable once written) and of its live reports is all there is. A day the
import creates is a day of the compact ledger (hashed, on page 0): the live reports that follow
are known by their hashes, and check the day's imported identities themselves (``imports`` of
``update``: a live write that names an ``event_id`` rests on ``ImportSeq``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sensor_digest.store import expressions, schema
from sensor_digest.store.day_view import DayKey
from sensor_digest.store.expressions import COUNT_AS_READ, COUNT_NONE, ITEM_EXISTS, Params, Parts
from sensor_digest.store.guards import imports_as_read
from sensor_digest.store.tally import Tally


@dataclass(frozen=True)
class Imported:
    """The history import's: the day as the writer read it: its ``ImportSeq`` (``seq``, 0: none yet) and
    its ``DataCount`` (``count``, ``None``: none), so that neither another import nor live ingest wrote it
    since; ``added`` join the day item's ``ImportIds``, or ``pages`` (written in the same transaction, the
    item's ``ImportIds`` moved into them when ``moved``) join its ``ImportPages``; ``compact``: a day of
    the compact ledger, whose ``HashedCount`` grows with the count (an imported row is known by its
    identity as a live report by its hash: the day stays *hashed*)."""

    seq: int
    count: int | None
    added: Sequence[bytes] = ()
    pages: Sequence[bytes] = ()
    moved: bool = False
    compact: bool = False

    def apply(self, parts: Parts, tally: Tally) -> None:
        parts.names["#pk"] = schema.SENSOR_ID
        parts.values[":one"] = {"N": "1"}
        parts.adds.append("#iseq :one")
        parts.conditions.append(ITEM_EXISTS)
        imports_as_read(parts, self.seq)
        if self.count is None:
            parts.conditions.append(COUNT_NONE)
        else:
            parts.values[":counted"] = {"N": str(self.count)}
            parts.conditions.append(COUNT_AS_READ)
        if self.compact:
            parts.names["#hashed"] = schema.HASHED_COUNT
            parts.adds.append("#hashed :n")
        if self.added or self.moved:
            parts.names["#iids"] = schema.IMPORT_IDS
        if self.added:
            parts.values[":iids"] = {"BS": list(self.added)}
            parts.adds.append("#iids :iids")
        elif self.moved:
            parts.removes.append("#iids")
        if self.pages:
            parts.names["#ipages"] = schema.IMPORT_PAGES
            parts.values[":ipages"] = {"BS": list(self.pages)}
            parts.adds.append("#ipages :ipages")


def import_create(table: str, day: DayKey, tally: Tally, *, added: Sequence[bytes], pages: Sequence[bytes]) -> Params:
    """The ``PutItem`` of ``day``'s new item from the import: its tally and its identities (``added`` in
    the item, or ``pages`` named), a compact day (every report hashed: ``HashedCount``; on page 0, its
    ``IdPage`` left out, 8 bytes that would take a sorted day of 100 rows past 1 KB), on condition that
    it does not exist."""
    item: schema.Item = {**schema.day_key(*day), **tally.item()}
    item[schema.HASHED_COUNT] = {"N": str(tally.count)}
    item[schema.IMPORT_SEQ] = {"N": "1"}
    if added:
        item[schema.IMPORT_IDS] = {"BS": list(added)}
    if pages:
        item[schema.IMPORT_PAGES] = {"BS": list(pages)}
    params = expressions.put_if_absent(table, item)
    params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return params


def import_page_put(ledger: str, day: DayKey, page: bytes, identities: Sequence[bytes]) -> Params:
    """The ``PutItem`` of a page of ``day``'s imported identities, on condition that it is not there;
    never expires."""
    item = {**schema.import_page_key(*day, page), schema.IDS: {"BS": list(identities)}}
    return expressions.put_if_absent(ledger, item, schema.LEDGER_KEY)
