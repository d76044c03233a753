"""``demo``, ``up`` and ``env``: the whole pipeline on this machine, and how other clients reach it."""

from __future__ import annotations

import os
import shlex
import time
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sensor_digest import zones
from sensor_digest.config import DeliveryMode, LedgerMode, QueueType
from sensor_digest.errors import UnknownTimeZone
from sensor_digest.silence.rules import wording
from sensor_digest_tools.aws.session import LOCAL_CREDENTIALS, LOCAL_REGION
from sensor_digest_tools.cli import render
from sensor_digest_tools.cli.options import PLAIN, Days
from sensor_digest_tools.cli.output import console, errors, fail, note, notes, stopped_by_signals
from sensor_digest_tools.ops.dlq import queue_depth
from sensor_digest_tools.ops.targets import (
    Target,
    TargetError,
    clear_local,
    events_file,
    running_local,
    save_local,
)

if TYPE_CHECKING:
    from sensor_digest.silence.check import SilencePage
    from sensor_digest_tools.local.pipeline import PipelineOptions

commands = typer.Typer(**PLAIN)  # demo, up and env, at the command line's top level (app.py)

Verbose = Annotated[bool, typer.Option(help="Show the handlers' logs.")]  # demo's and up's


@commands.command()
def demo(
    messages: Annotated[int, typer.Option(min=1, help="Sensor reports to send.")] = 5000,
    sensors: Annotated[int, typer.Option(min=1, help="Distinct sensors.")] = 20,
    days: Days = 3,
    duplicate_rate: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of deliveries SQS repeats.")] = 0.1,
    poison_rate: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Share of reports that break the schema.")
    ] = 0.01,
    fault_rate: Annotated[
        float, typer.Option(min=0.0, max=0.5, help="Share of the pipeline's DynamoDB writes throttled.")
    ] = 0.01,
    seed: Annotated[int, typer.Option(help="Random seed of the traffic and the faults.")] = 7,
    mode: Annotated[DeliveryMode, typer.Option(help="How ingest counts.")] = DeliveryMode.EXACTLY_ONCE,
    queue: Annotated[
        QueueType,
        typer.Option(help="standard, or fifo: ordered mode (a group per sensor, batches of at most 10, no ledger)."),
    ] = QueueType.STANDARD,
    batch_size: Annotated[int, typer.Option(min=1, max=10_000, help="SQS batch size (fifo: at most 10).")] = 100,
    verbose: Verbose = False,
) -> None:
    """Run the whole pipeline locally on synthetic traffic and check every count against the truth."""

    from sensor_digest_tools.local.demo import DemoOptions, run_demo

    options = DemoOptions(
        messages=messages,
        sensors=sensors,
        days=days,
        duplicate_rate=duplicate_rate,
        poison_rate=poison_rate,
        fault_rate=fault_rate,
        seed=seed,
        delivery_mode=mode,
        queue_type=queue,
        batch_size=batch_size,
        engine_endpoint=os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"),
        verbose=verbose,
    )
    if options.engine_endpoint:  # told before the progress bar is drawn: one line when nothing answers there
        from sensor_digest_tools.aws.dynamodb_local import check_engine

        with errors():
            check_engine(options.engine_endpoint)
    with (
        errors(),
        Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=notes,  # progress is not the result: stderr
            transient=False,
        ) as bar,
    ):
        task = bar.add_task("messages handled", total=messages)
        result = run_demo(options, progress=lambda done, total: bar.update(task, completed=done, total=total))
    console.print(*render.demo(result), sep="\n")
    if not result.ok:
        raise typer.Exit(1)


class UnknownSensors(StrEnum):
    ACCEPT = "accept"
    REJECT = "reject"


def _zone(name: str) -> str:
    """``--timezone``: a zone of the tzdata the functions ship (as ``DIGEST_TIMEZONE`` must be)."""
    try:
        return zones.check(name)
    except UnknownTimeZone as exc:
        raise typer.BadParameter(exc.reason) from None


