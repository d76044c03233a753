"""``sensor-digest``: the local pipeline and the commands that act on it or on a deployed stack."""

from __future__ import annotations

import json
import math
import os
import shlex
import signal
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from datetime import UTC, date
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from sensor_digest.config import DeliveryMode, QueueType
from sensor_digest.errors import RejectedMessage, SensorDigestError
from sensor_digest.messages import read_pending
from sensor_digest.registry import Registry, SensorProfile
from sensor_digest.store import reads, schema
from sensor_digest_tools.aws.dynamodb_local import EngineError
from sensor_digest_tools.aws.session import LOCAL_CREDENTIALS, LOCAL_REGION
from sensor_digest_tools.cli import render
from sensor_digest_tools.ops.dlq import list_dead_letters, redrive, stamp
from sensor_digest_tools.ops.producer import batch_entry, is_fifo
from sensor_digest_tools.ops.targets import Target, TargetError, clear_local, resolve, running_local, save_local

app = typer.Typer(
    help="SensorDigest: exact per-sensor daily counts from SQS into DynamoDB, on a laptop or on AWS.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
dlq_app = typer.Typer(help="Inspect the dead-letter queue, or redrive it to the queue.", no_args_is_help=True)
app.add_typer(dlq_app, name="dlq")
summary_app = typer.Typer(help="A sensor's summary, or rebuild summaries from the day items.")
app.add_typer(summary_app, name="summary")
sensors_app = typer.Typer(help="The sensor registry: profiles, unique serials, time zones.", no_args_is_help=True)
app.add_typer(sensors_app, name="sensors")
console = render.console()
T = TypeVar("T")

Stack = Annotated[str | None, typer.Option("--stack", help="A deployed stack: its outputs name the resources.")]
Region = Annotated[str | None, typer.Option("--region", help="AWS region of the stack (default: your AWS config).")]
QueueUrl = Annotated[str | None, typer.Option("--queue-url", help="The ingest queue, instead of --stack.")]
DlqUrl = Annotated[str | None, typer.Option("--dlq-url", help="The dead-letter queue, instead of --stack.")]
TableOpt = Annotated[str | None, typer.Option("--table", help="The digest table, instead of --stack.")]
LedgerOpt = Annotated[str | None, typer.Option("--ledger", help="The ledger table, instead of --stack.")]
Sensor = Annotated[int, typer.Option("--sensor", min=0, max=2**53 - 1, help="The sensor id.")]
AsJson = Annotated[bool, typer.Option("--json", help="Machine-readable: the result as JSON on stdout.")]


def _print_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, sort_keys=True))


def _date(value: str) -> str:
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a date (YYYY-MM-DD)") from None


@contextmanager
def _errors() -> Iterator[None]:
    """Every expected failure becomes one clear line and exit code 1."""
    try:
        yield
    except (TargetError, EngineError, SensorDigestError) as exc:  # registry refusals and DynamoDB faults
        _fail(str(exc))
    except EndpointConnectionError as exc:
        _fail(
            f"nothing answers at {exc.kwargs.get('endpoint_url')}: is the local pipeline (`sensor-digest up`) running?"
        )
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        message = exc.response.get("Error", {}).get("Message", str(exc))
        if code == "ResourceNotFoundException":
            _fail(f"table not found: {message}")
        if code in ("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"):
            _fail(f"queue not found: {message}")
        _fail(f"{code}: {message}")
    except BotoCoreError as exc:
        _fail(str(exc))


def _fail(message: str) -> NoReturn:
    console.print(Text.assemble(("error: ", "bold red"), render.data(message)))
    raise typer.Exit(1)


def _say(line: str) -> None:
    """A line that may hold producer or operator data: shown as data."""
    console.print(render.data(line))


def _target(stack: str | None, region: str | None, **explicit: str | None) -> Target:
    return resolve(stack=stack, region=region, **explicit)


# -- demo and up ----------------------------------------------------------------------------


