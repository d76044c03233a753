"""How a value of each type a prop may have is checked as a construct prop (Python) and read from
context (a ``-c key=value`` arrives as text, a value of ``cdk.json`` as its JSON type): one ``Kind``
per type, keyed on the type itself (``typing.get_type_hints``), never on how its annotation is
spelt. A field of a type with no kind here fails when the tunables are defined (``kind_of``), so a
new type cannot slip through as text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_origin

WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")
BOOLEANS = {"true": True, "false": False}
MAX_DIGITS = 30  # a context number longer than this is past every rule's range (and int() refuses 4,300+)


@dataclass(frozen=True)
class Kind:
    """``takes``: whether a prop's value is of the type; ``read``: a context value as the type, or
    ``None`` when it cannot be read as one."""

    takes: Callable[[object], bool]
    read: Callable[[object], Any]


def _int(raw: object) -> int | None:
    """``"100"`` (a ``-c`` value) and ``100`` (cdk.json's) are 100; ``"abc"``, ``"1.5"``, ``1.5`` and
    ``true`` are none."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():  # JSON has numbers only; 100.0 is 100
        return int(raw)
    if isinstance(raw, str) and WHOLE_NUMBER.fullmatch(raw.strip()) and len(raw.strip()) <= MAX_DIGITS:
        return int(raw)  # longer than any limit here (and than Python's int parsing allows): none
    return None


def _bool(raw: object) -> bool | None:
    """``true``/``false`` as JSON or as text (any case)."""
    if isinstance(raw, bool):
        return raw
    return BOOLEANS.get(raw.strip().lower()) if isinstance(raw, str) else None


def _strings(raw: object) -> tuple[str, ...] | None:
    """A JSON list of strings, or text with the items separated by commas."""
    if isinstance(raw, str):
        return tuple(item.strip() for item in raw.split(",") if item.strip())
    if isinstance(raw, list | tuple) and all(isinstance(item, str) for item in raw):
        return tuple(raw)
    return None


def _text(raw: object) -> str | None:
    return raw if isinstance(raw, str) else None


WHOLE = Kind(lambda v: isinstance(v, int) and not isinstance(v, bool), _int)
TEXT = Kind(lambda v: isinstance(v, str), _text)
KINDS: dict[object, Kind] = {
    int: WHOLE,
    bool: Kind(lambda v: isinstance(v, bool), _bool),
    str: TEXT,
    tuple[str, ...]: Kind(lambda v: isinstance(v, list | tuple) and all(isinstance(i, str) for i in v), _strings),
}


def kind_of(annotation: object) -> Kind:
    """The kind of a field's resolved type: a ``Literal`` of choices is text (its rule names them)."""
    if get_origin(annotation) is Literal:
        return TEXT
    try:
        return KINDS[annotation]
    except KeyError:
        raise TypeError(
            f"a prop of type {annotation!r} has no kind (kinds.KINDS): say how it is checked and read"
        ) from None
