"""store/tally.py's statistics of readings as a day item keeps them, without an engine: what a tally
stores reads back as the same statistics; a map written by hand that no ingest could have written
(an hour key that is no hour, a mean outside its hour's minimum and maximum, a sum of squares below
what the values allow) is refused, named, never answered."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, localcontext
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sensor_digest.errors import MalformedItem
from sensor_digest.store import schema, tally
from sensor_digest.store.tally import HourStats


def item(stats: dict[str, Any]) -> dict[str, Any]:
    return {
        **schema.day_key(7, "2024-05-01"),
        schema.DATA_COUNT: {"N": "3"},
        schema.READINGS: {"M": {"t": {"M": stats}}},
    }


def hour(n: str, s: str, low: str, high: str) -> dict[str, Any]:
    return {"L": [{"N": n}, {"N": s}, {"N": low}, {"N": high}]}


@dataclass(frozen=True)
class Report:
    count: int
    hour: str
    readings: tuple[tuple[str, Decimal], ...]


VALUES = st.decimals(min_value=Decimal("-999999999.999999"), max_value=Decimal("999999999.999999"), places=6)
REPORTS = st.lists(
    st.builds(
        Report,
        count=st.just(1),
        hour=st.sampled_from(["00", "09", "23"]),
        readings=st.lists(st.tuples(st.sampled_from(["t", "u"]), VALUES), max_size=2, unique_by=lambda r: r[0]).map(
            tuple
        ),
    ),
    min_size=1,
    max_size=30,
)


@given(reports=REPORTS)
def test_what_a_tally_stores_reads_back_as_its_statistics_and_the_days_are_its_values(reports: list[Report]) -> None:
    added = tally.Tally.of(reports)
    kept = tally.readings_of_item({**schema.day_key(7, "2024-05-01"), **added.item()})
    assert kept == dict(added.readings)
    for name, reading in kept.items():
        values = [v for r in reports for n, v in r.readings if n == name]
        with localcontext(tally.EXACT):
            expected = (len(values), sum(values, Decimal(0)), min(values), max(values))
            squares = sum((v * v for v in values), Decimal(0))
        assert (reading.day().count, *reading.day().values()) == expected and reading.squares == squares


def test_statistics_as_ingest_writes_them_are_read() -> None:
    # 20 and 22 in hour 09, 21 in hour 10: sum of squares 400 + 484 + 441
    kept = tally.readings_of_item(item({"q": {"N": "1325"}, "09": hour("2", "42", "20", "22"), "10": {"N": "21"}}))
    assert kept["t"].hours == {
        "09": HourStats(2, Decimal(42), Decimal(20), Decimal(22)),
        "10": HourStats(1, Decimal(21), Decimal(21), Decimal(21)),
    }


@pytest.mark.parametrize(
    ("stats", "why"),
    [
        ({"q": {"N": "441"}, "24": {"N": "21"}}, "key '24' is no hour 00-23"),
        ({"q": {"N": "441"}, "9": {"N": "21"}}, "key '9' is no hour 00-23"),
        ({"q": {"N": "441"}, "x": {"N": "21"}}, "key 'x' is no hour 00-23"),
        ({"q": {"N": "5000"}, "09": hour("2", "100", "20", "22")}, "hour '09' holds no statistics"),
        ({"q": {"N": "5000"}, "09": hour("2", "30", "20", "22")}, "hour '09' holds no statistics"),
        ({"q": {"N": "-1"}, "09": {"N": "21"}}, "its sum of squares is not one its values allow"),
        ({"q": {"N": "881"}, "09": hour("2", "42", "20", "22")}, "its sum of squares is not one its values allow"),
        ({"q": {"N": "26"}, "09": {"N": "5"}}, "its sum of squares is not one its values allow"),
        ({"q": {"N": "1E+100"}, "09": hour("2", "10", "4", "6")}, "its sum of squares is not one its values allow"),
        ({"q": {"N": "0"}}, "'t' holds no hour"),
    ],
)
def test_statistics_no_ingest_could_write_are_refused_and_named(stats: dict[str, Any], why: str) -> None:
    with pytest.raises(MalformedItem) as refused:
        tally.readings_of_item(item(stats))
    assert why in str(refused.value) and refused.value.attribute == schema.READINGS


def test_a_cover_below_a_names_values_above_the_count_or_no_number_is_named_as_the_cover() -> None:
    stats = {"q": {"N": "1325"}, "09": hour("2", "42", "20", "22"), "10": {"N": "21"}}
    for cover in ({"N": "2"}, {"N": "4"}, {"S": "x"}, {"N": "-1"}):  # the day's DataCount is 3
        with pytest.raises(MalformedItem) as refused:
            tally.readings_of_item({**item(stats), schema.READINGS_COVER: cover})
        assert refused.value.attribute == schema.READINGS_COVER
    assert tally.readings_of_item({**item(stats), schema.READINGS_COVER: {"N": "3"}})["t"].squares == 1325


@given(
    values=st.lists(
        st.decimals(min_value=Decimal("-999999999.999999"), max_value=Decimal("999999999.999999"), places=6),
        min_size=1,
        max_size=50,
    )
)
def test_any_values_kept_exactly_pass_the_checks(values: list[Decimal]) -> None:
    # the statistics of any values within the readings' bounds, as DynamoDB adds them (exactly)
    with localcontext(tally.EXACT):
        n, s, q = len(values), sum(values, Decimal(0)), sum((v * v for v in values), Decimal(0))
    stats = {
        "q": {"N": str(q)},
        "09": hour(str(n), str(s), str(min(values)), str(max(values))) if n > 1 else {"N": str(s)},
    }
    assert tally.readings_of_item(item(stats))["t"].squares == q
