"""The alarm state model as pure decisions (``sensor_digest.alarms.model``): every transition of the
docs' diagram, hysteresis, durations and counts, latching, snoozing, operator actions, and the
properties that make evaluation exactly once: a report evaluated again moves nothing, batches can be
cut anywhere, arrival order within a batch does not matter. Engine: none."""

from __future__ import annotations

import itertools
from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sensor_digest.alarms.model import ActionRefused, Alarm, Report, State, act, evaluate, transition_id
from sensor_digest.alarms.rules import AlarmRule

MINUTE = 60_000_000
NOW = 1_900_000_000_000_000


def rule(**fields: Any) -> AlarmRule:
    raw = {"name": "hot", "reading": "temperature", "sensors": "*", "condition": "above", "threshold": 30}
    if "band" in fields:
        del raw["threshold"]
    return AlarmRule.parse({**raw, **fields})


def reports(*values: str | float, start: int = 0, origin: int = 0) -> list[Report]:
    return [Report(origin + (start + i) * MINUTE, Decimal(str(v)), f"e{start + i}") for i, v in enumerate(values)]


def run(r: AlarmRule, values: list[Report], alarm: Alarm | None = None) -> Alarm:
    return evaluate(alarm or Alarm.fresh(7, r), r, values, NOW)


def states(alarm: Alarm) -> list[tuple[str, str]]:
    return [(t.previous.value, t.state.value) for t in alarm.made]


def test_the_first_breaching_report_activates_and_a_value_at_the_clear_level_clears() -> None:
    after = run(rule(clear=28), reports(29, 31, 29, 28))
    assert states(after) == [("NORMAL", "ACTIVE"), ("ACTIVE", "NORMAL")]
    assert [t.value for t in after.made] == [Decimal(31), Decimal(28)]
    assert after.state is State.NORMAL


def test_a_value_between_the_clear_level_and_the_threshold_keeps_the_alarm_active() -> None:
    after = run(rule(clear=28), reports(31, 29.99, 28.01))
    assert states(after) == [("NORMAL", "ACTIVE")]


def test_flapping_around_the_threshold_without_hysteresis_makes_a_transition_per_crossing() -> None:
    after = run(rule(), reports(31, 30, 31, 30))
    assert len(after.made) == 4


def test_the_threshold_itself_does_not_breach() -> None:
    assert run(rule(), reports(30)).made == ()
    assert run(rule(condition="below", threshold=5), reports(5)).made == ()


def test_below_and_outside_breach_beyond_their_bounds() -> None:
    assert states(run(rule(condition="below", threshold=5, clear=6), reports(4.5, 5.5, 6))) == [
        ("NORMAL", "ACTIVE"),
        ("ACTIVE", "NORMAL"),
    ]
    outside = rule(condition="outside", band=[10, 30], clear=[12, 28])
    assert states(run(outside, reports(20, 9, 11, 12, 31, 28))) == [
        ("NORMAL", "ACTIVE"),
        ("ACTIVE", "NORMAL"),
        ("NORMAL", "ACTIVE"),
        ("ACTIVE", "NORMAL"),
    ]


def test_a_duration_counts_the_reports_own_time_and_a_break_restarts_it() -> None:
    r = rule(for_seconds=600)
    # breaching at minutes 0..9 is 9 minutes of breach: not yet; minute 10 makes it 10
    assert run(r, reports(*[31] * 10)).made == ()
    after = run(r, reports(*[31] * 11))
    assert states(after) == [("NORMAL", "ACTIVE")] and after.made[0].report_time == 10 * MINUTE
    broken = run(r, reports(*[31] * 5, 29, *[31] * 6))  # the breach restarts at minute 6
    assert broken.made == () and broken.pending_since == 6 * MINUTE


def test_a_count_needs_that_many_consecutive_breaching_reports() -> None:
    r = rule(for_reports=3)
    assert run(r, reports(31, 31, 29, 31, 31)).made == ()
    assert states(run(r, reports(31, 31, 29, 31, 31, 31))) == [("NORMAL", "ACTIVE")]


