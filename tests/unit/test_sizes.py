"""Item sizes by DynamoDB's documented rules (no network); the engine cross-check is in test_summary."""

from __future__ import annotations

import pytest

from sensor_digest.store.sizes import item_bytes, value_bytes, write_units


@pytest.mark.parametrize(
    ("value", "size"),
    [
        ({"S": "héllo"}, 6),
        ({"N": "7"}, 2),
        ({"N": "12345"}, 4),
        ({"N": "1000000"}, 2),  # trailing zeros are trimmed
        ({"N": "0"}, 2),
        ({"BOOL": True}, 1),
        ({"M": {}}, 3),
        ({"M": {"2024-05-01": {"N": "12"}}}, 3 + 10 + 2 + 1),
        ({"L": [{"S": "ab"}, {"N": "1"}]}, 3 + (2 + 1) + (2 + 1)),
    ],
)
def test_value_sizes_follow_the_documented_rules(value: dict[str, object], size: int) -> None:
    assert value_bytes(value) == size


def test_an_item_is_its_names_plus_its_values() -> None:
    item = {"SensorId": {"N": "42"}, "Date": {"S": "2024-05-01"}, "DataCount": {"N": "3"}}
    assert item_bytes(item) == (8 + 2) + (4 + 10) + (9 + 2)


@pytest.mark.parametrize(
    ("size", "transactional", "units"), [(1, False, 1), (1024, False, 1), (1025, False, 2), (100, True, 2)]
)
def test_write_units_round_up_per_kilobyte_and_double_in_transactions(
    size: int, transactional: bool, units: int
) -> None:
    assert write_units(size, transactional=transactional) == units