@app.command()
def demo(
    messages: Annotated[int, typer.Option(min=1, help="Sensor reports to send.")] = 5000,
    sensors: Annotated[int, typer.Option(min=1, help="Distinct sensors.")] = 20,
    days: Annotated[int, typer.Option(min=1, max=3650, help="Distinct days.")] = 3,
    duplicate_rate: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of deliveries SQS repeats.")] = 0.1,
    poison_rate: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Share of reports that break the schema.")
    ] = 0.01,
    fault_rate: Annotated[float, typer.Option(min=0.0, max=0.5, help="Share of DynamoDB writes throttled.")] = 0.01,
    seed: Annotated[int, typer.Option(help="Random seed of the traffic and the faults.")] = 7,
    mode: Annotated[DeliveryMode, typer.Option(help="How ingest counts.")] = DeliveryMode.EXACTLY_ONCE,
    queue: Annotated[
        QueueType,
        typer.Option(help="standard, or fifo: ordered mode (a group per sensor, batches of at most 10, no ledger)."),
    ] = QueueType.STANDARD,
    batch_size: Annotated[int, typer.Option(min=1, max=10_000, help="SQS batch size (fifo: at most 10).")] = 100,
    verbose: Annotated[bool, typer.Option(help="Show the handlers' logs.")] = False,
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
    with (
        _errors(),
        Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        ) as bar,
    ):
        task = bar.add_task("messages handled", total=messages)
        result = run_demo(options, progress=lambda done, total: bar.update(task, completed=done, total=total))
    console.print(*render.demo(result), sep="\n")
    if not result.ok:
        raise typer.Exit(1)


@app.command()
def up(
    duration: Annotated[float, typer.Option(help="Stop after this many seconds (0: until Ctrl-C).")] = 0,
    mode: Annotated[DeliveryMode, typer.Option(help="How ingest counts.")] = DeliveryMode.EXACTLY_ONCE,
    verbose: Annotated[bool, typer.Option(help="Show the handlers' logs.")] = False,
) -> None:
    """Keep a local pipeline running (engine, queue, both handlers) for send/counts/summary/dlq."""

    from sensor_digest_tools.local.pipeline import LocalPipeline, PipelineOptions

    with _errors():
        try:
            other = running_local()
        except TargetError:  # a stale state file, now removed: nothing runs
            other = None
        if other is not None:
            _fail(
                f"a local pipeline is already running (process {other.pid}, queue {other.queue_url}); "
                f"stop it first, or give this one its own state file with SENSOR_DIGEST_STATE=<path>"
            )
        pipeline = LocalPipeline(
            PipelineOptions(delivery_mode=mode, verbose=verbose, sqs="server"),
            engine_endpoint=os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"),
        )
        with _stopped_by_signals():
            try:
                target = replace(pipeline.start(), pid=os.getpid())
                path = save_local(target)
                _say(f"local pipeline up: DynamoDB {target.dynamodb_endpoint}, SQS {target.sqs_endpoint}")
                _say(f"queue {target.queue_url}\ntables {target.table}, {target.ledger}\nstate {path}")
                console.print("other commands now act on it; Ctrl-C (or SIGTERM, SIGHUP) stops it")
                console.print("for your own client (AWS CLI, any SDK), in a shell (`sensor-digest env` repeats it):")
                typer.echo(client_settings(target))
                deadline = time.monotonic() + duration if duration > 0 else None
                while deadline is None or time.monotonic() < deadline:
                    time.sleep(0.2)
            except KeyboardInterrupt:
                pass
            finally:
                clear_local(pid=os.getpid())
                pipeline.stop()


@contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP stop ``up`` as Ctrl-C does (its clean-up runs: the engine stops, the
    state file goes); the previous handlers come back afterwards."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


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
    }
    return "\n".join(f"export {name}={shlex.quote(str(value))}" for name, value in values.items() if value)


@app.command()
def env() -> None:
    """Print shell exports for your own client against the running local pipeline (`eval "$(sensor-digest env)"`)."""
    with _errors():
        target = running_local()
        if target is None or not target.local:
            _fail("no local pipeline runs: start one with `sensor-digest up`")
        typer.echo(client_settings(target))


