"""The updates one write of the exactly-once ledger sends (``ledger_write.py``): the day item's
``ADD`` of the count, its identities and its hours, and an identity page's ``ADD``, each with the
conditions that make a refusal say what to correct, and ``ALL_OLD`` to say it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sensor_digest.counting.day_views import DayView, Kind
from sensor_digest.counting.hours import HoursWrite, update_expression
from sensor_digest.counting.identities import DAY_IDS, PAGE_IDS
from sensor_digest.store import expressions, schema


def day_action(
    table: str,
    key: schema.Item,
    view: DayView,
    hours: HoursWrite,
    *,
    total: int,
    counts: Mapping[str, int],
    checked: list[bytes],
    added: list[bytes],
    advance: int | None,
) -> dict[str, Any]:
    """The day item's ``ADD`` of ``total`` and its hours' ``counts``: on condition of its kind (and
    page, ``view``'s), of its hours map (``hours.py``), that none of ``checked`` is in its ``Ids``, and
    that ``added`` fits there; ``advance``: the page its ``IdPage`` moves on to. On a compact day the
    count's hashes add to ``HashedCount`` too, and while the view holds the day hashed, the write is
    conditioned on its staying so (``HashedCount = DataCount``, or an item without either)."""
    names = {"#count": schema.DATA_COUNT}
    values: dict[str, Any] = {":n": {"N": str(total)}}
    adds, sets, conditions = ["#count :n"], [], []
    if view.kind is Kind.PER_MESSAGE:
        names["#pk"] = schema.SENSOR_ID
        conditions.append("attribute_exists(#pk)")
    else:
        names["#page"], names["#hashed"] = schema.ID_PAGE, schema.HASHED_COUNT
        values[":page"] = {"N": str(view.page)}
        conditions.append("#page = :page")
        if view.rebase is not None:  # a day item from before HashedCount, hashed as read: set it, if still so
            sets.append("#hashed = :hashed")
            values[":hashed"], values[":seen"] = {"N": str(view.rebase + total)}, {"N": str(view.rebase)}
            conditions.append("#count = :seen AND attribute_not_exists(#hashed)")
        else:
            adds.append("#hashed :n")
        if view.hashed and view.rebase is None:
            conditions.append("(#count = #hashed OR (attribute_not_exists(#count) AND attribute_not_exists(#hashed)))")
        if checked or added:
            names["#ids"] = schema.IDS
        conditions += expressions.absent_from_set("#ids", checked, values)
        if added:
            adds.append("#ids :added")
            values[":added"] = {"BS": added}
            values[":room"] = {"N": str(DAY_IDS - len(added))}
            conditions.append("(attribute_not_exists(#ids) OR size(#ids) <= :room)")
        if advance is not None:
            sets.append("#page = :next")
            values[":next"] = {"N": str(advance)}
            if advance > view.page + 1:  # past pages found taken: the day item was put back behind them
                names["#skipped"] = schema.SKIPPED_PAGES
                values[":skipped"] = {"N": str(advance - view.page - 1)}
                adds.append("#skipped :skipped")
    hour_adds, hour_sets, hour_condition = hours.parts(counts, names, values)
    conditions.append(hour_condition)
    return {
        "TableName": table,
        "Key": key,
        "UpdateExpression": update_expression(adds + hour_adds, sets + hour_sets),
        "ConditionExpression": " AND ".join(conditions),
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }


def page_action(
    ledger: str, key: schema.Item, expires_at: int, checked: list[bytes], added: list[bytes]
) -> dict[str, Any]:
    """A page's (``key``) ``ADD`` of ``added``: on condition that none of ``checked`` is there and
    that ``added`` fits; its lifetime starts again (``ExpiresAt``)."""
    values: dict[str, Any] = {
        ":added": {"BS": added},
        ":room": {"N": str(PAGE_IDS - len(added))},
        ":expires": {"N": str(expires_at)},
    }
    conditions = [
        *expressions.absent_from_set("#ids", checked, values),
        "(attribute_not_exists(#ids) OR size(#ids) <= :room)",
    ]
    return {
        "TableName": ledger,
        "Key": key,
        "UpdateExpression": "ADD #ids :added SET #expires = :expires",
        "ConditionExpression": " AND ".join(conditions),
        "ExpressionAttributeNames": {"#ids": schema.IDS, "#expires": schema.EXPIRES_AT},
        "ExpressionAttributeValues": values,
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
