"""The demo's check of readings: each sensor's statistics read back through the read API's own service
(``GET /sensors/{id}/readings``, every page), set against the traffic's truth (``traffic.ReadingTruth``).

Count, sum, minimum and maximum must equal the truth exactly; mean and standard deviation be within
``RELATIVE`` of it (the contract's 1e-12); no day partial, and no statistic of a reading the traffic did
not send. Each difference is named in one line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sensor_digest.api.service import ApiService
from sensor_digest_tools.local.traffic import ReadingTruth, Traffic

RELATIVE = Decimal("1e-12")
SHOWN_DIFFERENCES = 5


@dataclass(frozen=True)
class ReadBack:
    """What the read API answered: each (sensor, day, name)'s statistics, and the partial days."""

    statistics: dict[tuple[int, str, str], dict[str, Any]] = field(default_factory=dict)
    partial: list[tuple[int, str]] = field(default_factory=list)


def read_back(client: Any, table: str, sensors: Iterable[int], first: str, last: str) -> ReadBack:
    """Every sensor's readings' statistics from ``first`` to ``last``, as the read API answers them."""
    service = ApiService(table_name=table, client=client)
    found = ReadBack()
    for sensor in sensors:
        token: str | None = None
        while True:
            page = service.readings(sensor, first, last, None, token)
            for day, by_name in page["days"].items():
                for name, statistics in by_name.items():
                    found.statistics[(sensor, day, name)] = statistics
            found.partial.extend((sensor, day) for day in page["partial_days"])
            token = page.get("next_token")
            if token is None:
                break
    return found


def differences(truth: Mapping[tuple[int, str, str], ReadingTruth], got: ReadBack) -> list[str]:
    """How what was read back differs from the truth, one line each (none: exact)."""
    lines = [f"sensor {sensor}, {day}: partial statistics" for sensor, day in got.partial]
    for key in sorted(set(truth) | set(got.statistics)):
        sensor, day, name = key
        where = f"sensor {sensor}, {day}, {name}"
        want, answer = truth.get(key), got.statistics.get(key)
        if want is None or answer is None:
            lines.append(f"{where}: {'not sent, yet answered' if want is None else 'sent, not answered'}")
            continue
        expected = {"count": want.count, "sum": want.total, "min": want.low, "max": want.high}
        for what, value in expected.items():
            if answer[what] != value:
                lines.append(f"{where}: {what} {answer[what]}, the truth {value}")
        for what, exact in (("mean", want.mean), ("stddev", want.stddev)):
            if abs(Decimal(answer[what]) - exact) > RELATIVE * abs(exact):
                lines.append(f"{where}: {what} {answer[what]}, the truth {exact:.17g}")
    return lines


def readings_differences(client: Any, table: str, traffic: Traffic) -> list[str]:
    """The demo's check: every sensor of the traffic read back over the traffic's days, against its truth."""
    days = sorted({day for _, day in traffic.truth})
    if not days:
        return []
    sensors = sorted({sensor for sensor, _ in traffic.truth})
    return differences(traffic.readings, read_back(client, table, sensors, days[0], days[-1]))