# -- commands on a pipeline -------------------------------------------------------------------


@app.command()
def send(
    sensor: Sensor,
    count: Annotated[int, typer.Option(min=1, max=1_000_000, help="Data points in the report.")] = 1,
    timestamp: Annotated[str | None, typer.Option(help="ISO-8601 time or epoch seconds (default: now).")] = None,
    event_id: Annotated[str | None, typer.Option(help="The producer's id of the report.")] = None,
    repeat: Annotated[int, typer.Option(min=1, max=10_000, help="Send this many reports.")] = 1,
    stack: Stack = None,
    region: Region = None,
    queue_url: QueueUrl = None,
) -> None:
    """Send sensor reports to the ingest queue (checked first with the ingest's own rules).

    To a FIFO queue (ordered mode) each report goes in its sensor's message group, with its event id
    as deduplication id; a report without --event-id gets a fresh one."""
    ids = [event_id if repeat == 1 or event_id is None else f"{event_id}-{i}" for i in range(repeat)]
    bodies = [_report(sensor, count, timestamp, given) for given in ids]  # refused here, before any queue
    with _errors():
        target = _target(stack, region, queue_url=queue_url).need("queue_url")
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
                _fail(
                    f"SQS refused a report after {sent + len(response.get('Successful', []))} sent: "
                    f"{failed.get('Code')}: {failed.get('Message')}"
                )
            sent += len(response.get("Successful", []))
        _say(f"sent {sent} report(s) for sensor {sensor} to {target.queue_url}")


def _timestamp_value(text: str) -> str | int | float:
    """``--timestamp`` as the body carries it: a number (epoch seconds, negative too) or a string."""
    try:
        number = float(text)
    except ValueError:
        return text
    if not math.isfinite(number):
        return text
    return int(text) if text.lstrip("+-").isdigit() else number


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


@app.command()
def counts(
    sensor: Sensor,
    start: Annotated[str, typer.Option("--from", callback=_date, help="First day, YYYY-MM-DD.")],
    end: Annotated[str, typer.Option("--to", callback=_date, help="Last day, YYYY-MM-DD.")],
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    as_json: AsJson = False,
) -> None:
    """A sensor's day counts over a date range.

    Exit code 0 with a note when the sensor has no day counts in the range (like `summary`);
    1 on an error.
    """
    if end < start:
        raise typer.BadParameter(f"--to {end} is before --from {start}", param_hint="--to")
    with _errors():
        target = _target(stack, region, table=table).need("table")
        rows = reads.sensor_days(target.dynamodb(), str(target.table), sensor, start, end)
    if as_json:
        days = dict(rows)
        _print_json({"sensor_id": sensor, "from": start, "to": end, "days": days, "total": sum(days.values())})
        return
    if not rows:
        console.print(f"sensor {sensor} has no day counts from {start} to {end}")
        return
    out = Table(title=f"Sensor {sensor}, {start} to {end}")
    out.add_column("day")
    out.add_column(schema.DATA_COUNT, justify="right")
    for day, n in rows:
        out.add_row(render.data(day), str(n))
    out.add_row(Text("total", style="bold"), Text(str(sum(n for _, n in rows)), style="bold"))
    console.print(out)