def test_a_latched_alarm_stays_until_acknowledged_then_is_normal() -> None:
    r = rule(latch=True, clear=28)
    after = run(r, reports(31, 27))
    assert states(after) == [("NORMAL", "ACTIVE"), ("ACTIVE", "LATCHED")]
    stored = replace(after, version=1, made=())
    acked = act(stored, "acknowledge", NOW + MINUTE, by="ops")
    assert acked.state is State.NORMAL and acked.made[0].by == "ops"
    again = run(r, reports(31, start=10), stored)  # latched, a new breach: active again
    assert states(again) == [("LATCHED", "ACTIVE")]


def test_an_acknowledged_alarm_is_normal_once_the_value_clears() -> None:
    r = rule(clear=28)
    active = replace(run(r, reports(31)), version=1, made=())
    acked = replace(act(active, "acknowledge", NOW, by="ops"), version=2, made=())
    assert acked.state is State.ACKNOWLEDGED
    assert run(r, reports(35, origin=NOW + 1), acked) is acked  # still breaching: stays acknowledged
    assert states(run(r, reports(27, origin=NOW + 1), acked)) == [("ACKNOWLEDGED", "NORMAL")]


def test_a_snoozed_alarm_ignores_reports_until_its_end_then_is_evaluated_from_normal() -> None:
    r = rule()
    until = 10 * MINUTE
    snoozed = replace(act(Alarm.fresh(7, r), "snooze", 0, by="ops", until=until), version=1, made=())
    snoozed = replace(snoozed, seen=None)  # the reports below are timed after the action
    assert run(r, reports(31, 32, start=5), snoozed).made == ()
    assert states(run(r, reports(31, start=10), snoozed)) == [("SNOOZED", "ACTIVE")]
    assert states(run(r, reports(20, start=11), snoozed)) == [("SNOOZED", "NORMAL")]


def test_a_disabled_alarm_moves_on_no_report_and_enable_makes_it_normal() -> None:
    r = rule()
    disabled = replace(act(Alarm.fresh(7, r), "disable", 0, by="ops"), version=1, made=(), seen=None)
    assert run(r, reports(99, 99), disabled) is disabled
    assert act(disabled, "enable", 1, by="ops").state is State.NORMAL


@pytest.mark.parametrize(
    ("state", "action"),
    [
        (State.NORMAL, "acknowledge"),
        (State.NORMAL, "reset"),
        (State.ACKNOWLEDGED, "acknowledge"),
        (State.ACTIVE, "enable"),
        (State.DISABLED, "snooze"),
        (State.DISABLED, "disable"),
        (State.DISABLED, "acknowledge"),
    ],
)
def test_an_action_the_state_does_not_allow_is_refused_with_the_states_it_applies_to(state: State, action: str) -> None:
    alarm = replace(Alarm.fresh(7, rule()), state=state, version=3)
    with pytest.raises(ActionRefused, match=f"alarm 7.hot is {state.value}: {action} applies to"):
        act(alarm, action, NOW, by="ops", until=NOW + MINUTE)


def test_a_snooze_that_ends_in_the_past_is_refused() -> None:
    with pytest.raises(ActionRefused, match="future"):
        act(Alarm.fresh(7, rule()), "snooze", NOW, by="ops", until=NOW)


def test_reports_from_before_an_operator_action_move_nothing_after_it() -> None:
    r = rule()
    active = replace(run(r, reports(31)), version=1, made=())
    reset = replace(act(active, "reset", NOW, by="ops"), version=2, made=())
    assert run(r, reports(31), reset) is reset  # the report that activated it, redelivered after the reset
    assert states(run(r, [Report(NOW + 1, Decimal(31), "late")], reset)) == [("NORMAL", "ACTIVE")]


def test_a_report_older_than_the_last_one_that_moved_the_alarm_moves_nothing() -> None:
    r = rule(clear=28)
    active = replace(run(r, reports(20, 31, start=5)), version=1, made=())  # active at minute 6
    assert run(r, reports(20, start=2), active) is active


def test_the_transition_id_is_the_causes_and_differs_between_alarms() -> None:
    after = run(rule(), reports(31))
    assert after.made[0].id == transition_id(7, "hot", "report\x1fe0\x1fNORMAL\x1fACTIVE")
    assert transition_id(7, "hot", "e0") != transition_id(8, "hot", "e0") != transition_id(7, "cold", "e0")