@commands.command()
def up(
    duration: Annotated[
        float, typer.Option(min=0, help="Stop after this many seconds, 0 or more (0: run until Ctrl-C).")
    ] = 0,
    mode: Annotated[DeliveryMode, typer.Option(envvar="DELIVERY_MODE", help="How ingest counts.")] = (
        DeliveryMode.EXACTLY_ONCE
    ),
    ledger_mode: Annotated[
        LedgerMode,
        typer.Option(
            envvar="LEDGER_MODE",
            help="How exactly-once ingest remembers what it counted: identity hashes in the day item and ledger "
            "pages, or a marker per message (docs/exactly-once.md).",
        ),
    ] = LedgerMode.COMPACT,
    unknown_sensors: Annotated[
        UnknownSensors,
        typer.Option(
            envvar="UNKNOWN_SENSORS",
            help="What ingest does with a report of a sensor the registry does not know: count it in --timezone, "
            "or reject it to the dead-letter queue.",
        ),
    ] = UnknownSensors.ACCEPT,
    timezone: Annotated[
        str,
        typer.Option(
            envvar="DIGEST_TIMEZONE",
            metavar="ZONE",
            callback=_zone,
            help="IANA time zone the days of unregistered sensors are counted in (a registered one has its own).",
        ),
    ] = "UTC",
    dynamodb_port: Annotated[
        int | None, typer.Option(min=1, max=65535, metavar="PORT", help="DynamoDB Local's port (default: a free one).")
    ] = None,
    sqs_port: Annotated[
        int | None,
        typer.Option(min=1, max=65535, metavar="PORT", help="The SQS endpoint's port (default: a free one)."),
    ] = None,
    api_port: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=65535,
            metavar="PORT",
            help="The read API's port on 127.0.0.1, and its page (default: a free one).",
        ),
    ] = None,
    silence_hours: Annotated[
        int,
        typer.Option(
            envvar="SILENCE_HOURS",
            min=0,
            max=720,
            metavar="HOURS",
            help="The default silence threshold (the stack's silenceHours); 0: only sensors with their own.",
        ),
    ] = 0,
    silence_every: Annotated[
        float,
        typer.Option(metavar="SECONDS", help="Run the silence check this often: 0 (never), or 1 to 86,400."),
    ] = 60,
    verbose: Verbose = False,
) -> None:
    """Keep a local pipeline running (engine, queue, both handlers, the read API) for send/counts/summary/dlq.

    The ingest's settings come from the options, or else from the variables the ingest function
    reads (DELIVERY_MODE, LEDGER_MODE, UNKNOWN_SENSORS, DIGEST_TIMEZONE). The settings for your own client go to
    stdout (`sensor-digest up > env.sh`), everything else to stderr."""

    from sensor_digest_cdk.shape import PipelineShape
    from sensor_digest_cdk.workable import not_applying
    from sensor_digest_tools.local.pipeline import LocalPipeline, PipelineOptions

    if silence_every != 0 and not 1 <= silence_every <= 86_400:  # nan and inf fail both
        raise typer.BadParameter(f"{silence_every:g} is neither 0 nor 1 to 86400", param_hint="--silence-every")
    engine_endpoint = os.environ.get("AWS_ENDPOINT_URL_DYNAMODB")
    if dynamodb_port is not None and engine_endpoint:
        raise typer.BadParameter(
            f"AWS_ENDPOINT_URL_DYNAMODB={engine_endpoint} names an engine to use, and --dynamodb-port "
            "asks to start one: unset the one or drop the other",
            param_hint="--dynamodb-port",
        )
    given = {"--dynamodb-port": dynamodb_port, "--sqs-port": sqs_port, "--api-port": api_port}
    for later, (hint, port) in enumerate(list(given.items())[1:], start=1):
        clash = next((name for name, p in list(given.items())[:later] if port is not None and p == port), None)
        if clash is not None:
            raise typer.BadParameter(f"{port} is {clash} too: each needs its own", param_hint=hint)
    with errors():
        try:
            other = running_local()
        except TargetError:  # a stale state file, now removed: nothing runs
            other = None
        if other is not None:
            fail(
                f"a local pipeline is already running (process {other.pid}, queue {other.queue_url}); "
                f"stop it first, or give this one its own state file with SENSOR_DIGEST_STATE=<path>"
            )
        shape = PipelineShape(
            delivery_mode=mode.value,  # type: ignore[arg-type]
            ledger_mode=ledger_mode.value,  # type: ignore[arg-type]
            unknown_sensors=unknown_sensors.value,  # type: ignore[arg-type]
            digest_timezone=timezone,
            silence_hours=silence_hours,
        )
        option = {"ledger_mode": "--ledger-mode", "delivery_mode": "--mode"}
        skipped = not_applying(shape, lambda name: option.get(name, name))
        if "ledger_mode" in skipped:  # refused as the stack refuses the context key (LEDGER_MODE counts as given)
            raise typer.BadParameter(
                f"{ledger_mode.value} does not apply: {skipped['ledger_mode']}", param_hint="--ledger-mode"
            )
        options = PipelineOptions(
            shape=shape,
            silence_every=silence_every,
            dynamodb_port=dynamodb_port or 0,
            sqs_port=sqs_port or 0,
            api=True,
            api_port=api_port or 0,
            verbose=verbose,
            sqs="server",
            events_file=str(events_file()),
        )
        pipeline = LocalPipeline(options, engine_endpoint=engine_endpoint)
        pipeline.on_silence = SilenceNotes()
        target: Target | None = None
        with stopped_by_signals():
            try:
                target = replace(pipeline.start(), pid=os.getpid())
                path = save_local(target)
                _tell_up(target, options, path)
                typer.echo(client_settings(target))
                deadline = time.monotonic() + duration if duration > 0 else None
                while deadline is None or time.monotonic() < deadline:
                    time.sleep(0.2)
            except KeyboardInterrupt:
                pass
            finally:
                clear_local(pid=os.getpid())
                if target is not None:  # it ran: what it still held goes with it, and is said
                    note(dropped_on_stop(pipeline.sqs(), str(target.queue_url), str(target.dlq_url)))
                pipeline.stop()


