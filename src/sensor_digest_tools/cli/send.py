"""``send``: reports to the ingest queue, checked first with the ingest's own rules."""

from __future__ import annotations

import json
import math
import re
import time
import uuid
from datetime import UTC
from typing import Annotated, Any

import typer

from sensor_digest.errors import RejectedMessage
from sensor_digest.messages import read_pending
from sensor_digest_tools.cli.apps import app
from sensor_digest_tools.cli.options import (
    QueueUrl,
    Region,
    Sensor,
    Stack,
)
from sensor_digest_tools.cli.output import errors, fail, resolve_target, say
from sensor_digest_tools.ops.producer import batch_entry, is_fifo


@app.command()
def send(
    sensor: Sensor,
    count: Annotated[int, typer.Option(min=1, max=1_000_000, help="Data points in the report.")] = 1,
    timestamp: Annotated[
        str | None,
        typer.Option(
            help="ISO-8601 time, or epoch seconds written as a JSON number (so 2024 is 1970-01-01T00:33:44Z, "
            "not the year); default: the time SQS receives it."
        ),
    ] = None,
    event_id: Annotated[str | None, typer.Option(help="The producer's id of the report.")] = None,
    repeat: Annotated[
        int,
        typer.Option(
            min=1,
            max=10_000,
            help="Send this many reports, each its own (with --event-id X their ids are X-0, X-1, ...; "
            "to send one report again, run send again with the same --event-id).",
        ),
    ] = 1,
    stack: Stack = None,
    region: Region = None,
    queue_url: QueueUrl = None,
) -> None:
    """Send sensor reports to the ingest queue (checked first with the ingest's own rules).

    To a FIFO queue (ordered mode) each report goes in its sensor's message group, with its event id
    as deduplication id; a report without --event-id gets a fresh one."""
    ids = [event_id if repeat == 1 or event_id is None else f"{event_id}-{i}" for i in range(repeat)]
    bodies = [_report(sensor, count, timestamp, given) for given in ids]  # refused here, before any queue
    with errors():
        target = resolve_target(stack, region, queue_url=queue_url).need("queue_url")
        fifo = is_fifo(str(target.queue_url))
        if fifo and event_id is None:  # the deduplication id is the event id: every report needs one
            bodies = [_report(sensor, count, timestamp, uuid.uuid4().hex) for _ in ids]
        sqs = target.sqs()
        sent = 0
        for start in range(0, len(bodies), 10):  # SendMessageBatch: ten reports a request
            entries = [
                batch_entry(str(i), b, fifo=fifo, fallback_id=uuid.uuid4().hex)
                for i, b in enumerate(bodies[start : start + 10])
            ]
            response = sqs.send_message_batch(QueueUrl=target.queue_url, Entries=entries)
            if response.get("Failed"):
                failed = response["Failed"][0]
                fail(
                    f"SQS refused a report after {sent + len(response.get('Successful', []))} sent: "
                    f"{failed.get('Code')}: {failed.get('Message')}"
                )
            sent += len(response.get("Successful", []))
        say(f"sent {sent} report(s) for sensor {sensor} to {target.queue_url}")


JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
"""A number as JSON writes it (ASCII digits only): what a body's epoch-seconds ``timestamp`` is."""


def _timestamp_value(text: str) -> str | int | float:
    """``--timestamp`` as the body carries it: a JSON number (epoch seconds, negative too) when the
    text is one, else the text itself, which the ingest reads as ISO-8601 (or refuses)."""
    if not JSON_NUMBER.fullmatch(text):
        return text
    try:
        number: int | float = json.loads(text)
    except ValueError:  # more digits than Python converts (4,300): no epoch second is that long
        raise typer.BadParameter(f"--timestamp {text[:20]}... is no epoch time: {len(text)} digits") from None
    if not math.isfinite(number):  # 1e309: a float JSON cannot carry
        raise typer.BadParameter(f"--timestamp {text} is not a finite number of epoch seconds")
    return number


def _report(sensor: int, count: int, timestamp: str | None, event_id: str | None) -> str:
    """One report body, refused here with the ingest's own reason if the ingest would refuse it."""
    body: dict[str, Any] = {"sensor_id": sensor, "count": count}
    if timestamp is not None:
        body["timestamp"] = _timestamp_value(timestamp)
    if event_id is not None:
        body["event_id"] = event_id
    text = json.dumps(body)
    try:
        read_pending(message_id="cli", body=text, sent_timestamp=str(int(time.time() * 1000))).in_zone(UTC)
    except RejectedMessage as rejection:
        raise typer.BadParameter(f"the ingest would reject this report: {rejection.reason}") from None
    return text
