"""Alarm rules at the boundary (``sensor_digest.alarms.rules``): each broken rule refused with one
line naming the rule and what is wrong, a rule set checked as a whole, the stored form read back
to equal rules, and which rules watch a sensor (its own override the fleet's). Engine: none."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sensor_digest.alarms.rules import MAX_RULES, AlarmRule, InvalidRule, RuleSet
from sensor_digest.alarms.store import RuleCache, _decode, rules_json
from sensor_digest.errors import TransientFault

HOT = {"name": "hot", "reading": "temperature", "sensors": "*", "condition": "above", "threshold": 30}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"name": "9lives"}, "a rule's name must be 1 to 64 characters"),
        ({"name": "x" * 65}, "a rule's name must be"),
        ({"reading": "temp-c"}, "rule hot: reading must be 1 to 32 characters"),
        ({"sensors": []}, 'rule hot: sensors must be "*" or a list of 1 to 100'),
        ({"sensors": [7, 7]}, "sensors lists a sensor twice"),
        ({"sensors": [True]}, "a sensor id must be a whole number"),
        ({"sensors": [2**53]}, "a sensor id must be a whole number from 0 to 9007199254740991"),
        ({"condition": "over"}, "condition must be one of above, below, outside"),
        ({"threshold": "30"}, "threshold must be a number"),
        ({"threshold": True}, "threshold must be a number"),
        ({"threshold": float("nan")}, "threshold must be a finite number"),
        ({"threshold": Decimal("1" * 39)}, "at most 38 significant digits"),
        ({"clear": 31}, "clear must be at or below the threshold 30, got 31"),
        ({"for_seconds": 60, "for_reports": 2}, "give for_seconds or for_reports, not both"),
        ({"for_seconds": -1}, "for_seconds must be a whole number from 0 to 604800"),
        ({"for_reports": 0}, "for_reports must be a whole number from 1 to 1000"),
        ({"severity": 6}, "severity must be a whole number from 1 to 5"),
        ({"latch": "yes"}, "latch must be true or false"),
        ({"band": [1, 2]}, "condition above takes threshold, not band"),
        ({"colour": "red"}, "unknown field 'colour'"),
    ],
)
def test_a_broken_rule_is_refused_in_one_line_naming_what_is_wrong(change: dict[str, Any], said: str) -> None:
    with pytest.raises(InvalidRule) as refused:
        AlarmRule.parse({**HOT, **change})
    assert said in refused.value.reason and "\n" not in refused.value.reason


def test_an_outside_band_needs_its_clear_band_within_it() -> None:
    band = {**HOT, "condition": "outside", "band": [10, 30]}
    del band["threshold"]
    assert AlarmRule.parse(band).clear == (Decimal(10), Decimal(30))
    with pytest.raises(InvalidRule, match=r"clear must lie within band \[10, 30\]"):
        AlarmRule.parse({**band, "clear": [9, 28]})
    with pytest.raises(InvalidRule, match="band must have low <= high"):
        AlarmRule.parse({**band, "band": [30, 10]})


def test_a_rule_set_refuses_a_name_given_twice_and_more_than_its_limit() -> None:
    with pytest.raises(InvalidRule, match="rule hot is given twice"):
        RuleSet.parse([HOT, {**HOT, "threshold": 40}])
    many = [{**HOT, "name": f"r{i}"} for i in range(MAX_RULES + 1)]
    with pytest.raises(InvalidRule, match=f"at most {MAX_RULES} rules"):
        RuleSet.parse({"rules": many})
    with pytest.raises(InvalidRule, match="a rule file holds a list of rules"):
        RuleSet.parse({"rule": [HOT]})


def test_a_sensors_own_rule_for_a_reading_overrides_the_fleets_for_that_reading_only() -> None:
    rules = RuleSet.parse(
        [
            HOT,
            {**HOT, "name": "hot7", "sensors": [7], "threshold": 40},
            {**HOT, "name": "damp", "reading": "humidity", "threshold": 90},
        ]
    )
    assert [r.name for r in rules.for_sensor(7)] == ["damp", "hot7"]
    assert [r.name for r in rules.for_sensor(8)] == ["damp", "hot"]


numbers = st.decimals(min_value=-(10**6), max_value=10**6, allow_nan=False, allow_infinity=False, places=4)


@given(threshold=numbers, gap=st.decimals(min_value=0, max_value=100, places=3), severity=st.integers(1, 5))
def test_the_stored_form_reads_back_to_an_equal_rule_set(threshold: Decimal, gap: Decimal, severity: int) -> None:
    rules = RuleSet.parse(
        [
            {**HOT, "threshold": threshold, "clear": threshold - gap, "severity": severity, "for_seconds": 60},
            {"name": "cold", "reading": "t", "sensors": [3, 1], "condition": "below", "threshold": threshold},
        ]
    )
    text = rules_json(rules)
    json.loads(text)  # plain JSON
    assert RuleSet.parse(_decode(text)) == rules


class Store:
    """A rule store whose version and rules the test sets, counting its reads."""

    def __init__(self) -> None:
        self.rules, self.fail, self.reads = RuleSet(), False, 0

    def version(self) -> int:
        self.reads += 1
        if self.fail:
            raise TransientFault("GetItem failed (retryable): ThrottlingException")
        return self.rules.version

    def load(self) -> RuleSet:
        self.reads += 1
        return self.rules


def test_a_container_reads_the_rules_version_once_a_minute_and_the_rules_when_it_moved() -> None:
    store, now = Store(), [0.0]
    store.rules = RuleSet.parse([HOT], version=1)
    cache = RuleCache(store, clock=lambda: now[0])  # type: ignore[arg-type]
    assert cache.rules().version == 1 and store.reads == 2  # the version, then the rules
    now[0] = 59.0
    assert cache.rules().version == 1 and store.reads == 2  # within the minute: no read
    now[0] = 61.0
    assert cache.rules().version == 1 and store.reads == 3  # the version alone: unchanged
    store.rules = RuleSet.parse([], version=2)
    now[0] = 122.0
    assert cache.rules().rules == () and store.reads == 5


def test_a_failed_refresh_keeps_the_rules_known_and_a_failed_first_read_is_raised() -> None:
    store, now = Store(), [0.0]
    store.rules = RuleSet.parse([HOT], version=1)
    cache = RuleCache(store, clock=lambda: now[0])  # type: ignore[arg-type]
    cache.rules()
    store.fail, now[0] = True, 61.0
    assert cache.rules().version == 1
    with pytest.raises(TransientFault):
        RuleCache(store).rules()  # type: ignore[arg-type]
