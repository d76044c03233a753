"""The read API's JSON: Python's, but a ``Decimal`` is written as the exact number it is.

Readings' sums, minimums and maximums are exact decimals (up to 38 digits); a float would round
them, and Powertools' own encoder writes them as strings. ``dumps`` writes them as JSON numbers in
plain digits, everything else as ``json.dumps`` does.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any


def dumps(value: Any) -> str:
    """``value`` as compact JSON, each ``Decimal`` a JSON number of its exact digits."""
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"{value} is no JSON number")
        return "0" if value == 0 else format(value, "f")
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    return json.dumps(value, separators=(",", ":"))
