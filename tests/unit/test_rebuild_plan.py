"""The exact rebuild's plan for one month item (no network): applied as the rebuild applies it, it
leaves exactly the day items, and its transaction checks every day it lowers or removes."""

from __future__ import annotations

import calendar
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sensor_digest_tools.ops.rebuild import exact_actions, plan_month

MONTH = "2024-02"
DAYS = [f"{MONTH}-{d:02d}" for d in range(1, calendar.monthrange(2024, 2)[1] + 1)]
OTHER_KEYS = ["2024-03-01", "2024-02-30", "2024-02-01\n", "SUMMARY", "x"]  # no day of this month
counts = st.integers(min_value=0, max_value=10**7)


def applied(held: dict[str, int], plan: Any) -> dict[str, int]:
    """``held`` after the plan: raises as the summary path's upsert (only up), then the transaction."""
    out = dict(held)
    for day, n in plan.raise_to.items():
        out[day] = max(out.get(day, -1), n)
    out.update(plan.lower_to)
    for key in plan.remove_days + plan.remove_other:
        del out[key]
    return out


@given(
    held=st.dictionaries(st.sampled_from(DAYS + OTHER_KEYS), counts),
    days=st.dictionaries(st.sampled_from(DAYS), counts),
)
def test_the_plan_leaves_exactly_the_day_items_and_checks_every_day_it_lowers_or_removes(
    held: dict[str, int], days: dict[str, int]
) -> None:
    plan = plan_month(MONTH, held, days)
    actions = exact_actions("T", 1, MONTH, plan)

    assert applied(held, plan) == days
    checked = {a["ConditionCheck"]["Key"]["Date"]["S"] for a in actions[1:]}
    assert checked == set(plan.lower_to) | set(plan.remove_days)
    assert len(actions) == 1 + len(checked) <= 32  # one Update, at most one check per day of the month
    assert set(plan.remove_other) == set(held) - set(DAYS)
    assert all(held.get(d, -1) < n for d, n in plan.raise_to.items())  # raises never lower anything
    assert plan.current + len(plan.raise_to) + len(plan.lower_to) == len(days)
