"""``silence``: the registered sensors silent past their threshold, and since when.

The same check as the stack's scheduled one and the read API's ``GET /silence``
(``sensor_digest/silence/``), run from here against the tables: reads only, the ``Profiles`` index,
the profiles, and the day items back to each sensor's last report in its zone. Each silent sensor is
said in the phrasing the page and the docs use (``silence.rules.wording``).
"""

from __future__ import annotations

from typing import Annotated

import typer

from sensor_digest import zones
from sensor_digest.silence.check import SilenceCheck
from sensor_digest.silence.rules import MAX_HOURS, MIN_HOURS
from sensor_digest_tools.cli import render
from sensor_digest_tools.cli.options import PLAIN, AsJson, Region, Stack, TableOpt, parse_timezone
from sensor_digest_tools.cli.output import console, errors, note, print_json, resolve_target

commands = typer.Typer(**PLAIN)  # silence, at the command line's top level (app.py)


@commands.command()
def silence(
    default_hours: Annotated[
        int | None,
        typer.Option(
            "--default-hours",
            min=MIN_HOURS,
            max=MAX_HOURS,
            help="The stack's default threshold (its silenceHours); without it, only sensors with their own.",
        ),
    ] = None,
    timezone: Annotated[
        str, typer.Option(help="The zone of sensors registered without one (the stack's digestTimezone).")
    ] = "UTC",
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    as_json: AsJson = False,
) -> None:
    """The registered sensors silent past their threshold: their last report hour and how long ago.

    Exit code 0 whatever it finds (a note when none is silent); 1 on an error, and when a sensor
    could not be checked (its reads failed: named on stderr, after the others).
    """
    zone = parse_timezone(timezone, zones.load)
    with errors():
        target = resolve_target(stack, region, table=table).need("table")
        found = SilenceCheck(
            table_name=str(target.table), client=target.dynamodb(), default_hours=default_hours, default_zone=zone
        ).run()
    silent = [s.as_json() for s in found.silent]
    if as_json:
        print_json({"sensors": silent, "checked": found.checked, "unchecked": [u.as_json() for u in found.unchecked]})
    elif not silent:
        note(f"no registered sensor is silent past its threshold ({found.checked} checked)")
    else:
        console.print(render.silent_sensors(f"{len(silent)} of {found.checked} registered sensor(s) silent", silent))
    for unchecked in found.unchecked:
        note(f"error: sensor {unchecked.sensor_id} could not be checked: {unchecked.reason}")
    if found.unchecked:
        raise typer.Exit(1)


__all__ = ["silence"]