class SilenceNotes:
    """What `up` says of each silence check: a line on stderr whenever the silent sensors change."""

    def __init__(self) -> None:
        self._last: list[tuple[int, str | None]] | None = None

    def __call__(self, found: SilencePage) -> None:
        now = [(s.sensor_id, s.last_report_hour) for s in found.silent]
        if now == self._last:
            return
        self._last = now
        if not found.silent:
            note(f"silence check: no registered sensor is silent ({found.checked} checked)")
            return
        shown = "; ".join(f"{s.sensor_id} ({wording(s.as_json())})" for s in found.silent[:10])
        more = f"; and {len(found.silent) - 10} more" if len(found.silent) > 10 else ""
        unchecked = f"; {len(found.unchecked)} left unchecked (their reads failed)" if found.unchecked else ""
        note(
            f"silence check: {len(found.silent)} of {found.checked} registered sensor(s) silent: {shown}{more}"
            f"{unchecked} (sensor-digest silence)"
        )


def _tell_up(target: Target, options: PipelineOptions, path: Path) -> None:
    """What runs where, on stderr (stdout gets only the client's settings)."""
    shape = options.shape
    unknown = "rejected" if shape.unknown_sensors == "reject" else f"counted in {shape.digest_timezone}"
    note(f"local pipeline up: DynamoDB {target.dynamodb_endpoint}, SQS {target.sqs_endpoint}")
    note(f"queue {target.queue_url}")
    note(f"tables {target.table}, {target.ledger}")
    note(f"read API {target.api_url} (loopback only; its page: {target.api_url}/)")
    counting = options.delivery_mode.value
    if options.delivery_mode is DeliveryMode.EXACTLY_ONCE and options.queue_type is QueueType.STANDARD:
        counting += f" ({shape.ledger_mode} ledger)"
    note(f"ingest: {counting}, reports of unregistered sensors {unknown}")
    if options.silence_every > 0:
        default = f"{shape.silence_hours} h by default" if shape.silence_hours else "sensors' own thresholds only"
        note(f"silence check every {options.silence_every:g} s ({default}); it says here when sensors fall silent")
    note(f"state {path}")
    note("other commands now act on it; Ctrl-C (or SIGTERM, SIGHUP) stops it")
    note(CLIENT_NOTE)
    note("for your own client, in a shell (`sensor-digest env` repeats it):")


