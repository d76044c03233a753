"""Readings' statistics as the read API answers them, from what a day item keeps (``schema.readings_of_item``).

A day item keeps, per reading name, each hour's count, sum, minimum and maximum, and the day's sum of
squares (``store/tally.py``). The day's count, sum, minimum and maximum are its hours', added up
exactly; its mean is ``sum / count`` and its population standard deviation
``sqrt(count * squares - sum^2) / count``, both computed in decimal to 100 digits and answered as
JSON numbers (exact to within 1e-15 relative, the contract's 1e-12 with room). An hour answers its
count, sum, minimum, maximum and mean (no standard deviation: the day item keeps no sum of squares per
hour, docs/readings.md says why).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Context, Decimal, localcontext
from typing import Any

from sensor_digest.store import schema

PRECISE = Context(prec=100)
"""Enough that count * squares - sum^2 is exact (38-digit sums, counts of 20 digits): no cancellation."""


def day_statistics(kept: Mapping[str, schema.KeptReading]) -> dict[str, dict[str, Any]]:
    """Per reading name, the day's ``count``, ``sum``, ``min``, ``max``, ``mean`` and ``stddev``."""
    answer: dict[str, dict[str, Any]] = {}
    with localcontext(PRECISE):
        for name, reading in kept.items():
            hours = reading.hours.values()
            count = sum(n for n, _, _, _ in hours)
            total = sum((s for _, s, _, _ in hours), Decimal(0))
            variance = max(Decimal(0), count * reading.squares - total * total) / (count * count)
            answer[name] = {
                "count": count,
                "sum": total.normalize(),
                "min": min(low for _, _, low, _ in hours).normalize(),
                "max": max(high for _, _, _, high in hours).normalize(),
                "mean": float(total / count),
                "stddev": float(variance.sqrt()),
            }
    return answer


def hour_statistics(kept: Mapping[str, schema.KeptReading]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per hour (``HH``) with values, per reading name: ``count``, ``sum``, ``min``, ``max``, ``mean``."""
    answer: dict[str, dict[str, dict[str, Any]]] = {}
    with localcontext(PRECISE):
        for name, reading in kept.items():
            for hour, (count, total, low, high) in reading.hours.items():
                answer.setdefault(hour, {})[name] = {
                    "count": count,
                    "sum": total.normalize(),
                    "min": low.normalize(),
                    "max": high.normalize(),
                    "mean": float(total / count),
                }
    return dict(sorted(answer.items()))


def complete(item: Mapping[str, Any]) -> bool:
    """Whether a day item's statistics hold all of its reports: every report of it was counted by a
    writer that keeps readings (``ReadingsCover`` equals ``DataCount``)."""
    count, cover = item.get(schema.DATA_COUNT), item.get(schema.READINGS_COVER)
    return isinstance(count, Mapping) and isinstance(cover, Mapping) and count.get("N") == cover.get("N")
