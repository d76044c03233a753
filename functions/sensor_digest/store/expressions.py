"""The conditional put every kind of item shares (the day item's, a marker's, a profile's), and the
wrappers that make a call's parameters an action of ``TransactWriteItems``. The day item's own
writes are ``day_writes.py``'s."""

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


def put(params: Params) -> dict[str, Params]:
    """``params`` as a ``Put`` action of ``TransactWriteItems``."""
    return {"Put": params}


def update(params: Params) -> dict[str, Params]:
    """``params`` as an ``Update`` action of ``TransactWriteItems``."""
    return {"Update": params}
