"""Item sizes and write units by DynamoDB's documented rules ("DynamoDB item sizes and formats").

Ingest reads them to tell a day item too near DynamoDB's 400 KB to grow (``schema.check_day_item``);
DynamoDB Local does not report the capacity real DynamoDB would consume for transactions, so the
benchmarks and docs/benchmarks.md compute it from item sizes with these rules too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

MAX_ITEM_BYTES = 400 * 1024
WRITE_UNIT_BYTES = 1024


def _number_bytes(text: str) -> int:
    digits = Decimal(text).normalize().as_tuple().digits
    significant = len(digits) if any(digits) else 1
    return math.ceil(significant / 2) + 1


def value_bytes(value: Mapping[str, Any]) -> int:
    """Size of one AttributeValue (without its attribute name)."""
    (kind, data), *_ = value.items()
    if kind == "S":
        return len(data.encode())
    if kind == "N":
        return _number_bytes(data)
    if kind == "B":
        return len(data)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(s.encode()) for s in data)
    if kind == "NS":
        return sum(_number_bytes(n) for n in data)
    if kind == "BS":
        return sum(len(b) for b in data)
    if kind == "M":
        return 3 + sum(len(k.encode()) + value_bytes(v) + 1 for k, v in data.items())
    if kind == "L":
        return 3 + sum(value_bytes(v) + 1 for v in data)
    raise ValueError(f"unknown AttributeValue type {kind!r}")


def item_bytes(item: Mapping[str, Mapping[str, Any]]) -> int:
    """Size of an item in DynamoDB's low-level form: attribute names plus values."""
    return sum(len(name.encode()) + value_bytes(value) for name, value in item.items())


def write_units(size_bytes: int, *, transactional: bool = False) -> int:
    """Write capacity units of one write of an item this large (2x inside a transaction)."""
    units = max(1, math.ceil(size_bytes / WRITE_UNIT_BYTES))
    return units * 2 if transactional else units