# -- properties ------------------------------------------------------------------------------------

values = st.lists(st.sampled_from(["25", "28", "29", "30", "31", "35"]), min_size=1, max_size=30)
rules = st.builds(
    lambda clear, latch, count, seconds: rule(
        clear=clear, latch=latch, **({"for_reports": count} if count > 1 else {"for_seconds": seconds})
    ),
    st.sampled_from([30, 29, 28]),
    st.booleans(),
    st.integers(1, 3),
    st.sampled_from([0, 60, 180]),
)


def stored(alarm: Alarm, before: Alarm) -> Alarm:
    """What the store keeps of an evaluation (the next version, no outbox)."""
    return before if alarm is before else replace(alarm, version=before.version + 1, made=())


def in_batches(r: AlarmRule, sequence: list[Report], cuts: list[int]) -> tuple[Alarm, list[str]]:
    alarm, made = Alarm.fresh(7, r), []
    edges = sorted({0, len(sequence), *[c % (len(sequence) + 1) for c in cuts]})
    for a, b in itertools.pairwise(edges):
        after = evaluate(alarm, r, sequence[a:b], NOW)
        made += [t.id for t in after.made]
        alarm = stored(after, alarm)
    return alarm, made


@settings(max_examples=300, deadline=None)
@given(r=rules, vs=values, cuts=st.lists(st.integers(0, 40), max_size=5))
def test_batches_cut_anywhere_make_the_same_transitions_and_state(r: AlarmRule, vs: list[str], cuts: list[int]) -> None:
    sequence = reports(*vs)
    whole, whole_made = in_batches(r, sequence, [])
    cut, cut_made = in_batches(r, sequence, cuts)
    assert cut_made == whole_made
    assert (cut.state, cut.pending_since, cut.pending_count) == (whole.state, whole.pending_since, whole.pending_count)


@settings(max_examples=300, deadline=None)
@given(r=rules, vs=values, again=st.lists(st.integers(0, 29), min_size=1, max_size=10), data=st.data())
def test_a_report_evaluated_again_moves_nothing(r: AlarmRule, vs: list[str], again: list[int], data: Any) -> None:
    sequence = reports(*vs)
    alarm = stored(evaluate(Alarm.fresh(7, r), r, sequence, NOW), Alarm.fresh(7, r))
    repeats = [sequence[i % len(sequence)] for i in again]
    assert evaluate(alarm, r, repeats, NOW) is alarm


@settings(max_examples=200, deadline=None)
@given(r=rules, vs=values, order=st.randoms(use_true_random=False))
def test_arrival_order_within_a_batch_does_not_matter(r: AlarmRule, vs: list[str], order: Any) -> None:
    sequence = reports(*vs)
    shuffled = list(sequence)
    order.shuffle(shuffled)
    assert evaluate(Alarm.fresh(7, r), r, shuffled, NOW) == evaluate(Alarm.fresh(7, r), r, sequence, NOW)


@settings(max_examples=300, deadline=None)
@given(vs=values, clear=st.sampled_from([30, 29, 28]))
def test_the_state_follows_a_plain_reading_of_the_rule(vs: list[str], clear: int) -> None:
    """Against a second, plain statement of an unlatched rule without duration: active from the first
    value above 30 until the first value at or below the clear level."""
    r = rule(clear=clear)
    active, expected = False, []
    for v in map(Decimal, vs):
        if not active and v > 30:
            active = True
            expected.append(("NORMAL", "ACTIVE"))
        elif active and v <= clear:
            active = False
            expected.append(("ACTIVE", "NORMAL"))
    after = evaluate(Alarm.fresh(7, r), r, reports(*vs), NOW)
    assert states(after) == expected


def test_a_report_whose_event_id_spells_an_operator_cause_gets_its_own_transition_id() -> None:
    r = rule()
    active = replace(run(r, reports(31)), version=1, made=())
    acked = act(active, "acknowledge", NOW, by="ops")  # its cause: acknowledge#2
    spoof = run(r, [Report(NOW + 1, Decimal(20), "acknowledge#2")], replace(acked, version=2, made=()))
    assert spoof.made[0].id != acked.made[0].id
