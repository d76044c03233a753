"""``send``: reports to the ingest queue, checked first with the ingest's own rules (the message
schema, the day, and where the pipeline's table is known the sensor's registration); stopped on the
way, it says how far it got and how to send the rest."""

from __future__ import annotations

import json
import math
import re
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, tzinfo
from typing import Annotated, Any

import typer
from botocore.exceptions import BotoCoreError, ClientError

from sensor_digest import timestamps, zones
from sensor_digest.errors import MalformedItem, RejectedMessage, StoreFault
from sensor_digest.messages import READING_RULE, read_pending
from sensor_digest.registry import Registry
from sensor_digest_tools.cli.options import (
    PLAIN,
    QueueUrl,
    Region,
    Sensor,
    Stack,
    TableOpt,
)
from sensor_digest_tools.cli.output import errors, fail, note, resolve_target, say, told_on_stop
from sensor_digest_tools.ops.producer import batch_entry, is_fifo
from sensor_digest_tools.ops.targets import Target

commands = typer.Typer(**PLAIN)  # send, at the command line's top level (app.py)


@commands.command()
def send(
    sensor: Sensor,
    count: Annotated[int, typer.Option(min=1, max=1_000_000, help="Data points in the report.")] = 1,
    timestamp: Annotated[
        str | None,
        typer.Option(
            help="ISO-8601 date or time (2024-05-01, 2024-05-01T09:00:00Z), or epoch seconds written as a JSON "
            "number of 9 digits or more (1714557600; a smaller number such as 2024 is refused: it looks like a "
            "year); default: the time SQS receives it."
        ),
    ] = None,
    event_id: Annotated[str | None, typer.Option(help="The producer's id of the report.")] = None,
    reading: Annotated[
        list[str] | None,
        typer.Option(
            "--reading",
            help="A value the sensor measured, name=value (temperature=21.5), repeatable (at most 8 names): "
            "sent as the JSON number written, checked by the ingest's rule.",
        ),
    ] = None,
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
    table: TableOpt = None,
) -> None:
    """Send sensor reports to the ingest queue, checked first with the ingest's own rules: the message
    schema and the day always; the sensor's registration where the pipeline's table is known (the
    local pipeline, --stack, --table), refused where the pipeline rejects unregistered sensors.

    To a FIFO queue (ordered mode) each report goes in its sensor's message group, with its event id
    as deduplication id; a report without --event-id gets a fresh one. Stopped on the way (Ctrl-C, an
    endpoint that stops answering), it says on stderr how many reports went out and how to send the rest."""
    ids = [event_id if repeat == 1 or event_id is None else f"{event_id}-{i}" for i in range(repeat)]
    readings = parse_readings(reading or [])
    bodies = [_report(sensor, count, timestamp, given, readings) for given in ids]  # refused here, before any queue
    with errors():
        target = resolve_target(stack, region, queue_url=queue_url, table=table).need("queue_url")
        zone = check_registration(target, sensor)
        if zone is not None:  # the day in the sensor's own zone, as the ingest dates it
            bodies = [_report(sensor, count, timestamp, given, readings, zone) for given in ids]
        fifo = is_fifo(str(target.queue_url))
        if fifo and event_id is None:  # the deduplication id is the event id: every report needs one
            bodies = [_report(sensor, count, timestamp, uuid.uuid4().hex, readings) for _ in ids]
        sqs = target.sqs()
        progress = Progress(total=len(bodies))
        with told_on_stop(lambda: progress.stopped(sensor, event_id, fifo)):
            for start in range(0, len(bodies), 10):  # SendMessageBatch: ten reports a request
                entries = [
                    batch_entry(str(i), b, fifo=fifo, fallback_id=uuid.uuid4().hex)
                    for i, b in enumerate(bodies[start : start + 10])
                ]
                progress.under_way = len(entries)
                response = sqs.send_message_batch(QueueUrl=target.queue_url, Entries=entries)
                progress.under_way = 0
                if response.get("Failed"):
                    failed = response["Failed"][0]
                    fail(
                        f"SQS refused a report after {progress.sent + len(response.get('Successful', []))} sent: "
                        f"{failed.get('Code')}: {failed.get('Message')}"
                    )
                progress.sent += len(response.get("Successful", []))
        say(f"sent {progress.sent} report(s) for sensor {sensor} to {target.queue_url}")


@dataclass
class Progress:
    """How far a send got: reports SQS took, and those of the request under way (unknown fate)."""

    total: int
    sent: int = 0
    under_way: int = 0

    def stopped(self, sensor: int, event_id: str | None, fifo: bool) -> str:
        """What a send stopped on the way says: how far it got, and how to send the rest safely."""
        line = f"stopped: {self.sent} of {self.total} report(s) for sensor {sensor} sent"
        if self.under_way:
            line += f", and the request of {self.under_way} under way may or may not have reached the queue"
        if event_id is not None:
            return (
                f"{line}. They carry event ids ({_ids(event_id, self.total)}): run the same command again to "
                "send the rest; the ingest counts each event id once, so a report sent twice counts once."
            )
        rest = self.total - self.sent
        kind = "fresh event ids" if fifo else "no event id"
        return (
            f"{line}. They carry {kind}: a report sent again would count again, so send only the rest "
            f"(--repeat {rest}){' and check the counts for the request under way' if self.under_way else ''}; "
            "give --event-id next time, so that sending again is safe."
        )


