"""The character rule of an ``event_id`` (the contract's "no control characters"), which the
registry's names and serials and the construct's IoT topic filter follow too: a leaf of the core, so
that whatever follows the rule imports nothing else of it."""

from __future__ import annotations

import re

FORBIDDEN_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
"""Control characters, defined without the interpreter's Unicode tables: the general category Cc,
which the Unicode stability policy fixes forever (U+0000-U+001F, U+007F-U+009F), plus lone
surrogates (U+D800-U+DFFF: not characters, and neither UTF-8 nor DynamoDB can hold them). Every
other code point is accepted, so a character a later Unicode version assigns (and a later Python's
``str.isprintable`` knows) gets the same verdict on every Python. The registry's names and serials
follow the same rule."""

CHARACTER_RULE = "must not contain control characters (U+0000-U+001F, U+007F-U+009F) or lone surrogates (U+D800-U+DFFF)"


def control_character(text: str) -> str | None:
    """The first forbidden character of ``text`` as ``U+XXXX at position N`` (1-based); ``None``."""
    found = FORBIDDEN_CHARACTERS.search(text)
    return None if found is None else f"U+{ord(found[0]):04X} at position {found.start() + 1}"
