"""``dlq list``, ``dlq redrive``, ``dlq stamp``: the dead-letter queue as operators need it."""

from __future__ import annotations

from typing import Annotated

import typer

from sensor_digest_tools.cli import render
from sensor_digest_tools.cli.options import (
    PLAIN,
    DlqUrl,
    DryRun,
    QueueUrl,
    Region,
    Stack,
    Yes,
)
from sensor_digest_tools.cli.output import (
    confirm,
    console,
    errors,
    note,
    print_json,
    refuse_without_terminal,
    resolve_target,
    say,
    told_on_stop,
)
from sensor_digest_tools.ops.dlq import (
    PASS_VISIBILITY_SECONDS,
    MoveReport,
    list_dead_letters,
    moved_by_sqs,
    plan_redrive,
    queue_depth,
    redrive,
    stamp,
)

dlq_app = typer.Typer(help="Inspect the dead-letter queue, or redrive it to the queue.", no_args_is_help=True, **PLAIN)

Limit = Annotated[int, typer.Option(min=1, help="At most this many messages.")]  # redrive's and stamp's


@dlq_app.command("list")
def dlq_list(
    limit: Annotated[
        int,
        typer.Option(
            min=1, help="At most this many messages (the first ones SQS hands out); the title says when there are more."
        ),
    ] = 100,
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
        sqs, url = target.sqs(), str(target.dlq_url)
        entries = list_dead_letters(sqs, url, limit=limit)
        cut = render.listing_cut(len(entries), limit, queue_depth(sqs, url) if len(entries) >= limit else None)
    if as_json:
        fields = ("message_id", "source_message_id", "source_sent_timestamp", "error", "body")
        print_json([{f: getattr(entry, f) for f in fields} for entry in entries])
        if cut:
            note(f"dead-letter queue: {cut}")
        return
    console.print(render.dead_letters(entries, full=full, cut=cut))


@dlq_app.command("redrive")
def dlq_redrive(
    limit: Limit = 10_000,
    only_moved_by_sqs: Annotated[
        bool,
        typer.Option(
            "--only-moved-by-sqs",
            help="Only the messages SQS moved there itself after maxReceiveCount receives (those without "
            "an error); the ones ingest rejected stay.",
        ),
    ] = False,
    dry_run: DryRun = False,
    yes: Yes = False,
    stack: Stack = None,
    region: Region = None,
    queue_url: QueueUrl = None,
    dlq_url: DlqUrl = None,
) -> None:
    """Move dead-letter messages back to the queue, each with its original message id and send time
    (so a report without event_id or timestamp counts once, on its original day); each is deleted
    only once it was re-sent. Asks first (how many, from which queue to which) unless --yes. A pass
    moves each dead letter once, and no more than it counted as it began: one rejected again while
    it runs stays in the dead-letter queue."""
    select = moved_by_sqs if only_moved_by_sqs else None
    which = "message(s) SQS moved there itself" if only_moved_by_sqs else "message(s)"
    with errors():
        target = resolve_target(stack, region, queue_url=queue_url, dlq_url=dlq_url).need("queue_url", "dlq_url")
        source, destination, sqs = str(target.dlq_url), str(target.queue_url), target.sqs()
        if not (yes or dry_run):  # before the queue is read: nobody could answer the question
            refuse_without_terminal(f"redrive {which} from {source} to {destination}")
        at_most = None  # with --yes: as many as the queue holds as the pass begins
        if dry_run or not yes:
            plan = plan_redrive(sqs, source, limit=limit, select=select)
            moves = (
                f"{plan.messages} message(s) ({plan.moved_by_sqs} of them moved there by SQS itself) "
                f"from {source} to {destination}"
            )
            if dry_run:
                say(f"would redrive {moves}; dry run, nothing moved")
                return
            if plan.messages == 0:
                say(f"nothing to redrive: no {which} in {source}")
                return
            confirm(f"redrive {moves}", yes=yes)
            at_most = plan.messages  # what the question named, no more
        done = MoveReport()
        with told_on_stop(lambda: stopped("redrove", done, source, destination)):
            redrive(sqs, source, destination, limit=limit, select=select, at_most=at_most, report=done)
    say(f"redrove {done.moved} message(s) from {source} to {destination}")
    if done.came_back:
        note(
            f"{done.came_back} message(s) of an origin this pass had moved already stay in {source} (rejected "
            "again while it ran, or a second copy): each dead letter moves once a pass"
        )
    _report_left(done.left)


@dlq_app.command("stamp")
def dlq_stamp(
    limit: Limit = 10_000,
    stack: Stack = None,
    region: Region = None,
    dlq_url: DlqUrl = None,
) -> None:
    """Write each dead letter's original message id and send time on it as attributes, where SQS
    moved it there itself, so that SQS's own redrive (the console's "Start DLQ redrive") keeps them."""
    with errors():
        target = resolve_target(stack, region, dlq_url=dlq_url).need("dlq_url")
        done = MoveReport()
        with told_on_stop(lambda: stopped("stamped", done, str(target.dlq_url), str(target.dlq_url))):
            stamp(target.sqs(), str(target.dlq_url), limit=limit, report=done)
    say(f"stamped {done.moved} message(s) in {target.dlq_url}")
    _report_left(done.left)


def stopped(did: str, done: MoveReport, source: str, destination: str) -> str:
    """What a redrive or a stamp stopped on the way says: how many letters it moved, where the others
    are, and that running it again is safe."""
    where = "" if source == destination else f" from {source} to {destination}"
    return (
        f"stopped: {did} {done.moved} message(s){where} before it stopped; the others are still in {source} "
        f"(those this pass held come back within {PASS_VISIBILITY_SECONDS} s). Run it again to go on: each letter "
        "carries its origin, so one that was sent and not yet deleted when it stopped counts once however often "
        "it is moved"
    )


def _report_left(left: list[tuple[str, str]]) -> None:
    """Messages a move left where they were, each with SQS's reason (on stderr); exit code 1 if any."""
    for message_id, reason in left:
        note(f"left in the dead-letter queue: {message_id}: {reason}")
    if left:
        raise typer.Exit(1)
