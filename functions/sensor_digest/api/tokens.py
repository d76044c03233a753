"""Page tokens of the read API: opaque to clients, and bound to the request that produced them.

A token is the URL-safe base64 of a small JSON object: a version, a digest of the request it
continues (route, sensor, range) and where the page stopped (a sort key, or a sensor id). A token
is user input: ``decode`` refuses (``BadRequest``) one that is not well formed, was made for
another request, or points outside the request's range, so no token can make a ``Query`` read
another sensor's partition (the partition always comes from the path) or outside the range asked
for (the key condition is the request's own, and the start must lie inside it). A page that stops at
the range's last key gives no token, so a position at the upper bound is refused too: DynamoDB
refuses a ``Query`` that starts there. A token is not
secret and not signed: all it can do is skip part of what the same request may read anyway.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from decimal import Decimal
from typing import Any

from sensor_digest.errors import BadRequest

VERSION = 1
MAX_TOKEN_CHARS = 512
REFUSED = "token is not one this API gave for this request; start again without it"


def request_digest(*parts: object) -> str:
    """What a token is bound to: a short digest of the request's route, sensor and range."""
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:16]


def encode(digest: str, after: str | int) -> str:
    text = json.dumps({"v": VERSION, "r": digest, "a": after}, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode(token: str, digest: str) -> Any:
    """Where the page of ``token`` stopped, if it was made for the request of ``digest``."""
    if not token or len(token) > MAX_TOKEN_CHARS or not token.isascii():
        raise BadRequest(REFUSED)
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        found = json.loads(raw.decode())
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise BadRequest(REFUSED) from None
    if not isinstance(found, dict) or found.get("v") != VERSION or found.get("r") != digest or "a" not in found:
        raise BadRequest(REFUSED)
    return found["a"]


def after_sort_key(token: str, digest: str, low: str, high: str) -> str:
    """The sort key a page of a sensor's range stopped at: a string from ``low`` up to, not including,
    ``high`` (a page that stops at ``high`` has nothing after it, and gives no token)."""
    after = decode(token, digest)
    if not isinstance(after, str) or not low <= after < high:
        raise BadRequest(REFUSED)
    return after


DYNAMODB_NUMBER = re.compile(r"-?[0-9]{1,126}(?:\.[0-9]{1,130})?(?:E[+-]?[0-9]{1,3})?")
"""A number as DynamoDB writes one in a key: where a page of the ``Profiles`` index stopped at an item
whose ``SensorId`` is no sensor id (a restore or another writer put it there), the token holds it so."""


def dynamodb_number(text: str) -> bool:
    """Whether DynamoDB takes ``text`` as a number: its shape, at most 38 significant digits, and a
    magnitude from 1E-130 to under 1E126 (or 0); anything else it refuses as invalid input."""
    if not DYNAMODB_NUMBER.fullmatch(text):
        return False
    number = Decimal(text)
    if number == 0:
        return True
    significant = "".join(map(str, number.as_tuple().digits)).strip("0")  # exact: no context rounding
    return len(significant) <= 38 and Decimal("1E-130") <= abs(number) < Decimal("1E126")


def after_sensor(token: str, digest: str, highest: int) -> int | str:
    """The sensor a page of the sensors stopped at: an id from 0 to ``highest``, or the ``SensorId``
    of an item that is no sensor's, as DynamoDB writes the number (``DYNAMODB_NUMBER``)."""
    after = decode(token, digest)
    if isinstance(after, str) and dynamodb_number(after):
        return after
    if isinstance(after, bool) or not isinstance(after, int) or not 0 <= after <= highest:
        raise BadRequest(REFUSED)
    return after
