"""An imported object's bytes as rows, streamed: lines split as they arrive (never more than one line
held, and a line longer than ``MAX_LINE_BYTES`` is not held at all), each row with its position and
line (``rows.Row``).

Positions are counted as AWS Step Functions' item readers count items: a blank line is no row, and a
CSV object's header is none; so a row has the same position (what a row without ``event_id`` is
known by, beside its object) whether it is imported from a file here or by the deployed import. A
line that is not UTF-8 text, a CSV line that breaks RFC 4180 or whose cells do not match the header,
and an over-long line are rows too: rejected, with the reason (``Unreadable``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from sensor_digest.errors import UnreadableInput
from sensor_digest.history.rows import CSV, JSONL, Row, Unreadable, check_header

BOM = "\ufeff"
"""A byte order mark, which some exporters (spreadsheets) put before the first line: not part of it."""
MAX_LINE_BYTES = 1024 * 1024
"""The longest line read (a sensor message is far shorter; Step Functions refuses items past 256 KB)."""


@dataclass(frozen=True)
class Line:
    """One physical line: its number (from 1), its text with its line break (``None``: too long), and
    whether it was UTF-8 (if not, its other bytes are kept as surrogate escapes)."""

    number: int
    text: str | None
    utf8: bool = True
    offset: int = 0  # of its first byte, in the stream read


def _line(number: int, raw: bytes, offset: int) -> Line:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Line(number, raw.decode("utf-8", errors="surrogateescape"), utf8=False, offset=offset)
    return Line(number, text.removeprefix(BOM) if number == 1 else text, offset=offset)


def lines_of(blocks: Iterable[bytes], *, limit: int = MAX_LINE_BYTES, first: int = 1) -> Iterator[Line]:
    """The lines of a stream of byte blocks, numbered from ``first`` (a part of an object: the number of
    its first line), each decoded as UTF-8 (a line that is not: ``utf8`` false); a line past ``limit``
    bytes as ``Line(n, None)``."""
    number, held, skipping = first - 1, bytearray(), False
    offset = consumed = 0  # where the line being read began; the bytes of the blocks before this one
    for block in blocks:
        start = 0
        while start < len(block):
            end = block.find(b"\n", start)
            if end < 0:
                if not skipping:
                    held += block[start:]
                    if len(held) > limit:
                        held.clear()
                        skipping = True
                break
            number += 1
            if skipping or len(held) + end - start > limit:
                yield Line(number, None, offset=offset)
                held.clear()
                skipping = False
            else:
                held += block[start : end + 1]
                yield _line(number, bytes(held), offset)
                held.clear()
            start = end + 1
            offset = consumed + start
        consumed += len(block)
    if skipping:
        yield Line(number + 1, None, offset=offset)
    elif held:
        yield _line(number + 1, bytes(held), offset)


NOT_UTF8 = "the line is not UTF-8 text"
JSON_SPACE = " \t\r\n"
"""JSON's own white space: a JSON line of nothing else is blank (no row)."""
TOO_LONG = f"the line is longer than {MAX_LINE_BYTES:,} bytes"


def _clipped(text: str) -> str:
    return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")[:1000]


def blank(line: Line, fmt: str) -> bool:
    """Whether a line holds no row: nothing but JSON's white space in JSON lines, nothing before its
    line break in CSV."""
    if line.text is None:
        return False
    if fmt == CSV:
        return line.utf8 and not _text(line.text)
    return not line.text.strip(JSON_SPACE)


def jsonl_rows(lines: Iterable[Line], skipped: Skipped | None = None, position: int = 0) -> Iterator[Row]:
    """JSON lines: every line that is not blank is a row (its text, read later by the message rules),
    numbered from ``position``."""
    skipped = skipped if skipped is not None else Skipped()
    for line in lines:
        if blank(line, JSONL):
            skipped.blank += 1
            continue
        if line.text is None:
            value: object = Unreadable(TOO_LONG)
        elif not line.utf8:
            value = Unreadable(NOT_UTF8, _clipped(line.text))
        else:
            value = line.text.rstrip("\r\n")
        yield Row(position, line.number, value)
        position += 1


QUOTE_OPEN = "a quoted cell is not closed on its line (a cell cannot hold a line break: no field of a report has one)"
QUOTE_INSIDE = 'a quote inside a cell that is not quoted (RFC 4180: quote the whole cell, a quote in it written "")'
AFTER_QUOTE = "text after the closing quote of a cell (RFC 4180: a quoted cell ends at its quote, then a comma)"
LONE_CR = "a carriage return inside the line (lines end with LF or CRLF)"


