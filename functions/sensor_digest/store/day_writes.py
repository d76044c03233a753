"""The writes of a sensor-day as DynamoDB's parameters, each condition from a named part
(``expressions.py``), every name and value a placeholder. A counter decides *what* to write to a
sensor-day (``counting/``): how much, on which step of update -> insert -> update, on what it rests.
This module spells it:

- ``update``: the ``UpdateItem`` that adds a tally (``tally.py``) to a day item, alone or as a
  transaction's action, resting on a guard (``guards.py``, ``import_writes.Imported``), on what is
  known of the day item's hours map (``HoursMap``: added to, or created on condition that it is still
  absent, for a day item written before hours were kept) and of its readings' statistics
  (``ReadingsView``);
- ``create``: the ``PutItem`` of a new day item, whole, on condition that it does not exist;
- ``page_update``: an identity page of the compact ledger; ``marker``: a per-message marker.

Every write asks for the item as it was when refused (``ReturnValuesOnConditionCheckFailure=ALL_OLD``),
so a counter never retries blind: ``day_view.view_of`` reads it. The history import's writes are
``import_writes.py``'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from sensor_digest.errors import RefusedWrite
from sensor_digest.store import expressions, repairs, schema
from sensor_digest.store.day_view import DayKey, HoursMap, ReadingsView
from sensor_digest.store.expressions import (
    HOURS_MAP_ABSENT,
    HOURS_MAP_THERE,
    IDS_FIT,
    READINGS_ABSENT,
    READINGS_THERE,
    Params,
    Parts,
    ids_new,
)
from sensor_digest.store.guards import Guard, imports_as_read
from sensor_digest.store.identities import PAGE_IDS
from sensor_digest.store.tally import COUNTED, STATISTICS, HourStats, Merge, Tally, hour_value, name_map, number


def update(
    table: str,
    day: DayKey,
    tally: Tally,
    hours: HoursMap,
    guard: Guard,
    *,
    readings: ReadingsView | None = None,
    imports: int | None = None,
) -> Params:
    """The ``UpdateItem`` that adds ``tally`` to ``day``'s item, resting on ``guard``, on what is known
    of its readings' statistics (``readings``) and, for live reports that name an ``event_id``, on the
    day's imported rows being those seen (``imports``: its ``ImportSeq`` as read, 0: none; ``None``: no
    such report). ``RefusedWrite`` (with the repair) for readings to add to a map not as this project
    writes it: no such write could meet its conditions."""
    if tally.readings and readings is not None and readings.broken is not None:
        repair = repairs.day_item(*day, readings.broken_by)
        raise RefusedWrite(readings.broken, repair=repair, attribute=schema.READINGS)
    parts = Parts(
        names={"#count": schema.DATA_COUNT, "#cover": schema.READINGS_COVER},
        values={":n": {"N": str(tally.count)}},
        adds=["#count :n", "#cover :n"],
    )
    guard.apply(parts, tally)
    if imports is not None:
        imports_as_read(parts, imports)
    _hours(parts, hours, tally)
    _readings(parts, tally, readings or ReadingsView())
    params: Params = {
        "TableName": table,
        "Key": schema.day_key(*day),
        "UpdateExpression": parts.expression(),
        "ExpressionAttributeNames": parts.names,
        "ExpressionAttributeValues": parts.values,
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    if parts.conditions:
        params["ConditionExpression"] = " AND ".join(parts.conditions)
    return params


def _hours(parts: Parts, hours: HoursMap, tally: Tally) -> None:
    parts.names["#hours"] = schema.HOUR_COUNTS
    parts.values[":mtype"] = {"S": "M"}
    if hours is HoursMap.CREATE:
        parts.values[":hmap"] = Tally(hours=tally.hours).item()[schema.HOUR_COUNTS]
        parts.sets.append("#hours = :hmap")
        parts.conditions.append(HOURS_MAP_ABSENT)
        return
    for hour, n in sorted(tally.hours.items()):
        parts.names[f"#h{hour}"], parts.values[f":h{hour}"] = hour, {"N": str(n)}
        parts.adds.append(f"#hours.#h{hour} :h{hour}")
    parts.conditions.append(HOURS_MAP_THERE)


def _readings(parts: Parts, tally: Tally, seen: ReadingsView) -> None:
    """The readings' part of an update, by what ``seen`` knows of the item. Their map, or a name's,
    not there: created whole, on condition that it still is not. Each hour of a name that is there:
    not there, set (its value, or its list) on condition that it still is not; one value ``v`` there,
    replaced by the list of it and the tally's, on condition that it is still ``v``; a list there, its
    count and sum added, and its minimum (maximum) set only where the tally's could be below (above)
    the stored one, on condition that it is (they only move outwards: where ``seen`` knows one at or
    beyond the tally's, nothing is written or checked). The day's sum of squares is added. A refusal
    returns the item, and ``seen`` is read again from it."""
    if not tally.readings:
        return
    names, values = parts.names, parts.values
    names["#R"], names["#rr"] = schema.READINGS, schema.READINGS_REPAIRS
    values[":mtype"] = {"S": "M"}
    if seen.repairs is not None:  # what is known of the statistics is from since the last repair by hand
        values[":rr"] = {"N": str(seen.repairs)}
        parts.conditions.append("#rr = :rr")
    else:
        parts.conditions.append("attribute_not_exists(#rr)")
    if seen.there is False:
        values[":R"] = {"M": {name: name_map(r) for name, r in tally.readings.items()}}
        parts.sets.append("#R = :R")
        parts.conditions.append(READINGS_ABSENT)
        return
    parts.conditions.append(READINGS_THERE)
    for i, (name, reading) in enumerate(tally.readings.items()):
        path = f"#R.#a{i}"
        names[f"#a{i}"] = name
        if name not in seen.names:
            values[f":a{i}"] = name_map(reading)
            parts.sets.append(f"{path} = :a{i}")
            parts.conditions.append(f"attribute_not_exists({path})")
            continue
        names["#rq"] = schema.READING_SQUARES
        values[f":a{i}q"] = number(reading.squares)
        parts.adds.append(f"{path}.#rq :a{i}q")
        parts.conditions.append(f"attribute_type({path}, :mtype)")
        for hour, stats in reading.hours.items():
            names[f"#h{hour}"] = hour
            _hour(parts, f"{path}.#h{hour}", f":a{i}h{hour}", seen.hours.get((name, hour)), stats)


def _hour(parts: Parts, path: str, value: str, seen: HourStats | None, stats: HourStats) -> None:
    """One (name, hour)'s part of ``_readings``; the elements of a list there by their ``Merge``."""
    values = parts.values
    if seen is None:
        values[value] = hour_value(stats)
        parts.sets.append(f"{path} = {value}")
        parts.conditions.append(f"attribute_not_exists({path})")
        return
    if seen.count == 1:
        values[value], values[f"{value}v"] = hour_value(seen.merged(stats)), number(seen.total)
        parts.sets.append(f"{path} = {value}")
        parts.conditions.append(f"{path} = {value}v")
        return
    values[":lsize"] = {"N": str(1 + len(STATISTICS))}  # a list cut by hand would take the adds to its first elements
    parts.conditions.append(f"size({path}) = :lsize")
    for statistic in (COUNTED, *STATISTICS):
        at, mine = f"{path}[{statistic.position}]", f"{value}{_SUFFIXES[statistic.position]}"
        own, stored = getattr(stats, statistic.name), getattr(seen, statistic.name)
        if statistic.merge is Merge.SUM:
            values[mine] = number(own)
            parts.sets.append(f"{at} = {at} + {mine}")
            continue
        if statistic.merge.of(own, stored) == stored:  # the tally's lies within what is known: nothing to do
            continue
        values[mine] = number(own)
        parts.sets.append(f"{at} = {mine}")
        parts.conditions.append(f"{at} {'>' if statistic.merge is Merge.LEAST else '<'} {mine}")


_SUFFIXES = "nslxabcdefghijk"
"""The placeholder of a list's element by its position: ``n`` the count, ``s`` the sum, ``l`` the
minimum, ``x`` the maximum, then letters for statistics declared after them."""


def create(
    table: str,
    day: DayKey,
    tally: Tally,
    *,
    ids: Sequence[bytes] | None = None,
    sequence: tuple[str, int] | None = None,
) -> Params:
    """The ``PutItem`` of ``day``'s new item, whole (its tally), on condition that it does not exist:
    a compact day with ``ids`` (page 0's identities: ``IdPage`` 0, ``HashedCount`` its count), a day
    of ordered mode with ``sequence`` (its queue and the last number applied)."""
    item: schema.Item = {**schema.day_key(*day), **tally.item()}
    if ids is not None:
        item[schema.ID_PAGE] = {"N": "0"}
        item[schema.IDS] = {"BS": list(ids)}
        item[schema.HASHED_COUNT] = {"N": str(tally.count)}
    if sequence is not None:
        source, last = sequence
        item[schema.applied_sequence_name(source)] = {"S": schema.sequence_text(last)}
    params = expressions.put_if_absent(table, item)
    params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return params


def page_update(
    ledger: str, day: DayKey, page: int, *, expires_at: int, checked: Sequence[bytes], added: Sequence[bytes]
) -> Params:
    """Identity page ``page`` of ``day`` (``IDS#<sensor>#<day>#<page>``) gains ``added``: on condition
    that none of ``checked`` is there and that ``added`` fits; its lifetime starts again."""
    values: Params = {
        ":added": {"BS": list(added)},
        ":room": {"N": str(PAGE_IDS - len(added))},
        ":expires": {"N": str(expires_at)},
    }
    return {
        "TableName": ledger,
        "Key": schema.id_page_key(*day, page),
        "UpdateExpression": "ADD #ids :added SET #expires = :expires",
        "ConditionExpression": " AND ".join([*ids_new(checked, values), IDS_FIT]),
        "ExpressionAttributeNames": {"#ids": schema.IDS, "#expires": schema.EXPIRES_AT},
        "ExpressionAttributeValues": values,
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }


def marker(ledger: str, key: str, *, day: str, count: int, expires_at: int, if_absent: bool = True) -> Params:
    """The ``PutItem`` of a marker (``MSG#...``: on condition that it does not exist, so that a report
    counted before is refused; ``FIFO#...``: unconditional, a marker written twice is one)."""
    item = {
        **schema.ledger_key(key),
        schema.EXPIRES_AT: {"N": str(expires_at)},
        schema.MARKER_DAY: {"S": day},
        schema.MARKER_COUNT: {"N": str(count)},
    }
    if if_absent:
        return expressions.put_if_absent(ledger, item, schema.LEDGER_KEY)
    return {"TableName": ledger, "Item": item}
