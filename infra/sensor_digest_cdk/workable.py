"""What a shape needs beyond each value's range for the functions to do their job, and which props
do not apply to the mode a shape chooses. CDK-free, as ``shape.py`` (which asks it).

- **The functions' own margins.** Ingest keeps ``DEADLINE_MARGIN_SECONDS`` (3 s) before Lambda's
  timeout for its answer and its logs: no dead letter is sent and no group written past it. A
  timeout within that margin never counts a message (every one is listed until SQS moves it to the
  dead-letter queue, without a reason), so the ingest timeout must leave it ``INGEST_MIN_WORK_SECONDS``
  at least (``INGEST_MIN_TIMEOUT_SECONDS``). The summary and the query function keep no margin of
  their own (the summary's single-item writes take no deadline, the query function answers one
  ``Query``): any timeout from 1 s lets them work.
- **Queues and streams.** SQS keeps a standard message's first enqueue time when it moves it to the
  dead-letter queue, so a dead-letter retention no longer than the time a failing message takes to
  get there (``maxReceiveCount`` visibility timeouts) would expire it on arrival; a DynamoDB stream
  keeps its records 24 hours (``STREAM_RETENTION_HOURS``), so no record grows older (the rule of
  ``summary_max_record_age_hours``, and with it the iterator-age alarm's).
- **Props that do not apply to the mode** (``not_applying``): the standard queue's event source
  (``ingest_batch_size``, ``ingest_batching_window_seconds``, ``ingest_max_concurrency``) with
  ``queue_type="fifo"``, the FIFO queue's (``fifo_batch_size``, ``fifo_max_concurrency``) with a
  standard queue, ``read_capacity`` / ``write_capacity`` without ``billing="provisioned"``, and
  ``ledger_mode="per-message"`` where no ledger is kept (FIFO, at-least-once). Given
  as props or context they are refused (``PipelineShape.from_props``, ``from_context``), as AWS
  Solutions Constructs' ``Check*Props`` refuse contradictory props; in a ``PipelineShape`` handed to
  the construct whole, a value other than the default is a warning at synth (``Annotations``), since
  a shape cannot tell a value given from a default.

The visibility timeout needs no check of its own: it is derived as 6 x the ingest timeout + the
batching window, always above both (AWS's guidance for an SQS event source); nor does the markers'
lifetime, derived from the retentions (``PipelineShape.marker_ttl_seconds``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from sensor_digest.ingest.service import DEADLINE_MARGIN_SECONDS

if TYPE_CHECKING:
    from sensor_digest_cdk.shape import PipelineShape

INGEST_MIN_WORK_SECONDS = 2
"""The least time ingest must have to count in, after its margin: a batch's lookups and its first
transactions, each a few tens of milliseconds, with a retry of a contended one."""
INGEST_MIN_TIMEOUT_SECONDS = math.ceil(DEADLINE_MARGIN_SECONDS) + INGEST_MIN_WORK_SECONDS
INGEST_TIMEOUT_WHY = (
    f"ingest keeps {DEADLINE_MARGIN_SECONDS:g} s before its timeout free for its answer and logs and needs "
    f"{INGEST_MIN_WORK_SECONDS} s more to count; Lambda's longest timeout is 900 s"
)
STREAM_RETENTION_HOURS = 24
"""How long a DynamoDB stream keeps a record."""

Combination = tuple[tuple[str, ...], bool, str]
"""The fields involved, whether the shape passes, what is allowed (as ``PipelineShape._combinations``)."""

_STANDARD_EVENT_SOURCE = ("ingest_batch_size", "ingest_batching_window_seconds", "ingest_max_concurrency")
_FIFO_EVENT_SOURCE = ("fifo_batch_size", "fifo_max_concurrency")
_CAPACITY = ("read_capacity", "write_capacity")


def combinations(shape: PipelineShape, k: Callable[[str], str]) -> list[Combination]:
    """What the functions and queues need of values each in range (keys named by ``k``)."""
    floor = shape.queue_age_floor_seconds
    dead_letter_retention = shape.dead_letter_retention_days * 24 * 3600
    return [
        (
            ("dead_letter_retention_days", "max_receive_count"),
            shape.fifo or dead_letter_retention > floor,
            f"a message failing every receive is {k('max_receive_count')} x the visibility timeout ({floor} s) old "
            "when SQS moves it to the dead-letter queue, which keeps a standard message's first enqueue time: "
            f"{k('dead_letter_retention_days')} ({dead_letter_retention} s) must be longer, or it expires there at "
            f"once; raise {k('dead_letter_retention_days')}, or lower {k('max_receive_count')} or "
            f"{k('ingest_timeout_seconds')}",
        ),
    ]


def not_applying(shape: PipelineShape, k: Callable[[str], str]) -> dict[str, str]:
    """Each field that does not apply to ``shape``'s mode and holds a value other than what the mode
    does instead (``ingest_batching_window_seconds=0`` on FIFO is what FIFO does), with why (keys
    named by ``k``)."""
    why: dict[str, str] = {}
    if shape.fifo:
        said = (
            f"{k('queue_type')}='fifo' reads its queue with {k('fifo_batch_size')} and {k('fifo_max_concurrency')} "
            "(Lambda allows a FIFO event source no batching window)"
        )
        why.update(dict.fromkeys(_STANDARD_EVENT_SOURCE, said))
    else:
        said = f"{k('fifo_batch_size')} and {k('fifo_max_concurrency')} apply with {k('queue_type')}='fifo' only"
        why.update(dict.fromkeys(_FIFO_EVENT_SOURCE, said))
    if shape.billing != "provisioned":
        said = f"capacity applies with {k('billing')}='provisioned' only (on-demand tables have none to set)"
        why.update(dict.fromkeys(_CAPACITY, said))
    if shape.fifo or shape.delivery_mode == "at-least-once":
        mode = f"{k('queue_type')}='fifo'" if shape.fifo else f"{k('delivery_mode')}='at-least-once'"
        why["ledger_mode"] = (
            f"{k('ledger_mode')} applies to exactly-once on a standard queue only ({mode} has no ledger)"
        )
    instead: dict[str, object] = {
        "ledger_mode": "compact",
        "ingest_batch_size": shape.event_batch_size,
        "fifo_batch_size": shape.event_batch_size,
        "ingest_batching_window_seconds": shape.event_batching_window_seconds,
        "ingest_max_concurrency": shape.event_max_concurrency,
        "fifo_max_concurrency": shape.event_max_concurrency,
    }
    return {name: said for name, said in why.items() if getattr(shape, name) != instead.get(name, object())}


def given_not_applying(shape: PipelineShape, given: Iterable[str], k: Callable[[str], str], what: str) -> list[str]:
    """One refusal per field in ``given`` (props or context keys a caller set, each in its range)
    that does not apply to the mode."""
    skipped = not_applying(shape, k)
    return [
        f"{what} {k(name)}={getattr(shape, name)!r} does not apply: {skipped[name]}"
        for name in given
        if name in skipped
    ]


def overridden_not_applying(shape: PipelineShape, k: Callable[[str], str]) -> list[str]:
    """A warning per field that does not apply to ``shape``'s mode yet differs from its default."""
    defaults = type(shape)()
    return [
        f"{k(name)}={getattr(shape, name)!r} does not apply and is ignored: {why}"
        for name, why in not_applying(shape, k).items()
        if getattr(shape, name) != getattr(defaults, name)
    ]
