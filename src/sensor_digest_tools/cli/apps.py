"""The command line's Typer applications: the top level and its three groups. The command modules
(``local``, ``send``, ``tables``, ``dlq``, ``sensors``) register their commands on these;
``app.py`` imports them all."""

from __future__ import annotations

import typer

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
