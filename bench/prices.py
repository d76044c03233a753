"""What the benchmark's units cost: DynamoDB on-demand request prices, us-east-1, $ per million
request units (AWS's price list since November 2024)."""

from __future__ import annotations

from typing import Any

PRICE_PER_MILLION = {"write": 0.625, "read": 0.125}


def dollars_per_million(result: dict[str, Any]) -> float:
    """DynamoDB dollars per million messages of a run (its write and read units per message)."""
    writes, reads = float(result["write_units_per_message"]), float(result["read_units_per_message"])
    return writes * PRICE_PER_MILLION["write"] + reads * PRICE_PER_MILLION["read"]
