"""The deployed import's state machine, run by hand: the prepare step; the read map, one item per chunk
the prepare step wrote to the run's ``chunks.json`` (the Map's S3 JSON item reader), each with the
prepare step's answer (its ``ItemSelector``); the count map, one item per partition (``ItemsPath``
over ``partitions``); an item that fails tried again (the Map's retry); then the finish step."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def tried(step: Handler, event: dict[str, Any], context: Any, tries: int) -> dict[str, Any]:
    for attempt in range(tries):
        try:
            return step(event, context)
        except Exception:
            if attempt + 1 == tries:
                raise
    raise AssertionError("unreachable")


def chunks(s3: Any, prepared: dict[str, Any]) -> list[dict[str, int]]:
    """The read map's items, as its item reader finds them."""
    body = s3.get_object(Bucket=prepared["run"]["bucket"], Key=prepared["chunks"])["Body"].read()
    items: list[dict[str, int]] = json.loads(body)
    return items


def run(
    s3: Any,
    steps: tuple[Handler, Handler, Handler, Handler],
    started: dict[str, Any],
    *,
    tries: int = 3,
    context: Any = None,
) -> dict[str, Any]:
    """The state machine (``steps``: prepare, read, count, finish) on ``started``: prepare's answer when it
    skips or refuses the object, else finish's, with prepare's as ``prepared``."""
    prepare, read, count, finish = steps
    prepared = prepare({"run": "run-1", **started}, context)
    if prepared["action"] != "import":
        return prepared
    for chunk in chunks(s3, prepared):
        tried(read, {"chunk": chunk, "prepared": prepared}, context, tries)
    for partition in prepared["partitions"]:
        tried(count, {"partition": partition, "prepared": prepared}, context, tries)
    return {**finish({"prepared": prepared}, context), "prepared": prepared}
