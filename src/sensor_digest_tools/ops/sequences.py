"""``sensor-digest migrate sequences``: the day items of ordered mode's first release, rewritten.

Ordered mode (a FIFO queue) keeps on each day item the highest SQS sequence number applied to it.
Its first release kept one pair: ``AppliedSequence`` (the number) and ``SequenceSource`` (the ARN of
the queue it belongs to). From ``923e4ec`` on, a day item keeps one attribute per queue,
``AppliedSequence#<queue ARN>``; the previous release (``f127501``) read both and took the higher,
this one reads the queue's own attribute alone. A day item can keep the pair for good (its day was
last counted by the first release), so a FIFO stack that ever ran that release is migrated once,
before the upgrade (docs/deploy.md): the pair's number moves into its queue's attribute where that
holds less or nothing, and the pair is removed.

One ``Scan`` of the digest table for items with ``AppliedSequence`` (an operator's command, never a
Lambda's path), then one ``UpdateItem`` per such item, on condition that its pair is still what was
read and its queue's attribute no higher than read. A refusal returns the item as it is
(``ReturnValuesOnConditionCheckFailure=ALL_OLD``), which is migrated in turn: a counter meanwhile only
raised the queue's attribute, a migration meanwhile removed the pair, a delete removed the item. Safe
to repeat, and while the pipeline runs on ``f127501`` or later (the first release itself would write
the pair again); the queue's attribute is never lowered. A pair that is not as the first release wrote
it (a number past 2^128 - 1, no queue) or whose queue's attribute is no such number (written by hand)
is named and left alone; so is an item DynamoDB refuses to write, and the others go on.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from sensor_digest.errors import ConfigurationError, Contention, StoreFault
from sensor_digest.store import dynamo, schema
from sensor_digest.store.day_store import Action, DayStore, Refused

SEQUENCE_TEXT = re.compile(rf"[0-9]{{{schema.SEQUENCE_DIGITS}}}")
"""A sequence number as the first release stored it (``schema.sequence_text``)."""


@dataclass
class SequenceMigration:
    """What a migration did: the items found with the pair, those whose pair it moved into its queue's
    attribute (``raised``: the attribute held less or nothing) or removed (the attribute held as much
    already), and each item it left alone, with the reason."""

    found: int = 0
    raised: int = 0
    removed: int = 0
    failed: list[str] = field(default_factory=list)


def migrate_sequences(
    client: Any,
    table: str,
    *,
    max_attempts: int = 8,
    sleep: Callable[[float], None] = time.sleep,
) -> SequenceMigration:
    """Migrate every day item of ``table`` that holds the first release's pair (see the module)."""
    _check_digest_table(client, table)
    store = DayStore(client, table)
    report = SequenceMigration()
    for item in _items_with_pair(client, table):
        report.found += 1
        try:
            _migrate(store, item, report, max_attempts=max_attempts, sleep=sleep)
        except StoreFault as fault:  # refused, or held by another writer every time: named, the others go on
            report.failed.append(f"{schema.describe(item)}: {fault}; left as is")
    return report


def _check_digest_table(client: Any, table: str) -> None:
    """``ConfigurationError`` unless ``table`` is keyed as the digest table (``SensorId``, ``Date``)."""
    described = dynamo.call("DescribeTable", lambda: client.describe_table(TableName=table))["Table"]
    keys = [k["AttributeName"] for k in sorted(described["KeySchema"], key=lambda k: k["KeyType"])]
    if keys != [schema.SENSOR_ID, schema.DATE]:
        raise ConfigurationError(
            f"{table} is no digest table (its key is {', '.join(keys)}, not {schema.SENSOR_ID}, {schema.DATE}): "
            "name the pipeline's table with --table or --stack"
        )


def _items_with_pair(client: Any, table: str) -> Iterator[schema.Item]:
    pages = iter(
        client.get_paginator("scan").paginate(
            TableName=table,
            FilterExpression="attribute_exists(#seq)",
            ExpressionAttributeNames={"#seq": schema.APPLIED_SEQUENCE},
            ConsistentRead=True,
        )
    )
    while True:
        page = dynamo.call("Scan", lambda: next(pages, None))
        if page is None:
            return
        yield from page["Items"]


