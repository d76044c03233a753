"""``HourCounts``: the day's counts per hour, written in the same write as ``DataCount``.

Every counter's write of a day item carries the hours of the messages it counts, so hours cost no
request and no write unit of their own (a full day of 24 hours is about 170 bytes: the item stays
under 1 KB beside 40 identities):

- a day item put new (``PutItem``) holds ``HourCounts`` whole: ``{"HH": n, ...}``; an empty day
  item (its key alone, for an update to fill) holds an empty map, so that the update can add;
- an update of a day item that has the map adds to its elements in the same ``ADD`` as the count:
  ``ADD DataCount :n, HourCounts.#h0 :h0, ...``, on condition that the map is there
  (``attribute_type(HourCounts, M)``: ``ADD`` of an element fails when the map is missing);
- a day item written before hours were kept has no map. Its refusal (``ALL_OLD``) shows it; the
  write is made again with the map created in it (``SET HourCounts = :hours``) on condition that
  it is still missing, the count added as before: the map upsert's missing-map step
  (``summary/map_upsert.py``), never a rewrite of the item. When another writer created the map in
  between, that write is refused in turn and made again adding to the elements.

So a day item created with hours holds hours that sum to ``DataCount``; one from before holds the
hours of the reports counted since the upgrade. ``HoursWrite`` holds what a write knows of the map
(``missing``) and spells its part of the expressions; the counters add it to their own.

A refused write costs what it would have written (a refused transaction of a day begun under
markers, every item of it), so a counter remembers the day items its reads before the writes found
without a map (``HourlessDays``): their first write creates the map at once, no refusal spent. The
reads cost nothing more for it (a read is charged by the item's size, whatever it returns).
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sensor_digest.messages import SensorMessage
from sensor_digest.store import schema

HOURS = tuple(f"{hour:02d}" for hour in range(24))
"""The keys of ``HourCounts``: the wall-clock hours of the sensor's day."""


def hours_of(messages: Iterable[SensorMessage]) -> dict[str, int]:
    """The messages' counts by hour of their day (``HH`` -> count)."""
    counts: Counter[str] = Counter()
    for message in messages:
        counts[message.hour] += message.count
    return dict(sorted(counts.items()))


def has_hours(item: Mapping[str, Any]) -> bool:
    """Whether a day item (as a refusal returned it) holds an ``HourCounts`` map."""
    stored = item.get(schema.HOUR_COUNTS)
    return isinstance(stored, Mapping) and "M" in stored


HOURLESS_KEPT = 100_000  # day items remembered per container as without a map (a few MB at most)


class HourlessDays:
    """Sensor-days whose day item a read found without ``HourCounts`` (written before hours were
    kept), least recently noted forgotten past ``limit``; shared by the threads of a container."""

    def __init__(self, limit: int = HOURLESS_KEPT) -> None:
        self._days: OrderedDict[tuple[int, str], None] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def note(self, day: tuple[int, str], item: Mapping[str, Any]) -> None:
        """What a read of ``day``'s item showed (an empty item, none: nothing to note)."""
        with self._lock:
            if item and not has_hours(item):
                self._days[day] = None
                self._days.move_to_end(day)
                while len(self._days) > self._limit:
                    self._days.popitem(last=False)
            else:
                self._days.pop(day, None)

    def written(self, day: tuple[int, str]) -> None:
        """``day``'s item has its map now."""
        with self._lock:
            self._days.pop(day, None)

    def __contains__(self, day: object) -> bool:
        with self._lock:
            return day in self._days


@dataclass
class HoursWrite:
    """One write's part of a day item's ``HourCounts``. ``missing``: the day item is known to have
    no map (its last refusal showed none), so the write creates it; otherwise it adds to it."""

    missing: bool = False

    def saw(self, item: Mapping[str, Any]) -> None:
        """A refusal returned the day item as it was (``{}``: none): whether it has the map."""
        self.missing = bool(item) and not has_hours(item)

    def put_value(self, hours: Mapping[str, int]) -> dict[str, Any]:
        """The map of a day item put new (``{}`` for an empty item)."""
        return schema.hour_counts_value(hours)

    def parts(
        self, hours: Mapping[str, int], names: dict[str, str], values: dict[str, Any]
    ) -> tuple[list[str], list[str], str]:
        """``(adds, sets, condition)`` for an update adding ``hours``; ``names`` and ``values`` gain
        their placeholders (``#hours``, ``#hNN``, ``:hNN``, ``:hmap``, ``:mtype``)."""
        names["#hours"] = schema.HOUR_COUNTS
        values[":mtype"] = {"S": "M"}
        if self.missing:  # none, or one that is no map (a hand-made value holds no count)
            values[":hmap"] = self.put_value(hours)
            return [], ["#hours = :hmap"], "(attribute_not_exists(#hours) OR NOT attribute_type(#hours, :mtype))"
        adds = []
        for hour, n in sorted(hours.items()):
            names[f"#h{hour}"], values[f":h{hour}"] = hour, {"N": str(n)}
            adds.append(f"#hours.#h{hour} :h{hour}")
        return adds, [], "attribute_type(#hours, :mtype)"


def with_hours(params: dict[str, Any], hours: HoursWrite, counts: Mapping[str, int]) -> dict[str, Any]:
    """``params`` (an ``expressions.add_count`` update) adding ``counts`` to the day item's
    ``HourCounts`` in the same write (the map added to, or created when the item has none); a
    refusal returns the item as it was (``ALL_OLD``), for the write to tell which."""
    names, values = params["ExpressionAttributeNames"], params["ExpressionAttributeValues"]
    adds, sets, condition = hours.parts(counts, names, values)
    params["UpdateExpression"] = update_expression(["#count :n", *adds], sets)
    existing = params.get("ConditionExpression")
    params["ConditionExpression"] = f"{existing} AND {condition}" if existing else condition
    params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return params


def update_expression(adds: list[str], sets: list[str]) -> str:
    """``ADD ... SET ...`` from its parts (either may be empty, not both)."""
    clauses = []
    if adds:
        clauses.append("ADD " + ", ".join(adds))
    if sets:
        clauses.append("SET " + ", ".join(sets))
    return " ".join(clauses)
