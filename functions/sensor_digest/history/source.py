"""What an imported object is: its identity (an S3 object's bucket, key and version, else its ETag; a
local file's content), the id its rows' identities and record are made of, and how a row's position maps to
the line a person finds it on."""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sensor_digest.errors import UnreadableInput
from sensor_digest.history.rows import CSV, FORMATS, JSONL

_PERSON = b"sensor-digest.ob"
OBJECT_ID_BYTES = 16


@dataclass(frozen=True)
class SourceObject:
    """An imported object: ``identity`` is what makes it itself (two imports of one identity are one
    object: their rows' identities are equal), ``name`` what a person calls it."""

    identity: str
    name: str

    @property
    def object_id(self) -> bytes:
        """16 bytes of BLAKE2b of the identity: what its rows' identities and its record's key are made of."""
        return hashlib.blake2b(self.identity.encode("utf-8"), digest_size=OBJECT_ID_BYTES, person=_PERSON).digest()


def s3_object(bucket: str, key: str, *, version: str | None, etag: str) -> SourceObject:
    """An S3 object: its version where the bucket keeps versions, else its ETag (its content, as S3
    names it: another upload to the same key is another object)."""
    name = f"s3://{bucket}/{key}"
    if version and version != "null":
        return SourceObject(f"{name}?versionId={version}", name)
    return SourceObject(f"{name}#etag={etag.strip(chr(34))}", name)


def file_object(sha256_hex: str, path: str) -> SourceObject:
    """A local file: its content's SHA-256 (the same file under another name is the same object)."""
    return SourceObject(f"sha256:{sha256_hex}", path)


def format_of(name: str, given: str | None = None) -> str:
    """The format to read an object in: ``given``, else by its name's extension (``.jsonl``,
    ``.ndjson``, ``.json``: JSON lines; ``.csv``: CSV); ``UnreadableInput`` otherwise."""
    if given is not None:
        if given not in FORMATS:
            raise UnreadableInput(f"format {given!r} is not one of {', '.join(FORMATS)}")
        return given
    lowered = name.lower().removesuffix(".gz")
    if lowered.endswith((".jsonl", ".ndjson", ".json")):
        return JSONL
    if lowered.endswith(".csv"):
        return CSV
    raise UnreadableInput(f"{name}: cannot tell its format from its name: name it with --format jsonl or --format csv")


MAX_SHIFTS = 100
"""How many places a deployed import's line numbers may shift at (blank lines): they travel with
every batch."""


@dataclass(frozen=True)
class Lines:
    """Where row positions are found as lines: row 0 on line ``first``, one row a line, but for the
    ``shifts``: from position ``p`` on, ``extra`` more lines lie before a row (sorted by position)."""

    first: int = 1
    shifts: tuple[tuple[int, int], ...] = field(default_factory=tuple)

    def line(self, position: int) -> int:
        index = bisect_right([p for p, _ in self.shifts], position)
        extra = self.shifts[index - 1][1] if index else 0
        return self.first + position + extra

    def as_json(self) -> dict[str, Any]:
        return {"first": self.first, "shifts": [list(s) for s in self.shifts]}

    @classmethod
    def from_json(cls, value: Any) -> Lines:
        """Lines as a batch's input carries them; ``ValueError`` for anything else."""
        if not isinstance(value, Mapping):
            raise ValueError("lines must be an object")
        first, shifts = value.get("first"), value.get("shifts", [])
        if type(first) is not int or not isinstance(shifts, Sequence) or len(shifts) > MAX_SHIFTS:
            raise ValueError("lines must name the first line and at most 100 shifts")
        pairs: list[tuple[int, int]] = []
        for pair in shifts:
            if not (isinstance(pair, Sequence) and len(pair) == 2 and all(type(n) is int for n in pair)):
                raise ValueError("a shift is a pair of whole numbers")
            pairs.append((pair[0], pair[1]))
        return cls(first, tuple(sorted(pairs)))
