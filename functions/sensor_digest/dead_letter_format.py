"""What a dead letter looks like: the original body, with the reason and the message's origin in
message attributes.

A message keeps its identity and its time through the dead-letter queue and back: a redrive (this
project's, or SQS's own) gives it a new ``messageId`` and a new ``SentTimestamp``, and those are
what a report without ``event_id`` is counted by and what a report without ``timestamp`` is dated
by. So every dead letter carries its origin as two attributes in the project's own namespace,
``sensor-digest.source_message_id`` (the original SQS ``messageId``) and
``sensor-digest.source_sent_timestamp`` (the original ``SentTimestamp``, epoch milliseconds);
ingest writes them on what it rejects, the redrive command stamps them on what SQS moved there
itself, and ingest reads a message's origin from them, and from nothing else, when they are present
(``Origin.of``), so that after any redrive a report counts once, on its original day.

The namespace keeps a producer's own attributes from being taken for an origin: a relay that tags
its reports with an upstream ``source_message_id`` (the names earlier versions used) is never read
by ingest. Dead letters that earlier versions wrote under those bare names stay redrivable exactly:
the project's redrive and ``dlq stamp`` read them (``Origin.of_letter``), on letters that carry
nothing but what earlier versions wrote (``written_by_earlier_version``).

Every origin this version writes carries the bare names too, with the same values: after a rollback
to the release before the namespace (docs/exactly-once.md, "Upgrading, and rolling back"), that
release reads the bare names only, and a dead letter written here and redriven there must still
count once, on its own day. This version never reads them where the namespaced ones are present.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

SQS_MAX_MESSAGE_BYTES = 1_048_576
"""The largest message SQS takes (1 MiB), body and attributes together."""

REASON_ATTRIBUTE = "error"
NAMESPACE = "sensor-digest."
"""The prefix of the origin attributes: reserved for this project (the producer docs say so)."""
SOURCE_ID_ATTRIBUTE = f"{NAMESPACE}source_message_id"
SOURCE_SENT_ATTRIBUTE = f"{NAMESPACE}source_sent_timestamp"
ORIGIN_ATTRIBUTES = (SOURCE_ID_ATTRIBUTE, SOURCE_SENT_ATTRIBUTE)
LEGACY_SOURCE_ID_ATTRIBUTE = "source_message_id"
LEGACY_SOURCE_SENT_ATTRIBUTE = "source_sent_timestamp"
LEGACY_ORIGIN_ATTRIBUTES = (LEGACY_SOURCE_ID_ATTRIBUTE, LEGACY_SOURCE_SENT_ATTRIBUTE)
"""The names earlier versions wrote the origin under: read from dead letters only, never by ingest."""
ATTRIBUTE_TYPE = "String"
NUMBER_TYPE = "Number"
MAX_REASON_BYTES = 1024
MAX_SOURCE_ID_BYTES = 128
MAX_SOURCE_SENT_DIGITS = 15  # epoch milliseconds up to the end of year 9999
DEAD_LETTER_OVERHEAD_BYTES = (
    (len(REASON_ATTRIBUTE) + len(ATTRIBUTE_TYPE) + MAX_REASON_BYTES)
    + sum(
        len(name) + len(ATTRIBUTE_TYPE) + MAX_SOURCE_ID_BYTES
        for name in (SOURCE_ID_ATTRIBUTE, LEGACY_SOURCE_ID_ATTRIBUTE)
    )
    + sum(
        len(name) + len(NUMBER_TYPE) + MAX_SOURCE_SENT_DIGITS
        for name in (SOURCE_SENT_ATTRIBUTE, LEGACY_SOURCE_SENT_ATTRIBUTE)
    )
)
"""The most bytes the attributes of a dead letter add to its body."""

MAX_BATCH_ENTRIES = 10
"""``SendMessageBatch`` takes at most ten entries, and at most ``SQS_MAX_MESSAGE_BYTES`` in all."""

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


# SQS's rule for a message attribute's name: letters, digits, '-', '_' and '.', at most 256; no '.'
# first, last or twice in a row; no prefix "AWS." or "Amazon." in any case
_SQS_ATTRIBUTE_NAME = re.compile(r"(?!\.)(?!.*\.\.)[A-Za-z0-9_.-]{1,256}(?<!\.)")
_SQS_RESERVED_PREFIXES = ("aws.", "amazon.")


def attribute_name_ok(name: str) -> bool:
    """Whether SQS takes ``name`` as a message attribute's name."""
    return _SQS_ATTRIBUTE_NAME.fullmatch(name) is not None and not name.lower().startswith(_SQS_RESERVED_PREFIXES)


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


