"""``sensor-digest``: the local pipeline and the commands that act on it or on a deployed stack.

The application, declared here and only here: the top level (with ``--version``), the commands of
``local`` (demo, up, env), ``send``, ``history`` (import, import-demo), ``silence``, ``tables`` (counts) and
``readings`` at it, and the groups
``dlq`` (list, redrive, stamp), ``summary`` (``tables``: a summary, rebuild), ``sensors`` (the
registry), ``alarms`` (rules, alarms, the operator's actions) and ``migrate`` (items of an earlier
layout, rewritten before an upgrade). Each command module declares its own commands, on a Typer of
its own; shared options live in ``options``, how a command ends (result, error line, exit code) in
``output``, tables in ``render``.
"""

from __future__ import annotations

from importlib import metadata
from typing import Annotated

import typer

from sensor_digest_tools.cli import alarms, dlq, history, local, migrate, readings, send, sensors, silence, tables
from sensor_digest_tools.cli.options import PLAIN

__all__ = ["app", "main"]

app = typer.Typer(
    help="SensorDigest: exact per-sensor daily counts from SQS into DynamoDB, on a laptop or on AWS.",
    no_args_is_help=True,
    **PLAIN,
)


def _version(shown: bool) -> None:
    if shown:
        typer.echo(f"sensor-digest {metadata.version('sensor-digest')}")
        raise typer.Exit()


@app.callback()
def _top(
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_version, help="Print the version and exit."),
    ] = False,
) -> None:
    # No docstring: the top level's help is the one given to ``typer.Typer`` above.
    pass


for module in (local, send, history, silence, tables, readings):
    app.add_typer(module.commands)  # no name: its commands join the top level
app.add_typer(dlq.dlq_app, name="dlq")
app.add_typer(tables.summary_app, name="summary")
app.add_typer(sensors.sensors_app, name="sensors")
app.add_typer(alarms.alarms_app, name="alarms")
app.add_typer(migrate.migrate_app, name="migrate")


def main() -> None:  # pragma: no cover - the console script calls app() directly
    app()
