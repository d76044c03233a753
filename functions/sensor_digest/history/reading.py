"""An imported object's bytes as rows, streamed: lines split as they arrive (never more than one line
held, and a line longer than ``MAX_LINE_BYTES`` is not held at all), each row with its position and
line (``rows.Row``).

Positions are counted as AWS Step Functions' item readers count items: a blank line is no row, and a
CSV object's header is none; so a row has the same position, and an object's chunks the same tokens,
whether it is imported from a file here or by the deployed import. A line that is not UTF-8 text, a
CSV record that breaks RFC 4180 or whose cells do not match the header, and an over-long line are
rows too: rejected, with the reason (``Unreadable``).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from sensor_digest.errors import UnreadableInput
from sensor_digest.history.rows import CSV, Row, Unreadable, check_header

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


def _line(number: int, raw: bytes) -> Line:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Line(number, raw.decode("utf-8", errors="surrogateescape"), utf8=False)
    return Line(number, text.removeprefix(BOM) if number == 1 else text)


def lines_of(blocks: Iterable[bytes], *, limit: int = MAX_LINE_BYTES) -> Iterator[Line]:
    """The lines of a stream of byte blocks, each decoded as UTF-8 (a line that is not: ``utf8``
    false); a line past ``limit`` bytes as ``Line(n, None)``."""
    number, held, skipping = 0, bytearray(), False
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
                yield Line(number, None)
                held.clear()
                skipping = False
            else:
                held += block[start : end + 1]
                yield _line(number, bytes(held))
                held.clear()
            start = end + 1
    if skipping:
        yield Line(number + 1, None)
    elif held:
        yield _line(number + 1, bytes(held))


NOT_UTF8 = "the line is not UTF-8 text"
TOO_LONG = f"the line is longer than {MAX_LINE_BYTES:,} bytes"


def _clipped(text: str) -> str:
    return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")[:1000]


def jsonl_rows(lines: Iterable[Line]) -> Iterator[Row]:
    """JSON lines: every line that is not blank is a row (its text, read later by the message rules)."""
    position = 0
    for line in lines:
        if line.text is None:
            value: object = Unreadable(TOO_LONG)
        elif not line.text.strip():
            continue
        elif not line.utf8:
            value = Unreadable(NOT_UTF8, _clipped(line.text))
        else:
            value = line.text.rstrip("\r\n")
        yield Row(position, line.number, value)
        position += 1


def csv_rows(lines: Iterable[Line]) -> Iterator[Row]:
    """CSV: the header first (``UnreadableInput`` when it lacks a required column), then each record a
    row of its cells by column, on the line it starts on; a blank line is none."""
    bad: list[Unreadable] = []  # an over-long line of the record being read

    def texts() -> Iterator[str]:  # one a physical line: the reader's line_num is the line number
        for line in lines:
            if line.text is None:
                bad.append(Unreadable(TOO_LONG))
                yield "\n"
            else:
                if not line.utf8:
                    bad.append(Unreadable(NOT_UTF8, _clipped(line.text)))
                yield line.text

    reader = csv.reader(texts(), strict=True)
    try:
        header = check_header(next(reader))
    except StopIteration:
        raise UnreadableInput("the CSV object is empty: it needs a header naming sensor_id and timestamp") from None
    except csv.Error as exc:
        raise UnreadableInput(f"the CSV header cannot be read: {exc}") from None
    position, start = 0, reader.line_num
    while True:
        bad.clear()
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            value: object = Unreadable(f"the CSV record breaks RFC 4180: {exc}")
        else:
            if bad:
                value = bad[0]
            elif not cells:
                start = reader.line_num
                continue
            elif len(cells) != len(header):
                value = Unreadable(
                    f"the CSV record has {len(cells)} cells, the header {len(header)}", _clipped(",".join(cells))
                )
            else:
                value = dict(zip(header, cells, strict=True))
        yield Row(position, start + 1, value)
        position += 1
        start = reader.line_num


def rows_of(lines: Iterable[Line], fmt: str) -> Iterator[Row]:
    """The rows of an object in format ``fmt`` (``rows.JSONL`` or ``rows.CSV``)."""
    return csv_rows(lines) if fmt == CSV else jsonl_rows(lines)
