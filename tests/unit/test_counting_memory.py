"""Parts of day counting that need no engine: the memory of known day items, the bet on days found
missing, the retry backoff."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sensor_digest.counting import GroupOutcome, KnownDays, RetryPolicy
from sensor_digest.counting.memory import CreatedDays


def test_known_days_answer_only_the_unknown_sorted_and_forget_the_least_recently_used() -> None:
    days = KnownDays(limit=3)
    days.add([(1, "2024-05-01"), (2, "2024-05-01"), (3, "2024-05-01")])
    days.add([(1, "2024-05-01")])  # used again: now the most recent
    days.add([(4, "2024-05-01")])  # past the limit: sensor 2's day, the least recently used, goes

    asked = [(4, "2024-05-01"), (2, "2024-05-01"), (1, "2024-05-01"), (5, "2024-05-02"), (2, "2024-05-01")]
    assert days.unknown(asked) == [(2, "2024-05-01"), (5, "2024-05-02")]


@given(retry=st.integers(0, 12), floor=st.floats(0, 5))
def test_the_backoff_waits_at_least_half_the_refused_attempts_span_and_never_past_the_cap(
    retry: int, floor: float
) -> None:
    policy = RetryPolicy()
    span = min(policy.cap_seconds, max(policy.base_seconds, floor) * 2**retry)

    delay = policy.delay(retry, floor=floor)

    assert span / 2 <= delay <= span <= policy.cap_seconds


def _outcome(steps: list[str], insert_refused: bool = False, written: bool = True) -> GroupOutcome:
    """A group's outcome: its steps, and one message counted when a write of it was answered."""
    counted: list[Any] = [object()] if written else []
    return GroupOutcome(steps=steps, insert_refused=insert_refused, counted=counted)


def _heard(days: CreatedDays, created: bool) -> None:
    days.heard(_outcome(["insert", "update-again"] if created else ["insert"], insert_refused=created))


@given(history=st.lists(st.booleans(), max_size=80))
def test_a_day_found_missing_is_bet_created_only_while_most_of_the_last_32_were(history: list[bool]) -> None:
    days = CreatedDays()
    for created in history:
        _heard(days, created)

    recent = history[-32:]
    assert days.likely_created() == (len(recent) >= 8 and sum(recent) > len(recent) / 2)


def test_a_day_was_created_meanwhile_when_it_was_there_at_the_first_write() -> None:
    days = CreatedDays(least=1)
    days.heard(_outcome(["update"]))  # the bet won: the update found the day item
    assert days.likely_created()
    days.heard(_outcome(["update", "insert"]))  # the bet lost: the insert created it
    # lost too: no day item at the update, though another's insert came just before this one's
    days.heard(_outcome(["update", "insert", "update-again"], insert_refused=True))
    assert not days.likely_created()
    days.heard(_outcome(["insert", "update-again"], insert_refused=True))  # no bet: the insert found it
    days.heard(_outcome(["insert", "update-again"], insert_refused=True))
    assert days.likely_created()
    for _ in range(5):  # no write answered (throttled, deferred, out of time): no evidence either way
        days.heard(_outcome(["update", "insert"], written=False))
        days.heard(GroupOutcome())
    assert days.likely_created()
