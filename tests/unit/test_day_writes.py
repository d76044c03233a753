"""store/day_writes.py without an engine: the expressions it builds, and that ``fits`` bounds them
within DynamoDB's limits (4 KB an expression, 300 operators) however little is known of the day
item. Engine: none (DynamoDB Local takes the largest such write in
tests/dynamodb_local/store/test_day_writes_readings.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from sensor_digest.store import day_writes, expressions
from sensor_digest.store.day_view import NOT_THERE, UNSEEN, HoursMap, ReadingsView
from sensor_digest.store.guards import Anyway, Compact, Exists
from sensor_digest.store.identities import identity_hash
from sensor_digest.store.tally import HourStats, Tally

OPERATORS = re.compile(
    r"\b(attribute_exists|attribute_not_exists|attribute_type|begins_with|contains|size|AND|OR|NOT|BETWEEN|IN)\b"
    r"|<>|<=|>=|=|<|>|\+|-"
)


@dataclass(frozen=True)
class Report:
    count: int
    hour: str
    readings: tuple[tuple[str, Decimal], ...]


def operators(expression: str) -> int:
    return len(OPERATORS.findall(expression.replace("#", " #").replace(":", " :")))


REPORTS = st.lists(
    st.builds(
        Report,
        count=st.integers(1, 1_000_000),
        hour=st.sampled_from([f"{h:02d}" for h in range(24)]),
        readings=st.lists(
            st.tuples(
                st.sampled_from([f"reading_{k}" + "x" * 20 for k in range(8)]),
                st.decimals(min_value=Decimal("-999999999.999999"), max_value=Decimal("999999999.999999"), places=6),
            ),
            max_size=8,
            unique_by=lambda r: r[0],
        ).map(lambda rs: tuple(sorted(rs))),
    ),
    min_size=1,
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(reports=REPORTS, ids=st.integers(0, 72))
@example(  # found by CI: 72 identities (3 operators each) and 5 names in 2 hours made 302 operators
    reports=[Report(1, h, tuple((f"reading_{k}" + "x" * 20, Decimal(0)) for k in range(5))) for h in ("00", "01")],
    ids=72,
)
def test_a_write_that_fits_stays_inside_dynamodbs_limits_knowing_nothing_of_the_item(
    reports: list[Report], ids: int
) -> None:
    tally = Tally.of(reports)
    if not expressions.fits(tally, ids):
        return
    # the most a write of it can say: every name's map there, every hour holding several values
    # whose bounds the tally's pass (both set, both checked), every identity checked, the largest
    # sensor id
    wide = HourStats(2, Decimal(0), Decimal("1E+10"), Decimal("-1E+10"))
    pairs = {(name, hour): wide for name, r in tally.readings.items() for hour in r.hours}
    unknown = ReadingsView(there=True, names=frozenset(tally.readings), hours=pairs)
    checked = [identity_hash(f"e{i}") for i in range(ids)]
    params = day_writes.update(
        "SensorDigest",
        (2**53 - 1, "2024-05-01"),
        tally,
        HoursMap.ADD,
        Compact(UNSEEN, checked, checked[:40]),
        readings=unknown,
    )
    update, condition = params["UpdateExpression"], params.get("ConditionExpression", "")
    assert len(update.encode()) <= 4096 and len(condition.encode()) <= 4096
    assert operators(update) <= 300 and operators(condition) <= 300


def test_the_readings_part_writes_each_hour_by_what_is_known_of_it() -> None:
    tally = Tally.of(
        [
            Report(1, "09", (("t", Decimal("20")),)),
            Report(1, "10", (("t", Decimal("30")),)),
            Report(1, "11", (("t", Decimal("7")),)),
            Report(1, "12", (("t", Decimal("8")),)),
        ]
    )
    known = ReadingsView(
        there=True,
        names=frozenset({"t"}),
        hours={
            ("t", "09"): HourStats(2, Decimal(44), Decimal(19), Decimal(25)),  # several values: 20 lies within them
            ("t", "10"): HourStats(
                2, Decimal(60), Decimal(31), Decimal(29)
            ),  # 30 below the known minimum, above the maximum
            ("t", "11"): HourStats.one(Decimal(6)),  # one value: the hour becomes a list of two
        },
    )
    params: dict[str, Any] = day_writes.update("T", (1, "2024-05-01"), tally, HoursMap.ADD, Anyway(), readings=known)
    update, condition = params["UpdateExpression"], params["ConditionExpression"]
    values = params["ExpressionAttributeValues"]
    # hour 09: count and sum added, no bound written or checked
    assert "#R.#a0.#h09[0] = #R.#a0.#h09[0] + :a0h09n" in update and "#R.#a0.#h09[2]" not in update
    # hour 10: both bounds set, each on condition that the stored one is still beyond the value
    assert "#R.#a0.#h10[2] = :a0h10l" in update and "#R.#a0.#h10[2] > :a0h10l" in condition
    assert "#R.#a0.#h10[3] = :a0h10x" in update and "#R.#a0.#h10[3] < :a0h10x" in condition
    # hour 11: one value there, replaced by the list of both, on condition it is still that value
    assert values[":a0h11"] == {"L": [{"N": "2"}, {"N": "13"}, {"N": "6"}, {"N": "7"}]}
    assert "#R.#a0.#h11 = :a0h11v" in condition
    # hour 12: not there, set to its one value on condition that it still is not
    assert values[":a0h12"] == {"N": "8"} and "attribute_not_exists(#R.#a0.#h12)" in condition


def test_readings_absent_from_the_item_are_created_whole_on_condition_that_they_still_are() -> None:
    tally = Tally.of([Report(2, "09", (("t", Decimal("21.5")), ("u", Decimal("-1"))))])
    params = day_writes.update("T", (1, "2024-05-01"), tally, HoursMap.ADD, Exists(), readings=NOT_THERE)
    assert "#R = :R" in params["UpdateExpression"]
    assert "attribute_not_exists(#R)" in params["ConditionExpression"]
    stored = params["ExpressionAttributeValues"][":R"]["M"]
    assert stored["t"]["M"]["09"] == {"N": "21.5"} and stored["u"]["M"]["q"] == {"N": "1"}


def test_a_tally_sums_exactly_beyond_python_s_default_precision() -> None:
    big = Decimal("999999999.999999")
    tally = Tally.of([Report(1, "09", (("t", big),))] * 3)
    reading = tally.readings["t"]
    assert reading.hours["09"].total == big * 3
    assert reading.squares == Decimal("2999999999999994000.000000000003")  # 31 digits: more than 28
