"""``sensors ...``: the sensor registry (profiles, unique serials, time zones)."""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Annotated

import typer
from rich.console import RenderableType

from sensor_digest.registry import Registry, SensorProfile
from sensor_digest_tools.cli import render
from sensor_digest_tools.cli.options import (
    PLAIN,
    AsJson,
    DryRun,
    LedgerOpt,
    Region,
    Sensor,
    Stack,
    TableOpt,
    Yes,
)
from sensor_digest_tools.cli.output import (
    confirm,
    console,
    errors,
    fail,
    note,
    notes,
    print_json,
    refuse_without_terminal,
    resolve_target,
    say,
)
from sensor_digest_tools.ops.sensors import DeletionPlan, plan_delete
from sensor_digest_tools.ops.targets import Target

sensors_app = typer.Typer(
    help="The sensor registry: profiles, unique serials, time zones.", no_args_is_help=True, **PLAIN
)

SilenceHours = Annotated[
    int | None,
    typer.Option(help="Its own silence threshold in hours (1 to 720); without it, the stack's default applies."),
]


def _where(stack: str | None, region: str | None, table: str | None, ledger: str | None) -> Target:
    return resolve_target(stack, region, table=table, ledger=ledger).need("table", "ledger")


def _registry(stack: str | None, region: str | None, table: str | None, ledger: str | None) -> Registry:
    target = _where(stack, region, table, ledger)
    return Registry(table_name=str(target.table), ledger_table_name=str(target.ledger), client=target.dynamodb())


