"""``migrate ...``: rewrite items of an earlier layout that this release no longer reads, before an upgrade."""

from __future__ import annotations

import typer

from sensor_digest_tools.cli.options import PLAIN, AsJson, Region, Stack, TableOpt
from sensor_digest_tools.cli.output import errors, note, print_json, resolve_target, say

migrate_app = typer.Typer(
    help="Rewrite items of an earlier layout this release no longer reads (before upgrading).",
    no_args_is_help=True,
    **PLAIN,
)


@migrate_app.command("sequences")
def migrate_sequences(
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    as_json: AsJson = False,
) -> None:
    """Move the sequence number ordered mode's first release kept on a day item (AppliedSequence with
    SequenceSource) into its queue's own AppliedSequence#<queue ARN>, and remove the pair: once, before
    upgrading a FIFO stack that ever ran that release; safe to repeat and while the pipeline runs."""
    from sensor_digest_tools.ops.sequences import migrate_sequences as migrate

    with errors():
        target = resolve_target(stack, region, table=table).need("table")
        done = migrate(target.dynamodb(), str(target.table))
    if as_json:
        print_json({"found": done.found, "raised": done.raised, "removed": done.removed, "failed": done.failed})
    else:
        say(
            f"{done.found} day item(s) with the first release's pair: {done.raised} moved into their queue's "
            f"attribute, {done.removed} removed (their queue's attribute held as much), {len(done.failed)} left"
        )
        for failure in done.failed:
            note(f"error: {failure}")
    if done.failed:
        raise typer.Exit(1)