class BadOrigin(ValueError):
    """A message carries an origin attribute that is not one (the reason says which and why)."""


@dataclass(frozen=True)
class Origin:
    """Where a message first entered the pipeline: its original SQS ``messageId`` and
    ``SentTimestamp`` (epoch milliseconds, as SQS gives it: a decimal string), which a report
    without ``event_id`` is counted by and a report without ``timestamp`` is dated by."""

    message_id: str
    sent_timestamp: str | None

    @classmethod
    def of(cls, message_id: str, sent_timestamp: str | None, attributes: Mapping[str, Any] | None) -> Origin:
        """The origin of a message as ingest reads it: its ``sensor-digest.source_message_id`` and
        ``sensor-digest.source_sent_timestamp`` attributes where it carries them (a dead letter back
        from a redrive), else its own id and sent time; attributes of any other name, the bare names
        of earlier versions among them, are the producer's and never an origin. ``attributes`` as
        ``ReceiveMessage`` returns them (``StringValue``) or as Lambda's event does
        (``stringValue``). ``BadOrigin`` for an attribute that is not one."""
        return cls._stamped(message_id, sent_timestamp, attributes, ORIGIN_ATTRIBUTES)

    @classmethod
    def of_letter(cls, message_id: str, sent_timestamp: str | None, attributes: Mapping[str, Any] | None) -> Origin:
        """The origin of a dead letter as the redrive reads it: the namespaced attributes (``of``),
        else, on a letter an earlier version wrote (``written_by_earlier_version``), the bare names
        it wrote them under, else the letter's own id and sent time."""
        if not any(name in (attributes or {}) for name in ORIGIN_ATTRIBUTES) and written_by_earlier_version(attributes):
            return cls._stamped(message_id, sent_timestamp, attributes, LEGACY_ORIGIN_ATTRIBUTES)
        return cls.of(message_id, sent_timestamp, attributes)

    @classmethod
    def _stamped(
        cls, message_id: str, sent_timestamp: str | None, attributes: Mapping[str, Any] | None, names: tuple[str, str]
    ) -> Origin:
        id_name, sent_name = names
        stamped_id = _attribute_text(attributes, id_name)
        stamped_sent = _attribute_text(attributes, sent_name)
        if stamped_id is not None and not 1 <= _utf8_length(stamped_id) <= MAX_SOURCE_ID_BYTES:
            raise BadOrigin(f"the {id_name} attribute must have 1 to {MAX_SOURCE_ID_BYTES} bytes of UTF-8")
        if stamped_sent is not None and not (
            stamped_sent.isascii() and stamped_sent.isdigit() and len(stamped_sent) <= MAX_SOURCE_SENT_DIGITS
        ):
            raise BadOrigin(
                f"the {sent_name} attribute must be epoch milliseconds (at most {MAX_SOURCE_SENT_DIGITS} ASCII digits)"
            )
        return cls(
            message_id=message_id if stamped_id is None else stamped_id,
            sent_timestamp=sent_timestamp if stamped_sent is None else stamped_sent,
        )

    def attributes(self) -> dict[str, dict[str, str]]:
        """The origin as message attributes (what a dead letter carries, and a redrive stamps): under
        the namespaced names, and under the bare names the release before them reads (see the module)."""
        message_id = {
            "DataType": ATTRIBUTE_TYPE,
            "StringValue": sqs_text(self.message_id or "unknown", MAX_SOURCE_ID_BYTES),
        }
        out = {SOURCE_ID_ATTRIBUTE: message_id, LEGACY_SOURCE_ID_ATTRIBUTE: dict(message_id)}
        sent = self.sent_timestamp
        if sent is not None and sent.isascii() and sent.isdigit() and len(sent) <= MAX_SOURCE_SENT_DIGITS:
            out[SOURCE_SENT_ATTRIBUTE] = {"DataType": NUMBER_TYPE, "StringValue": sent}
            out[LEGACY_SOURCE_SENT_ATTRIBUTE] = {"DataType": NUMBER_TYPE, "StringValue": sent}
        return out