def dropped_on_stop(sqs: Any, queue_url: str, dlq_url: str) -> str:
    """What stopping a local pipeline drops, in one line: everything lives in memory, so the reports
    accepted and not yet counted (in the ingest queue, visible or in flight) and the dead letters go
    with it. SQS's approximate counts, best effort: a queue that does not answer is said so."""
    waiting, dead = queue_depth(sqs, queue_url), queue_depth(sqs, dlq_url)
    if waiting is None or dead is None:
        return "stopping: the queues did not say what they held; whatever they held is gone with them"
    if waiting == 0 and dead == 0:
        return "stopping: nothing was waiting (every report accepted was counted or kept, no dead letter)"
    return (
        f"stopping drops {waiting} report(s) accepted but not yet counted and {dead} dead letter(s): the local "
        "pipeline keeps everything in memory. To keep them, stop once `sensor-digest counts` shows the reports and "
        "the dead letters are saved (`sensor-digest dlq list --json > letters.json`)"
    )


CLIENT_NOTE = (
    "your own client: boto3 and the SDKs that read AWS_ENDPOINT_URL_<SERVICE> need only these exports; the AWS "
    "CLI v1 (pip install awscli) sends `aws sqs` to queue.amazonaws.com whatever AWS_ENDPOINT_URL_SQS says: give it "
    '--endpoint-url "$AWS_ENDPOINT_URL_SQS" (the AWS CLI v2 reads the variables from 2.13 on; --endpoint-url works on '
    "every version); curl and a browser take $SENSOR_DIGEST_API_URL, unsigned"
)
"""What each kind of client needs of the exports (docs/local-development.md says it at length)."""


def client_settings(target: Target) -> str:
    """Shell exports that point the AWS CLI or any SDK at a local pipeline: its region and
    credentials (DynamoDB Local keeps one database per access key and region, so a client with
    other credentials would see other, empty tables), both endpoints, and the resources."""
    values = {
        "AWS_REGION": LOCAL_REGION,
        "AWS_DEFAULT_REGION": LOCAL_REGION,
        "AWS_ACCESS_KEY_ID": LOCAL_CREDENTIALS["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": LOCAL_CREDENTIALS["aws_secret_access_key"],
        "AWS_ENDPOINT_URL_SQS": target.sqs_endpoint,
        "AWS_ENDPOINT_URL_DYNAMODB": target.dynamodb_endpoint,
        "SENSOR_DIGEST_QUEUE_URL": target.queue_url,
        "SENSOR_DIGEST_DLQ_URL": target.dlq_url,
        "SENSOR_DIGEST_TABLE": target.table,
        "SENSOR_DIGEST_LEDGER": target.ledger,
        "SENSOR_DIGEST_API_URL": target.api_url,
    }
    return "\n".join(f"export {name}={shlex.quote(str(value))}" for name, value in values.items() if value)


@commands.command()
def env() -> None:
    """Print shell exports for your own client against the running local pipeline (`eval "$(sensor-digest env)"`)."""
    with errors():
        target = running_local()
        if target is None or not target.local:
            fail("no local pipeline runs: start one with `sensor-digest up`")
        typer.echo(client_settings(target))
    note(CLIENT_NOTE)  # stderr: `eval "$(sensor-digest env)"` reads the exports alone
