"""What a dead letter looks like: the original body, with the reason in message attributes.

SQS counts a message's attributes (each name, data type and value, in UTF-8 bytes) toward the
same ``MaximumMessageSize`` as its body. A rejected body is re-sent with two attributes, so the
dead-letter queue must hold the largest body the source queue accepts plus the largest attributes
added here. Both values are clipped to a fixed number of bytes, which makes that overhead a
constant: ``DEAD_LETTER_OVERHEAD_BYTES``, from which ``infra/settings.py`` derives the source
queue's maximum.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

SQS_MAX_MESSAGE_BYTES = 1_048_576
"""The largest message SQS takes (1 MiB), body and attributes together."""

REASON_ATTRIBUTE = "error"
SOURCE_ID_ATTRIBUTE = "source_message_id"
ATTRIBUTE_TYPE = "String"
MAX_REASON_BYTES = 1024
MAX_SOURCE_ID_BYTES = 128
DEAD_LETTER_OVERHEAD_BYTES = (len(REASON_ATTRIBUTE) + len(ATTRIBUTE_TYPE) + MAX_REASON_BYTES) + (
    len(SOURCE_ID_ATTRIBUTE) + len(ATTRIBUTE_TYPE) + MAX_SOURCE_ID_BYTES
)
"""The most bytes the attributes of a dead letter add to its body."""

EMPTY_BODY = "<empty body>"


def source_queue_max_bytes(dead_letter_max_bytes: int = SQS_MAX_MESSAGE_BYTES) -> int:
    """The largest message a queue may take when its rejected messages go to a dead-letter queue
    of ``dead_letter_max_bytes``: every body it accepts still fits there with its reason."""
    return dead_letter_max_bytes - DEAD_LETTER_OVERHEAD_BYTES


# What SQS accepts in a body or a string attribute: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
_NOT_SQS_TEXT = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def sqs_text(text: str, max_bytes: int) -> str:
    """``text`` with every character SQS refuses replaced by U+FFFD, cut to ``max_bytes`` of UTF-8."""
    clean = _NOT_SQS_TEXT.sub("\ufffd", text)
    encoded = clean.encode()
    if len(encoded) <= max_bytes:
        return clean
    return encoded[: max_bytes - 3].decode(errors="ignore") + "..."


_SQS_FIFO_ID = re.compile(r"[!-~]{1,128}")  # what SQS takes as a message group or deduplication id


def fifo_id(value: object) -> str | None:
    """``value`` if SQS takes it as a ``MessageGroupId`` or ``MessageDeduplicationId`` (1 to 128
    characters from ``!`` to ``~``), else ``None``."""
    return value if isinstance(value, str) and _SQS_FIFO_ID.fullmatch(value) else None


def clip_reason(reason: str) -> str:
    """A reason SQS takes as an attribute and a log line can carry: at most ``MAX_REASON_BYTES``."""
    return sqs_text(reason, MAX_REASON_BYTES)


def message_size(body: str, attributes: Mapping[str, Mapping[str, Any]] | None = None) -> int:
    """A message's size as SQS counts it against ``MaximumMessageSize``: the body and, for each
    attribute, its name, data type and value, all in bytes."""
    size = len(body.encode())
    for name, attribute in (attributes or {}).items():
        value = attribute.get("StringValue")
        raw = value.encode() if isinstance(value, str) else bytes(attribute.get("BinaryValue") or b"")
        size += len(name.encode()) + len(str(attribute.get("DataType", "")).encode()) + len(raw)
    return size


def dead_letter_attributes(reason: str, source_message_id: str) -> dict[str, dict[str, str]]:
    """The attributes a rejected message carries: never more than ``DEAD_LETTER_OVERHEAD_BYTES``."""
    return {
        REASON_ATTRIBUTE: {"DataType": ATTRIBUTE_TYPE, "StringValue": clip_reason(reason or "no reason given")},
        SOURCE_ID_ATTRIBUTE: {
            "DataType": ATTRIBUTE_TYPE,
            "StringValue": sqs_text(source_message_id or "unknown", MAX_SOURCE_ID_BYTES),
        },
    }