def cells_of(text: str) -> list[str]:
    """One line of CSV (its line break removed) as its cells, by RFC 4180 on a single line: a cell is
    text without quotes, or quoted (``""`` a quote in it); ``ValueError`` with the reason otherwise.
    Every line is read alone, so a quote left open is an error of its line, never of the lines after
    it (a reader that joins lines, as Python's ``csv`` does, takes every line up to the next quote,
    or 128 KB, for one cell)."""
    if "\r" in text:
        raise ValueError(LONE_CR)
    cells: list[str] = []
    at, end = 0, len(text)
    while True:
        if at < end and text[at] == '"':
            parts, at = [], at + 1
            while True:
                close = text.find('"', at)
                if close < 0:
                    raise ValueError(QUOTE_OPEN)
                parts.append(text[at:close])
                if text.startswith('"', close + 1):
                    parts.append('"')
                    at = close + 2
                    continue
                at = close + 1
                break
            cell = "".join(parts)
            if at < end and text[at] != ",":
                raise ValueError(AFTER_QUOTE)
        else:
            comma = text.find(",", at)
            stop = end if comma < 0 else comma
            cell = text[at:stop]
            if '"' in cell:
                raise ValueError(QUOTE_INSIDE)
            at = stop
        cells.append(cell)
        if at >= end:
            return cells
        at += 1  # the comma


def _text(line: str) -> str:
    """A line without its line break (LF or CRLF)."""
    if line.endswith("\n"):
        line = line[:-1]
        if line.endswith("\r"):
            line = line[:-1]
    return line


@dataclass
class Skipped:
    """Lines that hold no row: blank ones (none of them is lost: every line is a row, blank, or the header)."""

    blank: int = 0


def csv_rows(
    lines: Iterable[Line], skipped: Skipped | None = None, position: int = 0, header: Sequence[str] | None = None
) -> Iterator[Row]:
    """CSV: the header first (``UnreadableInput`` when it lacks a required column; ``header``: a part of
    an object after its header, read with it), then each line a record of its own (``cells_of``), a row
    of its cells by column, numbered from ``position``; a blank line is none."""
    skipped = skipped if skipped is not None else Skipped()
    for line in lines:
        if header is None:
            header = _header(line)
            continue
        if blank(line, CSV):
            skipped.blank += 1
            continue
        value: object
        if line.text is None:
            value = Unreadable(TOO_LONG)
        elif not line.utf8:
            value = Unreadable(NOT_UTF8, _clipped(line.text))
        else:
            text = _text(line.text)
            try:
                cells = cells_of(text)
            except ValueError as exc:
                value = Unreadable(f"the CSV line breaks RFC 4180: {exc}", _clipped(text))
            else:
                if len(cells) != len(header):
                    value = Unreadable(f"the CSV line has {len(cells)} cells, the header {len(header)}", _clipped(text))
                else:
                    value = dict(zip(header, cells, strict=True))
        yield Row(position, line.number, value)
        position += 1
    if header is None:
        raise UnreadableInput("the CSV object is empty: it needs a header naming sensor_id and timestamp")


def _header(line: Line) -> list[str]:
    if line.text is None or not line.utf8:
        raise UnreadableInput(f"the CSV header (line {line.number}) cannot be read: it is too long or not UTF-8")
    if not _text(line.text):
        raise UnreadableInput("the CSV header (line 1) is blank: the first line must name the columns")
    try:
        return check_header(cells_of(_text(line.text)))
    except ValueError as exc:
        raise UnreadableInput(f"the CSV header (line {line.number}) cannot be read: {exc}") from None


def rows_of(
    lines: Iterable[Line],
    fmt: str,
    skipped: Skipped | None = None,
    *,
    position: int = 0,
    header: Sequence[str] | None = None,
) -> Iterator[Row]:
    """The rows of an object in format ``fmt`` (``rows.JSONL`` or ``rows.CSV``), or of a part of it
    (its first row's ``position``, a CSV object's ``header``); the lines that hold none counted in
    ``skipped``."""
    if fmt == CSV:
        return csv_rows(lines, skipped, position, header)
    return jsonl_rows(lines, skipped, position)


def header_of(lines: Iterable[Line]) -> list[str]:
    """A CSV object's header, from its first line (``UnreadableInput`` when it cannot be read)."""
    for line in lines:
        return _header(line)
    raise UnreadableInput("the CSV object is empty: it needs a header naming sensor_id and timestamp")