def _ids(event_id: str, total: int) -> str:
    return event_id if total == 1 else f"{event_id}-0 to {event_id}-{total - 1}"


def check_registration(target: Target, sensor: int) -> tzinfo | None:
    """The sensor's registered zone (to date its reports as the ingest does), where the target names the
    pipeline's table; a report the pipeline would reject for the registry is refused (UNKNOWN_SENSORS=reject,
    which the local pipeline and the app's stack say), or noted where the target does not say its setting."""
    if not target.table:
        return None
    try:
        profile = Registry(table_name=str(target.table), ledger_table_name="", client=target.dynamodb()).get(sensor)
    except MalformedItem as bad:
        fail(f"the ingest would reject this report: sensor {sensor}'s profile cannot be read ({bad})")
    except (StoreFault, ClientError, BotoCoreError) as exc:
        note(f"the registry could not be read ({exc}): sensor {sensor}'s registration was not checked")
        return None
    if profile is not None:
        return zones.load(profile.timezone)
    register = f"register it first: sensor-digest sensors register --sensor {sensor} --name ... --serial ..."
    if target.unknown_sensors == "reject":
        fail(
            f"the ingest would reject this report: sensor {sensor} is not registered (UNKNOWN_SENSORS=reject); "
            f"{register}"
        )
    if target.unknown_sensors is None:
        note(
            f"sensor {sensor} is not registered: a pipeline with UNKNOWN_SENSORS=reject puts its reports in the "
            f"dead-letter queue ({target.origin} target does not say which it is); {register}"
        )
    return None


JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
"""A number as JSON writes it (ASCII digits only): what a body's epoch-seconds ``timestamp`` is."""


def _timestamp_value(text: str) -> str | int | float:
    """``--timestamp`` as the body carries it: a JSON number (epoch seconds, negative too) when the
    text is one, else the text itself, which the ingest reads as ISO-8601 (or refuses). A number
    closer to 0 than ``timestamps.EPOCH_FLOOR`` is refused (``timestamps.small_epoch``)."""
    if not JSON_NUMBER.fullmatch(text):
        return text
    try:
        number: int | float = json.loads(text)
    except ValueError:  # more digits than Python converts (4,300): no epoch second is that long
        raise typer.BadParameter(f"--timestamp {text[:20]}... is no epoch time: {len(text)} digits") from None
    if not math.isfinite(number):  # 1e309: a float JSON cannot carry
        raise typer.BadParameter(f"--timestamp {text} is not a finite number of epoch seconds")
    refused = timestamps.small_epoch(text, number, "--timestamp")
    if refused is not None:
        raise typer.BadParameter(refused)
    return number


READING_TEXT_MAX = 64
"""The longest ``--reading`` value read as a number (a value within the ingest's rule has at most 15
significant digits; longer text is refused before JSON would read thousands of digits)."""


def parse_readings(given: list[str]) -> list[tuple[str, str]]:
    """``--reading name=value`` options as (name, the value's text): each value a JSON number as
    written (its text is what the body carries, never a float's), each name once. The name and the
    value's range are the ingest's to judge (``_report``)."""
    readings: dict[str, str] = {}
    for option in given:
        name, equals, value = option.partition("=")
        if not equals:
            raise typer.BadParameter(f"{_shown(option)} is no name=value (temperature=21.5)", param_hint="--reading")
        if len(value) > READING_TEXT_MAX or not JSON_NUMBER.fullmatch(value):
            what = f"has {len(value):,} characters" if len(value) > READING_TEXT_MAX else "is no JSON number (21.5, -3)"
            raise typer.BadParameter(
                f"{_shown(option)}: the value {what}; a reading is {READING_RULE}", param_hint="--reading"
            )
        if name in readings:
            raise typer.BadParameter(f"{_shown(name)} is given twice: one value a name", param_hint="--reading")
        readings[name] = value
    return list(readings.items())


def _shown(text: str) -> str:
    """Text a person typed, as a refusal repeats it: quoted, escaped, clipped."""
    shown = json.dumps(text)
    return shown if len(shown) <= 42 else f'{shown[:39]}..."'


def _report(
    sensor: int,
    count: int,
    timestamp: str | None,
    event_id: str | None,
    readings: list[tuple[str, str]] | None = None,
    zone: tzinfo = UTC,
) -> str:
    """One report body, refused here with the ingest's own reason if the ingest would refuse it (its
    day in ``zone``: the sensor's registered zone where it is known). Its readings' values are the
    JSON numbers given, written into the body as they are (``parse_readings`` checked their text)."""
    body: dict[str, Any] = {"sensor_id": sensor, "count": count}
    if timestamp is not None:
        body["timestamp"] = _timestamp_value(timestamp)
    if event_id is not None:
        body["event_id"] = event_id
    text = json.dumps(body)
    if readings:
        members = ", ".join(f"{json.dumps(name)}: {value}" for name, value in readings)
        text = f'{text[:-1]}, "readings": {{{members}}}}}'
    try:
        read_pending(message_id="cli", body=text, sent_timestamp=str(int(time.time() * 1000))).in_zone(zone)
    except RejectedMessage as rejection:
        raise typer.BadParameter(f"the ingest would reject this report: {rejection.reason}") from None
    return text