def _month(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(f"{value}-01").isoformat()[:7]
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a month (YYYY-MM)") from None


@summary_app.callback(invoke_without_command=True)
def summary(
    ctx: typer.Context,
    sensor: Annotated[int | None, typer.Option("--sensor", min=0, max=2**53 - 1, help="The sensor id.")] = None,
    start: Annotated[str | None, typer.Option("--from", callback=_month, help="First month, YYYY-MM.")] = None,
    end: Annotated[str | None, typer.Option("--to", callback=_month, help="Last month, YYYY-MM.")] = None,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    as_json: AsJson = False,
) -> None:
    """A sensor's summary: its monthly items' DailyCounts, its whole history or a range of months.

    Exit code 0 with a note when the sensor has no summary (in that range) yet (like `counts`);
    1 on an error.
    """
    if ctx.invoked_subcommand is not None:
        return
    if sensor is None:
        raise typer.BadParameter("--sensor is required", param_hint="--sensor")
    if start and end and end < start:
        raise typer.BadParameter(f"--to {end} is before --from {start}", param_hint="--to")
    with _errors():
        target = _target(stack, region, table=table).need("table")
        months = reads.summary_months(target.dynamodb(), str(target.table), sensor, start, end)
    if as_json:
        _print_json({"sensor_id": sensor, "months": months})
        return
    if not months:
        console.print(f"sensor {sensor} has no summary{' in that range' if start or end else ''} yet")
        return
    console.print(render.summary(sensor, months))


@summary_app.command("rebuild")
def summary_rebuild(
    sensor: Annotated[
        int | None, typer.Option("--sensor", min=0, max=2**53 - 1, help="Only this sensor (default: every sensor).")
    ] = None,
    exact: Annotated[
        bool,
        typer.Option(
            "--exact",
            help="Also lower elements above their day items and remove those without one, so that each "
            "month item equals its day items exactly (the repair after a day count was corrected).",
        ),
    ] = False,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
) -> None:
    """Recompute summary items from the day items (repair, backfill, migration of the old single
    SUMMARY item); safe while the pipeline runs: elements only move up, except with --exact, where
    an element is lowered or removed only on condition that its day item still says so."""
    from sensor_digest_tools.ops.rebuild import rebuild

    with _errors():
        target = _target(stack, region, table=table).need("table")
        done = rebuild(target.dynamodb(), str(target.table), None if sensor is None else [sensor], exact=exact)
    exact_part = f"{done.lowered} lowered, {done.removed} removed, " if exact else ""
    console.print(
        f"rebuilt {done.sensors} sensor(s): {done.days} day(s), {done.written} element(s) written, "
        f"{exact_part}{done.already_current} already current, {len(done.months)} month item(s) touched, "
        f"{done.legacy_removed} legacy SUMMARY item(s) migrated"
    )


@dlq_app.command("list")
def dlq_list(
    limit: Annotated[int, typer.Option(min=1, help="At most this many messages.")] = 100,
    stack: Stack = None,
    region: Region = None,
    dlq_url: DlqUrl = None,
    as_json: AsJson = False,
) -> None:
    """List the dead-letter queue's messages with their reasons (they stay in the queue)."""
    with _errors():
        target = _target(stack, region, dlq_url=dlq_url).need("dlq_url")
        entries = list_dead_letters(target.sqs(), str(target.dlq_url), limit=limit)
    if as_json:
        fields = ("source_message_id", "error", "body", "message_id")
        _print_json([{f: getattr(entry, f) for f in fields} for entry in entries])
        return
    console.print(render.dead_letters(entries))


@dlq_app.command("redrive")
def dlq_redrive(
    limit: Annotated[int, typer.Option(min=1, help="At most this many messages.")] = 10_000,
    stack: Stack = None,
    region: Region = None,
    queue_url: QueueUrl = None,
    dlq_url: DlqUrl = None,
) -> None:
    """Move dead-letter messages back to the queue, each with its original message id and send time
    (so a report without event_id or timestamp counts once, on its original day); each is deleted
    only once it was re-sent."""
    with _errors():
        target = _target(stack, region, queue_url=queue_url, dlq_url=dlq_url).need("queue_url", "dlq_url")
        done = redrive(target.sqs(), str(target.dlq_url), str(target.queue_url), limit=limit)
    _say(f"redrove {done.moved} message(s) to {target.queue_url}")
    _report_left(done.left)


@dlq_app.command("stamp")
def dlq_stamp(
    limit: Annotated[int, typer.Option(min=1, help="At most this many messages.")] = 10_000,
    stack: Stack = None,
    region: Region = None,
    dlq_url: DlqUrl = None,
) -> None:
    """Write each dead letter's original message id and send time on it as attributes, where SQS
    moved it there itself, so that SQS's own redrive (the console's "Start DLQ redrive") keeps them."""
    with _errors():
        target = _target(stack, region, dlq_url=dlq_url).need("dlq_url")
        done = stamp(target.sqs(), str(target.dlq_url), limit=limit)
    _say(f"stamped {done.moved} message(s) in {target.dlq_url}")
    _report_left(done.left)


def _report_left(left: list[tuple[str, str]]) -> None:
    """Messages a move left where they were, each with SQS's reason; exit code 1 if any."""
    for message_id, reason in left:
        _say(f"left in the dead-letter queue: {message_id}: {reason}")
    if left:
        raise typer.Exit(1)


# -- the sensor registry ------------------------------------------------------------------------


def _registry(stack: str | None, region: str | None, table: str | None, ledger: str | None) -> Registry:
    target = _target(stack, region, table=table, ledger=ledger).need("table", "ledger")
    return Registry(table_name=str(target.table), ledger_table_name=str(target.ledger), client=target.dynamodb())


@sensors_app.command("register")
def sensors_register(
    sensor: Sensor,
    name: Annotated[str, typer.Option(help="A name for people.")],
    serial: Annotated[str, typer.Option(help="The serial number (unique across sensors).")],
    timezone: Annotated[str, typer.Option(help="IANA time zone its days are counted in.")] = "UTC",
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """Register a sensor; a taken sensor id or serial is refused and named."""
    with _errors():
        registry = _registry(stack, region, table, ledger)
        profile = registry.register(SensorProfile(sensor_id=sensor, name=name, serial=serial, timezone=timezone))
    console.print(render.profile(profile, f"registered sensor {sensor}"))


@sensors_app.command("update")
def sensors_update(
    sensor: Sensor,
    name: Annotated[str | None, typer.Option(help="New name.")] = None,
    serial: Annotated[str | None, typer.Option(help="New serial (its sentinel moves with it).")] = None,
    timezone: Annotated[str | None, typer.Option(help="New IANA time zone.")] = None,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """Change a profile with optimistic locking (retried from a fresh read if someone else won)."""
    if name is None and serial is None and timezone is None:
        raise typer.BadParameter("nothing to change: give --name, --serial or --timezone")

    def change(current: SensorProfile) -> SensorProfile:
        return replace(
            current,
            name=current.name if name is None else name,
            serial=current.serial if serial is None else serial,
            timezone=current.timezone if timezone is None else timezone,
        )

    with _errors():
        profile = _registry(stack, region, table, ledger).update(sensor, change)
    console.print(render.profile(profile, f"updated sensor {sensor}"))


@sensors_app.command("show")
def sensors_show(
    sensor: Sensor,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
    as_json: AsJson = False,
) -> None:
    """A sensor's profile (exit code 1 when it is not registered)."""
    with _errors():
        profile = _registry(stack, region, table, ledger).get(sensor)
    if profile is None:
        _fail(f"sensor {sensor} is not registered")
    if as_json:
        _print_json(asdict(profile))
        return
    console.print(render.profile(profile, f"sensor {sensor}"))


@sensors_app.command("list")
def sensors_list(
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
    as_json: AsJson = False,
) -> None:
    """Every registered sensor."""
    with _errors():
        profiles = _registry(stack, region, table, ledger).all_profiles()
    if as_json:
        _print_json([asdict(p) for p in profiles])
        return
    out = Table(title=f"{len(profiles)} registered sensor(s)")
    for column in ("sensor", "name", "serial", "time zone", "version"):
        out.add_column(column)
    for p in profiles:
        out.add_row(*(render.data(v) for v in (p.sensor_id, p.name, p.serial, p.timezone, p.version)))
    console.print(out)


@sensors_app.command("delete")
def sensors_delete(
    sensor: Sensor, stack: Stack = None, region: Region = None, table: TableOpt = None, ledger: LedgerOpt = None
) -> None:
    """Delete a profile and its serial's sentinel together (its counts stay)."""
    with _errors():
        profile = _registry(stack, region, table, ledger).delete(sensor)
    _say(f"deleted sensor {sensor} (serial {profile.serial!r} is free again)")


def main() -> None:  # pragma: no cover - the console script calls app() directly
    app()
