"""Readings' statistics as the read API answers them, from what a day item keeps
(``tally.readings_of_item``).

A day item keeps, per reading name, each hour's count and statistics (``tally.HourStats``: sum,
minimum, maximum), and the day's sum of squares. A day's are its hours', merged exactly; its mean is
``sum / count`` and its population standard deviation ``sqrt(count * squares - sum^2) / count``,
both computed in decimal to 100 digits and answered as JSON numbers (exact to within 1e-15
relative, the contract's 1e-12 with room). An hour answers its count, statistics and mean (no
standard deviation: the day item keeps no sum of squares per hour, docs/readings.md says why).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Context, Decimal, localcontext
from typing import Any

from sensor_digest.store import schema
from sensor_digest.store.tally import STATISTICS, HourStats, ReadingTally

PRECISE = Context(prec=100)
"""Enough that count * squares - sum^2 is exact (38-digit sums, counts of 20 digits): no cancellation."""


def day_statistics(kept: Mapping[str, ReadingTally]) -> dict[str, dict[str, Any]]:
    """Per reading name, the day's ``count``, each statistic (``sum``, ``min``, ``max``), ``mean`` and ``stddev``."""
    answer: dict[str, dict[str, Any]] = {}
    with localcontext(PRECISE):
        for name, reading in kept.items():
            day = reading.day()
            variance = max(Decimal(0), day.count * reading.squares - day.total * day.total) / (day.count * day.count)
            answer[name] = {**_answered(day), "stddev": float(variance.sqrt())}
    return answer


def hour_statistics(kept: Mapping[str, ReadingTally]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per hour (``HH``) with values, per reading name: ``count``, each statistic, ``mean``."""
    answer: dict[str, dict[str, dict[str, Any]]] = {}
    with localcontext(PRECISE):
        for name, reading in kept.items():
            for hour, stats in reading.hours.items():
                answer.setdefault(hour, {})[name] = _answered(stats)
    return dict(sorted(answer.items()))


def _answered(stats: HourStats) -> dict[str, Any]:
    """``count``, each statistic by its answer's name (``tally.STATISTICS``), exactly, and ``mean``."""
    named = {s.answer: getattr(stats, s.name).normalize() for s in STATISTICS}
    return {"count": stats.count, **named, "mean": float(stats.total / stats.count)}


def complete(item: Mapping[str, Any]) -> bool:
    """Whether a day item's statistics hold all of its reports: every report of it was counted by a
    writer that keeps readings (``ReadingsCover`` equals ``DataCount``)."""
    count, cover = item.get(schema.DATA_COUNT), item.get(schema.READINGS_COVER)
    return isinstance(count, Mapping) and isinstance(cover, Mapping) and count.get("N") == cover.get("N")
