"""The deployed import's state machine, run by hand: the prepare step, a Distributed Map over the
object's rows (the item readers as AWS documents them: a JSON line is its parsed value, a blank line
is no item; a CSV record is an object of its header's columns, every cell text), its batches
handed to the batch function in Lambda's event shape (ItemReader + ItemBatcher: ``{"Items": [...],
"BatchInput": {...}}``), a batch that fails tried again (the Map's retry), then the finish step."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from typing import Any

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def items_of(data: bytes, fmt: str) -> list[Any]:
    """The Map's items of an object: ``ValueError`` where its JSON lines reader stops (a line not JSON)."""
    text = data.decode("utf-8")
    if fmt == "csv":
        return list(csv.DictReader(io.StringIO(text, newline="")))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def batch_events(prepared: dict[str, Any], items: list[Any], size: int) -> Iterator[dict[str, Any]]:
    """The batches as the ItemBatcher hands them over: ``ItemSelector`` gave each item its index
    (``$$.Map.Item.Index``) and value, and every batch carries the same ``BatchInput``."""
    given = {k: prepared[k] for k in ("object_id", "format", "lines", "reports")}
    for start in range(0, len(items), size):
        chosen = [{"position": i, "row": items[i]} for i in range(start, min(start + size, len(items)))]
        yield {"Items": chosen, "BatchInput": given}


def run(
    prepare: Handler,
    batch: Handler,
    finish: Handler,
    data: bytes,
    started: dict[str, Any],
    *,
    size: int = 100,
    tries: int = 3,
    context: Any = None,
) -> dict[str, Any]:
    """The state machine over ``data`` (the object's bytes, as S3 holds them): prepare's answer when it
    skips or refuses the object, else finish's, with prepare's as ``prepared``."""
    prepared = prepare(started, context)
    if prepared["action"] != "import":
        return prepared
    for event in batch_events(prepared, items_of(data, prepared["format"]), size):
        for attempt in range(tries):
            try:
                batch(event, context)
                break
            except Exception:
                if attempt + 1 == tries:
                    raise
    return {**finish({"prepared": prepared}, context), "prepared": prepared}
