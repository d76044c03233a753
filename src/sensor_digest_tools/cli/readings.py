"""``readings``: a sensor's readings' statistics read back from the tables, as the read API answers them.

The statistics are the read API's own (``sensor_digest.api.readings``: the same sums over the same
day items), read as ``counts`` reads: the local pipeline's table, ``--table``, or a stack's. Count,
sum, minimum and maximum are exact decimals (exact JSON numbers with ``--json``); mean and standard
deviation are shown to 15 significant digits (``shown``, the page's rule too), in full in JSON.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from sensor_digest import zones
from sensor_digest.api import readings as statistics
from sensor_digest.errors import MalformedItem
from sensor_digest.store import reads, repairs, schema, tally
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
    parse_timezone,
)
from sensor_digest_tools.cli.output import console, errors, fail, note, print_exact_json, resolve_target
from sensor_digest_tools.cli.tables import hours_zone

commands = typer.Typer(**PLAIN)  # readings, at the command line's top level (app.py)

PARTIAL = "partial"
PARTIAL_MEANS = (
    "partial: the statistics hold only the reports counted since readings were kept "
    "(the day's other reports were counted by a release that kept none)"
)
SIGNIFICANT = 15
"""A mean or standard deviation is shown to 15 significant digits: every float holds them (so a value of
the readings' grid, and a mean of one value, shows as it was sent), and they are within 5e-15 relative,
inside the 1e-12 the read API promises (docs/readings.md#reading-them)."""


def _optional_date(value: str | None) -> str | None:
    return None if value is None else parse_date(value)


@commands.command()
def readings(
    sensor: Sensor,
    start: Annotated[str | None, typer.Option("--from", callback=_optional_date, help="First day, YYYY-MM-DD.")] = None,
    end: Annotated[str | None, typer.Option("--to", callback=_optional_date, help="Last day, YYYY-MM-DD.")] = None,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    as_json: AsJson = False,
    hourly: Annotated[
        bool, typer.Option("--hourly", help="One day's statistics per hour of the sensor's own day (with --day).")
    ] = False,
    day: Annotated[
        str | None, typer.Option("--day", callback=_optional_date, help="With --hourly: the day, YYYY-MM-DD.")
    ] = None,
    timezone: HourlyZone = "UTC",
) -> None:
    """A sensor's readings' statistics per day over a date range: count, sum, minimum, maximum (exact),
    mean and population standard deviation, per reading name; with --hourly --day, one day's per hour
    (count, sum, minimum, maximum, mean), in the zone of the sensor's day (its registered zone, else
    --timezone). A day whose statistics hold only some of its reports is marked partial.

    Exit code 0 with a note when the sensor has no readings there (like `counts`); 1 on an error.
    """
    if hourly:
        if day is None:
            raise typer.BadParameter("--hourly reads one day: give --day YYYY-MM-DD", param_hint="--day")
        if start is not None or end is not None:
            raise typer.BadParameter("--hourly reads one day (--day), not a range", param_hint="--from/--to")
        digest_zone = parse_timezone(timezone, zones.check)
        _hours(sensor, day, digest_zone, stack, region, table, as_json=as_json)
        return
    if day is not None:
        raise typer.BadParameter(
            "--day goes with --hourly (a day's hours); a range is --from and --to", param_hint="--day"
        )
    if start is None or end is None:
        raise typer.BadParameter("--from and --to are required (or --hourly --day)", param_hint="--from/--to")
    if end < start:
        raise typer.BadParameter(f"--to {end} is before --from {start}", param_hint="--to")
    with errors():
        target = resolve_target(stack, region, table=table).need("table")
        items = list(reads.sensor_items(target.dynamodb(), str(target.table), sensor, start, end))
    days, partial = by_day(sensor, items)
    if as_json:
        print_exact_json({"sensor_id": sensor, "from": start, "to": end, "days": days, "partial_days": partial})
        return
    if not days:
        note(f"sensor {sensor} has no readings from {start} to {end}")
        return
    console.print(days_table(f"Readings of sensor {sensor}, {start} to {end}", days, partial))
    if partial:
        console.print(Text(f"{PARTIAL_MEANS}: {', '.join(partial)}", style="dim"))


def by_day(sensor: int, items: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """Each day item's statistics by day (as ``GET /sensors/{id}/readings`` answers them: days without
    readings absent), and the days whose statistics are partial. A day item whose readings cannot be
    read ends the command with its repair, as ``counts`` does."""
    days: dict[str, Any] = {}
    partial: list[str] = []
    with_reports = _days_with_reports(sensor, items)
    for item in items:
        day = item.get(schema.DATE, {}).get("S", "")
        if day not in with_reports:
            continue
        kept = _kept(sensor, day, item)
        if kept:
            days[day] = statistics.day_statistics(kept)
            if not statistics.complete(item):
                partial.append(day)
    return days, partial


def _days_with_reports(sensor: int, items: list[dict[str, Any]]) -> set[str]:
    """The days among ``items`` with reports (``reads.days_read``); a day item whose count cannot be
    read ends the command with its repair, as ``counts`` does."""
    counted, unreadable = reads.days_read(items)
    for bad in unreadable:
        fail(f"{bad.reason}; {repairs.day_item(sensor, str(bad.day))}")
    return {day for day, _ in counted}


def _kept(sensor: int, day: str, item: dict[str, Any]) -> dict[str, tally.ReadingTally]:
    try:
        return tally.readings_of_item(item)
    except MalformedItem as bad:  # written by hand: named, with what mends it
        fail(f"{bad}; {repairs.day_item(sensor, day, bad.attribute)}")


def _hours(
    sensor: int, day: str, digest_zone: str, stack: str | None, region: str | None, table: str | None, *, as_json: bool
) -> None:
    """One day's statistics per hour (``GET /sensors/{id}/readings/hours``), and the zone of its hours."""
    with errors():
        target = resolve_target(stack, region, table=table).need("table")
        client, name = target.dynamodb(), str(target.table)
        item = reads.get_item(client, name, schema.day_key(sensor, day)) or {}
        zone = hours_zone(client, name, sensor, digest_zone)
    counted = bool(_days_with_reports(sensor, [item] if item else []))
    hours = statistics.hour_statistics(_kept(sensor, day, item)) if counted else {}
    complete = statistics.complete(item) if counted else True
    if as_json:
        answer = {"sensor_id": sensor, "day": day, "hours": hours, "complete": complete, "timezone": zone[0]}
        print_exact_json(answer)
        return
    if not hours:
        note(f"sensor {sensor} has no readings on {day}")
        return
    title = f"Readings of sensor {sensor} on {day}, by hour of its day in {zone[0]} ({zone[1]})"
    console.print(hours_table(title, hours))
    if not complete:
        console.print(Text(f"{PARTIAL_MEANS}: {day}", style="dim"))


EXACT_COLUMNS = tuple(s.answer for s in tally.STATISTICS)
"""The statistics the API answers exactly, in their stored order (a new one is a new column)."""


def _statistics_table(title: str, first: str, *, with_stddev: bool) -> Table:
    out = render.titled(title)
    out.add_column(first)
    out.add_column("reading")
    for column in ("count", *EXACT_COLUMNS, "mean", *(("stddev",) if with_stddev else ())):
        out.add_column(column, justify="right")
    return out


def _cells(stats: dict[str, Any], *, with_stddev: bool) -> list[str]:
    exact = [str(stats["count"]), *(exact_text(stats[column]) for column in EXACT_COLUMNS)]
    return [*exact, shown(stats["mean"]), *((shown(stats["stddev"]),) if with_stddev else ())]


def days_table(title: str, days: dict[str, Any], partial: list[str]) -> Table:
    """Each day's readings, a row per name under its day; a partial day marked (``PARTIAL``)."""
    out = _statistics_table(title, "day", with_stddev=True)
    for day, by_name in sorted(days.items()):
        first = True
        for name, stats in sorted(by_name.items()):
            label = Text()
            if first:
                label = render.data(day)
                if day in partial:
                    label.append(f" ({PARTIAL})", style="yellow")
            out.add_row(label, render.data(name), *_cells(stats, with_stddev=True))
            first = False
    return out


def hours_table(title: str, hours: dict[str, dict[str, Any]]) -> Table:
    """One day's hours, a row per reading name under its hour."""
    out = _statistics_table(title, "hour", with_stddev=False)
    for hour, by_name in sorted(hours.items()):
        first = True
        for name, stats in sorted(by_name.items()):
            label = render.data(f"{hour}:00") if first else Text()
            out.add_row(label, render.data(name), *_cells(stats, with_stddev=False))
            first = False
    return out


def exact_text(value: Decimal) -> str:
    """An exact decimal in plain digits, no exponent and no trailing zero (``182.0`` is ``182``),
    normalized in the read API's own context (every digit of a stored sum kept)."""
    return "0" if value == 0 else format(value.normalize(statistics.PRECISE), "f")


def shown(value: float) -> str:
    """A mean or standard deviation as a person reads it, by the page's rule too (``shownNumber`` in
    local/page/heatmap.js): the digits the read API wrote (the float's shortest form), rounded to
    ``SIGNIFICANT`` significant digits, a tie (a 5 and nothing after it) away from zero, in plain
    digits without trailing zeros. ``21.166666666666668`` is ``21.1666666666667``, ``7.0`` is ``7``."""
    number = Decimal(repr(value))
    if number == 0:
        return "0"
    rounded = number.quantize(Decimal(1).scaleb(number.adjusted() - SIGNIFICANT + 1), rounding=ROUND_HALF_UP)
    return format(rounded.normalize(statistics.PRECISE), "f")
