"""The order a batch's sensor-day groups are written in (pure Python; no engine)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sensor_digest.counting.base import DayCounter, Group, GroupOutcome
from sensor_digest.counting.policies import ring_order, ring_place
from sensor_digest.messages import SensorMessage

DAYS = st.lists(
    st.tuples(st.integers(0, 10_000), st.sampled_from(["2024-05-01", "2024-05-02", "2024-06-30"])),
    unique=True,
    max_size=40,
)


@given(keys=DAYS, seed=st.integers())
def test_every_invocation_walks_the_same_ring_from_a_place_of_its_own(keys: list[tuple[int, str]], seed: int) -> None:
    # Given a batch's groups in whatever order they were read
    groups = [(key, []) for key in keys]
    random.seed(seed)

    walked = [key for key, _ in ring_order(list(groups))]

    # Then it is the ring (groups by their fixed place) entered at some place: a rotation of it
    ring = sorted(keys, key=ring_place)
    assert any(walked == ring[start:] + ring[:start] for start in range(max(1, len(ring))))


def test_two_invocations_start_at_different_places_of_the_ring() -> None:
    groups = [((sensor, "2024-05-01"), []) for sensor in range(50)]
    starts = {ring_order(list(groups))[0][0] for _ in range(20)}
    assert len(starts) > 1  # 20 draws among 50 places: all equal with probability 50**-19


def test_a_sensor_days_place_is_the_same_in_every_container() -> None:
    # Given two interpreters with different string hash salts (as two Lambda containers have)
    code = "from sensor_digest.counting.policies import ring_place; print(ring_place((7, '2024-05-01')))"
    places = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    # Then they put the sensor-day at one place
    assert len(places) == 1 and places != {""}


class MeetsAnotherWriter(DayCounter):
    """Writes one group at a time, recording the order; the group of ``busy`` meets another
    invocation's transaction the first time (it is handed back), and is written at the end."""

    def __init__(self, busy: int) -> None:
        super().__init__(max_workers=1)
        self.busy = busy
        self.order: list[tuple[int, bool]] = []

    def identity(self, message: Any) -> Any:
        return message.ledger_key

    def count_group(self, group: Group) -> GroupOutcome:
        self.order.append((group.sensor_id, group.may_defer))
        if group.sensor_id == self.busy and group.may_defer:
            return GroupOutcome(deferred=list(group.messages))
        return GroupOutcome(counted=list(group.messages))


def message(sensor_id: int) -> SensorMessage:
    return SensorMessage(
        message_id=f"m{sensor_id}", sensor_id=sensor_id, day="2024-05-01", count=1, event_id=f"e{sensor_id}"
    )


def test_an_invocation_that_meets_another_walks_on_and_writes_the_contended_group_last() -> None:
    # Given a batch of 21 sensor-days, and the 5th group on this invocation's walk contended
    random.seed(3)
    batch = [message(s) for s in range(21)]
    walk = [key[0] for key, _ in ring_order([((m.sensor_id, m.day), [m]) for m in batch])]
    random.seed(3)  # the same entry point on the ring for the counter's own walk
    counter = MeetsAnotherWriter(busy=walk[4])

    # When the batch is counted
    result = counter.count_batch(batch)

    # Then it walks on round the ring in its order and writes the contended group at the end of the
    # batch, once, no longer deferrable
    assert [s for s, _ in counter.order] == [*walk, walk[4]]
    assert counter.order[-1] == (walk[4], False)
    assert sorted(m.sensor_id for _, o in result.groups for m in o.counted) == list(range(21))
