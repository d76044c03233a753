"""The order a batch's sensor-day groups are written in (pure Python; no engine)."""

from __future__ import annotations

import os
import random
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from sensor_digest.counting.base import ring_order, ring_place

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
    code = "from sensor_digest.counting.base import ring_place; print(ring_place((7, '2024-05-01')))"
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
