"""The conditional writes that more than one path spells: built here from named parts, every value
and name a placeholder (``ExpressionAttributeNames`` / ``ExpressionAttributeValues``).

Each builder returns the parameters of one ``PutItem`` / ``UpdateItem`` call; ``put`` and
``update`` wrap them as an action of ``TransactWriteItems``.
"""

from __future__ import annotations

from typing import Any

from sensor_digest.store import schema

Params = dict[str, Any]


def put_if_absent(table: str, item: schema.Item, key_attribute: str = schema.SENSOR_ID) -> Params:
    """Put ``item`` on condition that no item has its key (``attribute_not_exists`` of its partition key)."""
    return {
        "TableName": table,
        "Item": item,
        "ConditionExpression": "attribute_not_exists(#pk)",
        "ExpressionAttributeNames": {"#pk": key_attribute},
    }


def add_count(table: str, key: schema.Item, n: int, *, only_if_exists: bool) -> Params:
    """``ADD DataCount :n`` to a day item; ``only_if_exists``: on condition that the item exists
    (step 1 of update -> insert -> update; step 3 adds without condition)."""
    update: Params = {
        "TableName": table,
        "Key": key,
        "UpdateExpression": "ADD #count :n",
        "ExpressionAttributeNames": {"#count": schema.DATA_COUNT},
        "ExpressionAttributeValues": {":n": {"N": str(n)}},
    }
    if only_if_exists:
        update["ConditionExpression"] = "attribute_exists(#pk)"
        update["ExpressionAttributeNames"]["#pk"] = schema.SENSOR_ID
    return update


def put(params: Params) -> dict[str, Params]:
    """``params`` as a ``Put`` action of ``TransactWriteItems``."""
    return {"Put": params}


def update(params: Params) -> dict[str, Params]:
    """``params`` as an ``Update`` action of ``TransactWriteItems``."""
    return {"Update": params}


def absent_from_set(name: str, ids: list[bytes], values: Params) -> list[str]:
    """``NOT contains(name, :iN)`` for each identity of ``ids``, its value added to ``values``."""
    terms = []
    for i, digest in enumerate(ids):
        values[f":i{i}"] = {"B": digest}
        terms.append(f"NOT contains({name}, :i{i})")
    return terms