def _clipped(text: str) -> str:
    """A long text by its ends, so a line stays one line a person reads."""
    return text if len(text) <= 80 else f"{text[:40]}...{text[-20:]}"


def _shown(text: str | None) -> str:
    """A value for a person: quoted, a long one by its ends (``None``: not a string)."""
    return "(no string)" if text is None else repr(_clipped(text))


def _sequence(text: str | None) -> bool:
    """Whether ``text`` is a sequence number as the releases store it: 39 digits, at most 2**128 - 1."""
    return text is not None and SEQUENCE_TEXT.fullmatch(text) is not None and int(text) <= schema.MAX_SEQUENCE_NUMBER


def _text(item: Mapping[str, Any], name: str) -> str | None:
    value = item.get(name)
    text = value.get("S") if isinstance(value, Mapping) else None
    return text if isinstance(text, str) else None


def _migrate(
    store: DayStore,
    item: schema.Item,
    report: SequenceMigration,
    *,
    max_attempts: int,
    sleep: Callable[[float], None],
) -> None:
    """One item: written, or refused and read again as it is, up to ``max_attempts`` times."""
    for attempt in range(max_attempts):
        if schema.APPLIED_SEQUENCE not in item:  # gone (another migration), or the item deleted
            return
        applied, source = _text(item, schema.APPLIED_SEQUENCE), _text(item, schema.SEQUENCE_SOURCE)
        own_name = schema.applied_sequence_name(source) if source else None
        own = _text(item, own_name) if own_name else None
        held = own_name in item if own_name else False
        if applied is None or not source or not _sequence(applied) or (held and not _sequence(own)):
            seen = f"{schema.APPLIED_SEQUENCE} {_shown(applied)}, {schema.SEQUENCE_SOURCE} {_shown(source)}"
            if held:
                seen += f", {_clipped(str(own_name))} {_shown(own)}"
            report.failed.append(
                f"{schema.describe(item)}: {schema.APPLIED_SEQUENCE} and {schema.SEQUENCE_SOURCE} are not the pair "
                "ordered mode's first release wrote (a sequence number of 39 digits, at most 2**128 - 1, and a "
                f"queue's ARN), or its queue's own attribute is no such number ({seen}); left as is"
            )
            return
        raise_own = own is None or own < applied
        try:
            store.write([Action.update(_update(store.table, item, applied, source, own, raise_own))])
        except Contention:
            if attempt + 1 == max_attempts:
                raise
            sleep(0.05 * 2**attempt)
            continue
        except Refused as refused:
            item = refused.item
            continue
        if raise_own:
            report.raised += 1
        else:
            report.removed += 1
        return
    report.failed.append(f"{schema.describe(item)}: changed on each of {max_attempts} attempts; run it again")


def _update(
    table: str, item: schema.Item, applied: str, source: str, own: str | None, raise_own: bool
) -> dict[str, Any]:
    """The pair removed (its number moved into its queue's attribute when ``raise_own``), on condition
    that the pair and the queue's attribute are as read (the attribute may have grown past the pair)."""
    names = {
        "#seq": schema.APPLIED_SEQUENCE,
        "#src": schema.SEQUENCE_SOURCE,
        "#own": schema.applied_sequence_name(source),
    }
    values = {":seq": {"S": applied}, ":src": {"S": source}}
    conditions = ["#seq = :seq", "#src = :src"]
    expression = "REMOVE #seq, #src"
    if raise_own:
        expression = "SET #own = :seq " + expression
        conditions.append("(attribute_not_exists(#own) OR #own < :seq)")
    else:
        values[":own"] = {"S": str(own)}
        conditions.append("#own >= :own")
    return {
        "TableName": table,
        "Key": {schema.SENSOR_ID: item[schema.SENSOR_ID], schema.DATE: item[schema.DATE]},
        "UpdateExpression": expression,
        "ConditionExpression": " AND ".join(conditions),
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
