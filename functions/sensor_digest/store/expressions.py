"""The parts of DynamoDB's expressions every write here is built of: the conditions, each named once
(every name and value a placeholder, as Powertools' persistence layer spells its records':
``utilities/idempotency/persistence/dynamodb.py``); an update expression in the making (``Parts``),
to which each part of a write adds its clauses, conditions and placeholders; how much one write may
carry within DynamoDB's limits on expressions (``fits``); the conditional put every kind of item
shares (the day item's, a marker's, a profile's); and the wrappers that make a call's parameters an
action of ``TransactWriteItems``. What a day write is made of is ``day_writes.py``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sensor_digest.store import schema
from sensor_digest.store.tally import COUNTED, STATISTICS, Merge, Tally

Params = dict[str, Any]

# -- the conditions, named -------------------------------------------------------------------------

ITEM_EXISTS = "attribute_exists(#pk)"
ITEM_ABSENT = "attribute_not_exists(#pk)"
HOURS_MAP_THERE = "attribute_type(#hours, :mtype)"
HOURS_MAP_ABSENT = "(attribute_not_exists(#hours) OR NOT attribute_type(#hours, :mtype))"
ON_PAGE = "#page = :page"
ON_FIRST_PAGE = "(attribute_not_exists(#page) OR #page = :page)"  # a day the import created holds no IdPage
STILL_HASHED = "#count = #hashed"
IDS_FIT = "(attribute_not_exists(#ids) OR size(#ids) <= :room)"
IDS_BINARY = "(attribute_not_exists(#ids) OR attribute_type(#ids, :bs))"  # NOT contains holds on any other type
IDS_THERE = "attribute_type(#ids, :bs)"  # past page 0 the day item's 40 identities are there
AFTER_APPLIED = "(attribute_not_exists(#applied) OR #applied < :first)"
READINGS_ABSENT = "attribute_not_exists(#R)"
READINGS_THERE = "attribute_type(#R, :mtype)"
IMPORT_SEQ_AS_READ = "#iseq = :iseq"
IMPORT_SEQ_NONE = "attribute_not_exists(#iseq)"
COUNT_AS_READ = "#count = :counted"
COUNT_NONE = "attribute_not_exists(#count)"


def ids_new(ids: Sequence[bytes], values: Params, *, there: bool = False) -> list[str]:
    """``NOT contains(#ids, :iN)`` for each identity of ``ids`` (none of them counted here yet), on
    ``#ids`` being absent or a binary set (``IDS_BINARY``: a set of another type, written by hand,
    contains no identity, so every check of it would pass and a report counted before count again);
    ``there``: on ``#ids`` being a binary set (``IDS_THERE``: a day item past page 0 filled it, so one
    without it was edited by hand and proves nothing new)."""
    if not ids:
        return []
    values[":bs"] = {"S": "BS"}
    terms = [IDS_THERE if there else IDS_BINARY]
    for i, digest in enumerate(ids):
        values[f":i{i}"] = {"B": digest}
        terms.append(f"NOT contains(#ids, :i{i})")
    return terms


@dataclass
class Parts:
    """An update expression in the making: its clauses, its conditions, and their placeholders."""

    names: dict[str, str] = field(default_factory=dict)
    values: Params = field(default_factory=dict)
    adds: list[str] = field(default_factory=list)
    sets: list[str] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)

    def expression(self) -> str:
        clauses = []
        if self.adds:
            clauses.append("ADD " + ", ".join(self.adds))
        if self.sets:
            clauses.append("SET " + ", ".join(self.sets))
        if self.removes:
            clauses.append("REMOVE " + ", ".join(self.removes))
        return " ".join(clauses)


# -- how much one write may carry ------------------------------------------------------------------

EXPRESSION_CHARS = 3_800
"""Below DynamoDB's 4 KB for an update or a condition expression (with room for a key's names)."""
EXPRESSION_OPERATORS = 280
"""Below DynamoDB's 300 operators and functions in an expression."""


def fits(tally: Tally, ids: int = 0) -> bool:
    """Whether a write of ``tally`` checking ``ids`` identities stays inside DynamoDB's limits on
    expressions, however little is known of the day item (every reading name's map there, no minimum
    or maximum known: the most conditions a write of it can carry). An upper bound, held to the
    built expressions by ``tests/unit/test_day_writes.py``: a counter writes a group's messages in
    chunks that fit."""
    pairs = sum(len(r.hours) for r in tally.readings.values())
    return within_limits(hours=len(tally.hours), names=len(tally.readings), pairs=pairs, ids=ids)


def within_limits(*, hours: int, names: int, pairs: int, ids: int) -> bool:
    """``fits``, from how many hours, reading names, (name, hour) pairs and identities a write holds."""
    updates = 200 + 30 * hours + 34 * names + PAIR_SHARE[0] * pairs
    # identities: IDS_BINARY (or IDS_THERE) once, then AND NOT contains(...) for each
    conditions = 340 + (70 + 30 * ids if ids else 0) + 40 * names + PAIR_SHARE[1] * pairs
    operators = 22 + (4 + 3 * ids if ids else 0) + 2 * names + PAIR_SHARE[2] * pairs
    return updates <= EXPRESSION_CHARS and conditions <= EXPRESSION_CHARS and operators <= EXPRESSION_OPERATORS


PAIR_COST = (24, 40, 2)
"""A (name, hour) pair's share of the bound before its statistics (characters of the update, of the
condition, operators): the hour set whole on condition that it is absent or still its one value, or
its list's length checked."""
MERGE_COST = {Merge.SUM: (27, 0, 1), Merge.LEAST: (26, 35, 2), Merge.GREATEST: (26, 35, 2)}
"""Each statistic's share, by its ``Merge``: a sum adds a clause to its element; a bound sets it, on
a condition. With the count, the sum, the minimum and the maximum a pair's share is 130, 110 and 8,
the bound this project has always written by. The shares are calibrated to it, not each clause's
length (a sum's clause is longer, a bound's condition shorter): ``tests/unit/test_day_writes.py``
builds the largest write the bound admits and holds it inside DynamoDB's limits, so a statistic
whose share is too small fails there."""


def _pair_share() -> tuple[int, int, int]:
    """A (name, hour) pair's whole share: ``PAIR_COST`` and its statistics' (the count's too)."""
    shares = [PAIR_COST, *(MERGE_COST[s.merge] for s in (COUNTED, *STATISTICS))]
    return sum(c[0] for c in shares), sum(c[1] for c in shares), sum(c[2] for c in shares)


PAIR_SHARE = _pair_share()
"""Summed once: ``within_limits`` runs for each message a chunk of a group might take."""


# -- the puts and the actions ----------------------------------------------------------------------


def put_if_absent(table: str, item: schema.Item, key_attribute: str = schema.SENSOR_ID) -> Params:
    """Put ``item`` on condition that no item has its key (``attribute_not_exists`` of its partition key)."""
    return {
        "TableName": table,
        "Item": item,
        "ConditionExpression": ITEM_ABSENT,
        "ExpressionAttributeNames": {"#pk": key_attribute},
    }


def put(params: Params) -> dict[str, Params]:
    """``params`` as a ``Put`` action of ``TransactWriteItems``."""
    return {"Put": params}


def update(params: Params) -> dict[str, Params]:
    """``params`` as an ``Update`` action of ``TransactWriteItems``."""
    return {"Update": params}
