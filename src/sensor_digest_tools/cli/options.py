"""The options several commands share, defined once: where a command acts (a deployed stack, a
region, or named resources), the sensor, ``--json``, and ``--yes`` and ``--dry-run`` of the
commands that change things, ``--timezone`` of the commands that read hours (``--hourly``), and
``--days`` of the demos' generated traffic; the parsers of dates, months and ``--timezone``; and
``PLAIN``, the settings of every Typer application of the command line."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from typing import Annotated, Any, TypeVar

import typer

from sensor_digest.errors import UnknownTimeZone

T = TypeVar("T")

# Plain Click output (``rich_markup_mode=None``): a usage error is one line on stderr, never a box
# folded at 80 columns, and help texts are shown as written, never parsed as markup.
PLAIN: dict[str, Any] = {"rich_markup_mode": None, "pretty_exceptions_enable": False}

Stack = Annotated[str | None, typer.Option("--stack", help="A deployed stack: its outputs name the resources.")]
REGION_NAME = re.compile(r"[a-z]{2,}(?:-[a-z]+)+-[0-9]+")
"""An AWS region's name (eu-west-1, us-gov-west-1, cn-north-1, ap-southeast-5)."""


def _region(value: str | None) -> str | None:
    if value is not None and not REGION_NAME.fullmatch(value):
        raise typer.BadParameter(f"{value!r} is no AWS region name (like eu-west-1)")
    return value


Region = Annotated[
    str | None,
    typer.Option("--region", callback=_region, help="AWS region of the stack (default: your AWS config)."),
]
QueueUrl = Annotated[str | None, typer.Option("--queue-url", help="The ingest queue, instead of --stack.")]
DlqUrl = Annotated[str | None, typer.Option("--dlq-url", help="The dead-letter queue, instead of --stack.")]
TableOpt = Annotated[str | None, typer.Option("--table", help="The digest table, instead of --stack.")]
LedgerOpt = Annotated[str | None, typer.Option("--ledger", help="The ledger table, instead of --stack.")]
Sensor = Annotated[int, typer.Option("--sensor", min=0, max=2**53 - 1, help="The sensor id.")]
AsJson = Annotated[bool, typer.Option("--json", help="Machine-readable: the result as JSON on stdout.")]
Yes = Annotated[
    bool,
    typer.Option(
        "--yes", "-y", help="Do it without asking (needed where stdin is not a terminal: a script, a pipe, cron)."
    ),
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Only say what would be done; change nothing.")]
HourlyZone = Annotated[
    str,
    typer.Option(help="With --hourly: the zone of a sensor registered without one (the stack's digestTimezone)."),
]
Days = Annotated[int, typer.Option(min=1, max=3650, help="Distinct days.")]


def parse_date(value: str) -> str:
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a date (YYYY-MM-DD)") from None


def parse_month(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(f"{value}-01").isoformat()[:7]
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a month (YYYY-MM)") from None


def parse_timezone(name: str, read: Callable[[str], T]) -> T:
    """``--timezone``'s value read by ``read`` (``zones.check``: the name; ``zones.load``: the zone), or the
    option refused with the reason: a name the tzdata the functions ship does not hold."""
    try:
        return read(name)
    except UnknownTimeZone as exc:
        raise typer.BadParameter(exc.reason, param_hint="--timezone") from None
