"""``counts`` and ``summary`` (with ``summary rebuild``): reading a pipeline's tables back."""

from __future__ import annotations

import shlex
from typing import Annotated, Any

import typer
from rich.text import Text

from sensor_digest import zones
from sensor_digest.errors import MalformedItem
from sensor_digest.store import reads, repairs, schema
from sensor_digest_tools.cli import render
from sensor_digest_tools.cli.options import (
    PLAIN,
    AsJson,
    HourlyZone,
    Region,
    Sensor,
    Stack,
    TableOpt,
    parse_date,
    parse_month,
    parse_timezone,
)
from sensor_digest_tools.cli.output import console, errors, fail, note, print_json, resolve_target

commands = typer.Typer(**PLAIN)  # counts, at the command line's top level (app.py)
summary_app = typer.Typer(help="A sensor's summary, or rebuild summaries from the day items.", **PLAIN)


@commands.command()
def counts(
    sensor: Sensor,
    start: Annotated[str, typer.Option("--from", callback=parse_date, help="First day, YYYY-MM-DD.")],
    end: Annotated[str, typer.Option("--to", callback=parse_date, help="Last day, YYYY-MM-DD.")],
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    as_json: AsJson = False,
    hourly: Annotated[
        bool, typer.Option("--hourly", help="Each day's counts per hour of the sensor's own day (HourCounts) too.")
    ] = False,
    timezone: HourlyZone = "UTC",
) -> None:
    """A sensor's day counts over a date range (with --hourly, each day's hours too, in the zone
    of the sensor's day: its registered zone, else --timezone).

    Exit code 0 with a note when the sensor has no day counts in the range (like `summary`);
    1 on an error.
    """
    if end < start:
        raise typer.BadParameter(f"--to {end} is before --from {start}", param_hint="--to")
    digest_zone = parse_timezone(timezone, zones.check)
    with errors():
        target = resolve_target(stack, region, table=table).need("table")
        items = list(reads.sensor_items(target.dynamodb(), str(target.table), sensor, start, end))
        rows, unreadable = reads.days_read(items)
        hours, bad_hours = hours_by_day(items) if hourly else ({}, {})
        zone = hours_zone(target.dynamodb(), str(target.table), sensor, digest_zone) if hourly else None
        if unreadable:  # a day item written by hand: named, with what mends it
            fail(f"{unreadable[0].reason}; {repairs.day_item(sensor, str(unreadable[0].day))}")
    if as_json:
        days = dict(rows)
        answer: dict[str, Any] = {"sensor_id": sensor, "from": start, "to": end, "days": days}
        if zone is not None:  # a day from before hours were kept: null
            answer["hours"] = {day: hours.get(day) for day in days}
            answer["complete"] = {day: sum((hours.get(day) or {}).values()) == n for day, n in days.items()}
            answer["timezone"] = zone[0]
        print_json({**answer, "total": sum(days.values())})
        return
    if not rows:
        note(f"sensor {sensor} has no day counts from {start} to {end}")
        return
    if zone is not None:
        title = f"Sensor {sensor}, {start} to {end}, by hour of its day in {zone[0]} ({zone[1]})"
        console.print(render.hours_table(title, rows, hours, bad_hours))
        return
    out = render.titled(f"Sensor {sensor}, {start} to {end}")
    out.add_column("day")
    out.add_column(schema.DATA_COUNT, justify="right")
    for day, n in rows:
        out.add_row(render.data(day), str(n))
    out.add_row(Text("total", style="bold"), Text(str(sum(n for _, n in rows)), style="bold"))
    console.print(out)


def hours_zone(client: Any, table: str, sensor: int, digest_zone: str) -> tuple[str, str]:
    """The zone a sensor's hours are in, and why: its registered zone (one the functions load, as
    ingest reads it), else the digest zone (``--timezone``)."""
    profile = reads.get_item(client, table, schema.profile_key(sensor)) or {}
    name = profile.get(schema.TIME_ZONE, {}).get("S")
    if isinstance(name, str) and zones.is_known(name):
        return name, "its registered zone"
    why = "not registered" if not profile else "its registered zone cannot be loaded"
    return digest_zone, f"{why}: the digest zone, --timezone"