def _utf8_length(text: str) -> int:
    """``text``'s length in UTF-8 bytes; 0 for text no UTF-8 can hold (a lone surrogate, which SQS
    never delivers but a hand-made event may carry)."""
    try:
        return len(text.encode())
    except UnicodeEncodeError:
        return 0


def written_by_earlier_version(attributes: Mapping[str, Any] | None) -> bool:
    """Whether a dead letter's attributes are what an earlier version of this project wrote under the
    bare names: ``source_message_id`` (String), with the ``error`` ingest wrote or a
    ``source_sent_timestamp`` (Number), and nothing else (earlier versions, as this one, kept none
    of the producer's attributes on what they wrote). A producer's message that SQS moved to the
    dead-letter queue with an attribute of its own beside them is not."""
    given = dict(attributes or {})
    if LEGACY_SOURCE_ID_ATTRIBUTE not in given or not set(given) <= {REASON_ATTRIBUTE, *LEGACY_ORIGIN_ATTRIBUTES}:
        return False
    expected = {LEGACY_SOURCE_ID_ATTRIBUTE: ATTRIBUTE_TYPE, LEGACY_SOURCE_SENT_ATTRIBUTE: NUMBER_TYPE}
    if any(_data_type(given[name]) != kind for name, kind in expected.items() if name in given):
        return False
    return REASON_ATTRIBUTE in given or LEGACY_SOURCE_SENT_ATTRIBUTE in given


def _data_type(attribute: Any) -> str | None:
    if not isinstance(attribute, Mapping):
        return None
    kind = attribute.get("DataType", attribute.get("dataType"))
    return kind if isinstance(kind, str) else None


def _attribute_text(attributes: Mapping[str, Any] | None, name: str) -> str | None:
    """A message attribute's string value, in either casing (``ReceiveMessage`` or Lambda's event)."""
    attribute = (attributes or {}).get(name)
    if not isinstance(attribute, Mapping):
        return None
    value = attribute.get("StringValue", attribute.get("stringValue"))
    return value if isinstance(value, str) else None


def dead_letter_attributes(reason: str, origin: Origin) -> dict[str, dict[str, str]]:
    """The attributes a rejected message carries: never more than ``DEAD_LETTER_OVERHEAD_BYTES``."""
    return {
        REASON_ATTRIBUTE: {"DataType": ATTRIBUTE_TYPE, "StringValue": clip_reason(reason or "no reason given")},
        **origin.attributes(),
    }


E = TypeVar("E", bound=Mapping[str, Any])


def send_batches(entries: Iterable[E]) -> Iterator[list[E]]:
    """``SendMessageBatch`` entries in batches SQS takes: at most ``MAX_BATCH_ENTRIES`` each, and
    at most ``SQS_MAX_MESSAGE_BYTES`` of bodies and attributes together (one entry never exceeds
    that alone: SQS would refuse the message itself)."""
    batch: list[E] = []
    size = 0
    for entry in entries:
        entry_size = message_size(str(entry["MessageBody"]), entry.get("MessageAttributes"))
        if batch and (len(batch) == MAX_BATCH_ENTRIES or size + entry_size > SQS_MAX_MESSAGE_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(entry)
        size += entry_size
    if batch:
        yield batch