@sensors_app.command("register")
def sensors_register(
    sensor: Sensor,
    name: Annotated[str, typer.Option(help="A name for people.")],
    serial: Annotated[str, typer.Option(help="The serial number (unique across sensors).")],
    timezone: Annotated[str, typer.Option(help="IANA time zone its days are counted in.")] = "UTC",
    silence_hours: SilenceHours = None,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """Register a sensor; a taken sensor id or serial is refused and named."""
    with errors():
        registry = _registry(stack, region, table, ledger)
        profile = registry.register(
            SensorProfile(sensor_id=sensor, name=name, serial=serial, timezone=timezone, silence_hours=silence_hours)
        )
    console.print(render.profile(profile, f"registered sensor {sensor}"))


@sensors_app.command("update")
def sensors_update(
    sensor: Sensor,
    name: Annotated[str | None, typer.Option(help="New name.")] = None,
    serial: Annotated[str | None, typer.Option(help="New serial (its sentinel moves with it).")] = None,
    timezone: Annotated[str | None, typer.Option(help="New IANA time zone.")] = None,
    silence_hours: Annotated[
        int | None,
        typer.Option(help="New silence threshold in hours (1 to 720); 0: none of its own (the stack's default)."),
    ] = None,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """Change a profile with optimistic locking (retried from a fresh read if someone else won)."""
    if name is None and serial is None and timezone is None and silence_hours is None:
        raise typer.BadParameter("nothing to change: give --name, --serial, --timezone or --silence-hours")

    before: list[str] = []

    def change(current: SensorProfile) -> SensorProfile:
        before[:] = [current.timezone]  # the zone it had, as the update's last read found it
        return replace(
            current,
            name=current.name if name is None else name,
            serial=current.serial if serial is None else serial,
            timezone=current.timezone if timezone is None else timezone,
            silence_hours=current.silence_hours if silence_hours is None else (silence_hours or None),
        )

    with errors():
        profile = _registry(stack, region, table, ledger).update(sensor, change)
    console.print(render.profile(profile, f"updated sensor {sensor}"))
    if timezone is not None and before != [profile.timezone]:
        note(zone_change_note(sensor, before[0] if before else "?", profile.timezone))


def zone_change_note(sensor: int, old: str, new: str) -> str:
    """What a new time zone changes, and when: ingest reads profiles through a cache of its own."""
    return (
        f"sensor {sensor}'s days are counted in {new} (not {old}) for the reports ingest reads once its "
        "profile cache lets the old profile go: up to PROFILE_CACHE_SECONDS (the stack's profileCacheSeconds, "
        "60 s by default) after this update, per function container; reports counted before stay on the days "
        "they were counted on (a count never moves to another day)"
    )


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
    with errors():
        profile = _registry(stack, region, table, ledger).get(sensor)
    if profile is None:
        fail(f"sensor {sensor} is not registered")
    if as_json:
        print_json(asdict(profile))
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
    """Every registered sensor (exit code 1, after the list, when a profile item is malformed)."""
    with errors():
        profiles, malformed = _registry(stack, region, table, ledger).scan_profiles()
    for bad in malformed:
        note(f"warning: a malformed profile was left out: {bad} (remove it with `sensor-digest sensors delete`)")
    if as_json:
        print_json([asdict(p) for p in profiles])
        if malformed:
            raise typer.Exit(1)
        return
    out = render.titled(f"{len(profiles)} registered sensor(s)")
    for column in ("sensor", "name", "serial", "time zone", "silence after", "registered", "version"):
        out.add_column(column)
    for p in profiles:
        silence = "default" if p.silence_hours is None else f"{p.silence_hours} h"
        shown = (p.sensor_id, p.name, p.serial, p.timezone, silence, render.registered(p), p.version)
        out.add_row(*(render.data(v) for v in shown))
    console.print(out)
    if malformed:
        raise typer.Exit(1)


@sensors_app.command("reindex")
def sensors_reindex(
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """Put the profiles registered before the read API into its index of sensors (once, after upgrading;
    safe to repeat and while the pipeline runs). Profiles written since carry it already."""
    with errors():
        listed = _registry(stack, region, table, ledger).list_unlisted()
    say(f"{listed} profile(s) added to the index of sensors")


@sensors_app.command("delete")
def sensors_delete(
    sensor: Sensor,
    dry_run: DryRun = False,
    yes: Yes = False,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """Delete a profile and its serial's sentinel together (its counts stay); a malformed profile too.
    Shows the profile and whether its serial is freed, and asks first unless --yes."""
    with errors():
        target = _where(stack, region, table, ledger)
        client = target.dynamodb()
        if not (yes or dry_run):  # before anything is read: nobody could answer the question
            refuse_without_terminal(f"delete sensor {sensor}")
        if dry_run or not yes:
            plan = plan_delete(client, str(target.table), str(target.ledger), sensor)
            if dry_run:
                console.print(_planned(plan))
                say(f"would delete sensor {sensor}; {_serial_after(plan)}; dry run, nothing deleted")
                return
            notes.print(_planned(plan))
            confirm(f"delete sensor {sensor} ({_serial_after(plan)})", yes=yes)
        deleted = Registry(table_name=str(target.table), ledger_table_name=str(target.ledger), client=client).delete(
            sensor
        )
    if deleted.serial_freed:
        say(f"deleted sensor {sensor} (serial {deleted.serial!r} is free again)")
    elif deleted.serial is None:
        say(f"deleted sensor {sensor} (its profile had no serial)")
    elif deleted.held_by is None:
        say(
            f"deleted sensor {sensor} (serial {deleted.serial!r} had no sentinel in the ledger: whether another "
            "sensor holds it the registry cannot tell)"
        )
    else:
        holder = "no sensor" if deleted.held_by is None else f"sensor {deleted.held_by}"
        say(
            f"deleted sensor {sensor}; serial {deleted.serial!r} stays taken: its sentinel names {holder}, not {sensor}"
        )


def _planned(plan: DeletionPlan) -> RenderableType:
    """The profile a delete would remove, or the line that names a malformed one."""
    if plan.profile is None:
        return render.data(f"sensor {plan.sensor_id}'s profile item is malformed: {plan.malformed}")
    return render.profile(plan.profile, f"sensor {plan.sensor_id}")


def _serial_after(plan: DeletionPlan) -> str:
    """What becomes of the profile's serial."""
    if plan.serial is None:
        return "its profile has no serial"
    if plan.serial_freed:
        return f"serial {plan.serial!r} would be free again"
    if not plan.sentinel:
        return f"serial {plan.serial!r} has no sentinel in the ledger: whether another sensor holds it, none can tell"
    holder = "no sensor" if plan.held_by is None else f"sensor {plan.held_by}"
    return f"serial {plan.serial!r} stays taken: its sentinel names {holder}, not {plan.sensor_id}"