def hours_by_day(items: list[dict[str, Any]]) -> tuple[dict[str, dict[str, int] | None], dict[str, str]]:
    """Each day item's ``HourCounts`` by day (``None``: a day item from before hours), and what is
    wrong with each map that cannot be read (named on stderr too; its hours are ``None``)."""
    out: dict[str, dict[str, int] | None] = {}
    bad_hours: dict[str, str] = {}
    for item in items:
        day = item.get(schema.DATE, {}).get("S")
        if not isinstance(day, str) or not reads.has_reports(item):
            continue
        try:
            out[day] = schema.hour_counts_of_item(item)
        except MalformedItem as bad:
            note(f"warning: {bad}")
            out[day] = None
            bad_hours[day] = str(bad)
    return out, bad_hours


@summary_app.callback(invoke_without_command=True)
def summary(
    ctx: typer.Context,
    sensor: Annotated[int | None, typer.Option("--sensor", min=0, max=2**53 - 1, help="The sensor id.")] = None,
    start: Annotated[str | None, typer.Option("--from", callback=parse_month, help="First month, YYYY-MM.")] = None,
    end: Annotated[str | None, typer.Option("--to", callback=parse_month, help="Last month, YYYY-MM.")] = None,
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
        _refuse_group_options(ctx)
        return
    if sensor is None:
        raise typer.BadParameter("--sensor is required", param_hint="--sensor")
    if start and end and end < start:
        raise typer.BadParameter(f"--to {end} is before --from {start}", param_hint="--to")
    with errors():
        target = resolve_target(stack, region, table=table).need("table")
        try:
            months = reads.summary_months(target.dynamodb(), str(target.table), sensor, start, end)
        except MalformedItem as bad:
            fail(f"{bad}; {repairs.summary_item(sensor)}")
    if as_json:
        print_json({"sensor_id": sensor, "months": months})
        return
    if not months:
        note(f"sensor {sensor} has no summary{' in that range' if start or end else ''} yet")
        return
    console.print(render.summary(sensor, months))


class MisplacedOption(typer.BadParameter):
    """A usage error said as it is (Click's ``Error: ...`` line, without "Invalid value")."""

    def format_message(self) -> str:
        return self.message


def _refuse_group_options(ctx: typer.Context) -> None:
    """``summary``'s options are ``summary``'s alone: given before a subcommand (``summary --sensor 7
    rebuild``) they would be ignored and the subcommand act on its defaults (every sensor), so they
    are refused, saying where they go."""
    given = [p for p in ctx.command.params if p.name and _given(ctx, p.name)]
    if not given:
        return
    name = str(ctx.invoked_subcommand)
    group = ctx.command
    subcommand = group.get_command(ctx, name) if isinstance(group, typer.core.TyperGroup) else None
    takes = {opt for p in (subcommand.params if subcommand else []) for opt in p.opts}
    moved = [_written(ctx, p) for p in given if p.opts[0] in takes]
    other = [p.opts[0] for p in given if p.opts[0] not in takes]
    said = []
    if moved:
        said.append(f"options go after the subcommand: `{ctx.command_path} {name} {' '.join(moved)}`")
    if other:
        whose = "it is" if len(other) == 1 else "they are"
        said.append(
            f"`{ctx.info_name} {name}` has no {', '.join(other)}: {whose} `{ctx.info_name}`'s own, to read a summary"
        )
    raise MisplacedOption("; ".join(said), ctx=ctx)


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the option was given (on the command line, or by an environment variable)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name != "DEFAULT"


def _written(ctx: typer.Context, param: Any) -> str:
    """An option as it was given: ``--sensor 7``, ``--exact``."""
    opt = str(param.opts[0])
    return opt if param.is_flag else f"{opt} {shlex.quote(str(ctx.params[param.name]))}"


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

    with errors():
        target = resolve_target(stack, region, table=table).need("table")
        done = rebuild(target.dynamodb(), str(target.table), None if sensor is None else [sensor], exact=exact)
    exact_part = (
        f"{done.lowered} lowered, {done.removed} removed, {done.junk_removed} junk item(s) removed, " if exact else ""
    )
    console.print(
        f"rebuilt {done.sensors - len(done.failed)} sensor(s): {done.days} day(s), {done.written} element(s) written, "
        f"{exact_part}{done.already_current} already current, {len(done.months)} month item(s) touched, "
        f"{done.legacy_removed} legacy SUMMARY item(s) migrated"
    )
    for failure in done.failed:  # each sensor that stopped, named; the others were rebuilt
        note(f"error: {failure}")
    if done.failed:
        raise typer.Exit(1)
