"""The command line's Typer applications: the top level (with ``--version``) and its three groups.
The command modules (``local``, ``send``, ``tables``, ``dlq``, ``sensors``) register their commands
on these; ``app.py`` imports them all."""

from __future__ import annotations

from importlib import metadata
from typing import Annotated, Any

import typer

# Plain Click output (``rich_markup_mode=None``): a usage error is one line on stderr, never a box
# folded at 80 columns, and help texts are shown as written, never parsed as markup.
PLAIN: dict[str, Any] = {"rich_markup_mode": None, "pretty_exceptions_enable": False}

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


dlq_app = typer.Typer(help="Inspect the dead-letter queue, or redrive it to the queue.", no_args_is_help=True, **PLAIN)
app.add_typer(dlq_app, name="dlq")
summary_app = typer.Typer(help="A sensor's summary, or rebuild summaries from the day items.", **PLAIN)
app.add_typer(summary_app, name="summary")
sensors_app = typer.Typer(
    help="The sensor registry: profiles, unique serials, time zones.", no_args_is_help=True, **PLAIN
)
app.add_typer(sensors_app, name="sensors")
