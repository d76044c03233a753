"""``dlq list``, ``dlq redrive``, ``dlq stamp``: the dead-letter queue as operators need it."""

from __future__ import annotations

from typing import Annotated

import typer

from sensor_digest_tools.cli import render
from sensor_digest_tools.cli.apps import dlq_app
from sensor_digest_tools.cli.options import (
    DlqUrl,
    QueueUrl,
    Region,
    Stack,
)
from sensor_digest_tools.cli.output import console, errors, note, print_json, resolve_target, say
from sensor_digest_tools.ops.dlq import list_dead_letters, redrive, stamp


@dlq_app.command("list")
def dlq_list(
    limit: Annotated[int, typer.Option(min=1, help="At most this many messages.")] = 100,
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help=f"Show each body and error whole (by default the first {render.CLIPPED_AT} characters "
            "and how long it is).",
        ),
    ] = False,
    stack: Stack = None,
    region: Region = None,
    dlq_url: DlqUrl = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Machine-readable: the messages as JSON on stdout, bodies and errors whole."),
    ] = False,
) -> None:
    """List the dead-letter queue's messages with their reasons (they stay in the queue)."""
    with errors():
        target = resolve_target(stack, region, dlq_url=dlq_url).need("dlq_url")
        entries = list_dead_letters(target.sqs(), str(target.dlq_url), limit=limit)
    if as_json:
        fields = ("message_id", "source_message_id", "source_sent_timestamp", "error", "body")
        print_json([{f: getattr(entry, f) for f in fields} for entry in entries])
        return
    console.print(render.dead_letters(entries, full=full))


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
    with errors():
        target = resolve_target(stack, region, queue_url=queue_url, dlq_url=dlq_url).need("queue_url", "dlq_url")
        done = redrive(target.sqs(), str(target.dlq_url), str(target.queue_url), limit=limit)
    say(f"redrove {done.moved} message(s) to {target.queue_url}")
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
    with errors():
        target = resolve_target(stack, region, dlq_url=dlq_url).need("dlq_url")
        done = stamp(target.sqs(), str(target.dlq_url), limit=limit)
    say(f"stamped {done.moved} message(s) in {target.dlq_url}")
    _report_left(done.left)


def _report_left(left: list[tuple[str, str]]) -> None:
    """Messages a move left where they were, each with SQS's reason (on stderr); exit code 1 if any."""
    for message_id, reason in left:
        note(f"left in the dead-letter queue: {message_id}: {reason}")
    if left:
        raise typer.Exit(1)
