"""The demo's readings (``local/traffic.py``, ``local/readings_check.py``), without an engine: the truth
the traffic keeps is what its bodies carry, read exactly; the quiet sensor's move keeps each body's
readings as written; and the check names every way an answer can differ from the truth."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from sensor_digest.messages import read_pending
from sensor_digest_tools.local.quiet import QUIET_SENSOR, fall_silent
from sensor_digest_tools.local.readings_check import ReadBack, differences
from sensor_digest_tools.local.traffic import DEMO_READINGS, ReadingTruth, Traffic, generate, report_body


def traffic() -> Any:
    return generate(messages=400, sensors=4, days=2, poison_rate=0.05, seed=11, readings=DEMO_READINGS)


def test_the_truth_of_the_readings_is_what_the_bodies_carry_read_exactly() -> None:
    sent = traffic()
    recomputed: dict[tuple[int, str, str], ReadingTruth] = {}
    for i, body in enumerate(sent.bodies):
        if i in sent.poison:
            continue
        report = json.loads(body, parse_float=Decimal)
        read_pending(message_id=f"m-{i}", body=body, sent_timestamp="0")  # the ingest takes it as it is
        for name, value in report["readings"].items():
            recomputed.setdefault((report["sensor_id"], report["timestamp"][:10], name), ReadingTruth()).add(value)

    assert recomputed == sent.readings
    names = {name for _, _, name in sent.readings}
    assert names == {"temperature", "humidity"}
    # humidity is in about half the reports: a name a report may lack
    assert 0 < sum(t.count for (_, _, n), t in sent.readings.items() if n == "humidity") < len(sent.bodies) * 0.7


def test_the_quiet_sensors_move_keeps_every_body_s_readings_as_written() -> None:
    # Given the quiet sensor's afternoon report on the last day, its readings written as a producer wrote them
    body = report_body(
        QUIET_SENSOR, "2024-05-02", 1, "q-1", 15 * 3600, [("t", Decimal("21.50")), ("v", Decimal("1E+1"))]
    )
    sent = Traffic(bodies=[body], poison=set())
    sent.truth[(QUIET_SENSOR, "2024-05-02")] += 1

    fall_silent(sent)

    # Then it moved into the morning, and its readings are the same text (a float would write 21.5 and 10.0)
    [moved] = sent.bodies
    assert '"timestamp": "2024-05-02T03:00:00Z"' in moved
    assert moved.endswith('"readings": {"t": 21.50, "v": 10}}')
    assert moved.partition('"readings"')[2] == body.partition('"readings"')[2]


def answered(truth: dict[tuple[int, str, str], ReadingTruth]) -> ReadBack:
    """What a read API that answers the truth exactly would answer."""
    return ReadBack(
        {
            key: {
                "count": t.count,
                "sum": t.total,
                "min": t.low,
                "max": t.high,
                "mean": float(t.mean),
                "stddev": float(t.stddev),
            }
            for key, t in truth.items()
        }
    )


def test_an_answer_equal_to_the_truth_has_no_differences_and_every_other_is_named() -> None:
    truth = traffic().readings
    key = sorted(truth)[0]
    sensor, day, name = key
    assert differences(truth, answered(truth)) == []

    wrong_sum = answered(truth)
    wrong_sum.statistics[key]["sum"] += Decimal("0.1")
    off_mean = answered(truth)
    off_mean.statistics[key]["mean"] *= 1 + 1e-9
    missing = answered(truth)
    del missing.statistics[key]
    extra = answered(truth)
    extra.statistics[(sensor, day, "pressure")] = extra.statistics[key]
    partial = answered(truth)
    partial.partial.append((sensor, day))

    where = f"sensor {sensor}, {day}, {name}"
    total = truth[key].total
    assert differences(truth, wrong_sum) == [f"{where}: sum {total + Decimal('0.1')}, the truth {total}"]
    [off] = differences(truth, off_mean)  # a mean 1e-9 off (the contract allows 1e-12)
    assert off.startswith(f"{where}: mean ") and f", the truth {truth[key].mean:.17g}" in off
    assert differences(truth, missing) == [f"{where}: sent, not answered"]
    assert differences(truth, extra) == [f"sensor {sensor}, {day}, pressure: not sent, yet answered"]
    assert differences(truth, partial) == [f"sensor {sensor}, {day}: partial statistics"]


@pytest.mark.parametrize("what", ["count", "sum", "min", "max"])
@pytest.mark.parametrize("by", [1, -1])
def test_an_exact_statistic_off_by_one_is_named_as_a_difference(what: str, by: int) -> None:
    truth = traffic().readings
    key = sorted(truth)[-1]
    off = answered(truth)
    off.statistics[key][what] += by

    [difference] = differences(truth, off)

    sensor, day, name = key
    assert difference.startswith(f"sensor {sensor}, {day}, {name}: {what} {off.statistics[key][what]}, the truth ")


def test_a_standard_deviation_off_by_more_than_the_contract_allows_is_named() -> None:
    truth = traffic().readings
    key = next(k for k, t in sorted(truth.items()) if t.stddev > 0)
    within, beyond = answered(truth), answered(truth)
    within.statistics[key]["stddev"] = float(truth[key].stddev * (1 + Decimal("1e-14")))
    beyond.statistics[key]["stddev"] = float(truth[key].stddev * (1 + Decimal("1e-10")))

    assert differences(truth, within) == []
    [difference] = differences(truth, beyond)
    assert ": stddev " in difference
