"""What a shape needs beyond each value's range: the combinations AWS refuses, what the functions need
to do their job, and which props do not apply to the mode a shape chooses; every problem of a shape,
one line each (``problems``). CDK-free, over the unchecked ``Tunables`` (``PipelineShape`` asks it).

- **Combinations** (``combinations``): what AWS refuses of values each in range (a batch of more than
  10 without a window, a visibility timeout past 12 h, a retention too short for the retries), the
  pair ingest itself refuses (``config.ordered_at_least_once``), and what the functions and queues
  need: SQS keeps a standard message's first enqueue time when it moves it to the dead-letter queue,
  so a dead-letter retention no longer than the time a failing message takes to get there
  (``maxReceiveCount`` visibility timeouts) would expire it on arrival.
- **Props that do not apply to the mode** (``not_applying``): the standard queue's event source
  (``ingest_batch_size``, ``ingest_batching_window_seconds``, ``ingest_max_concurrency``) with
  ``queue_type="fifo"``, the FIFO queue's (``fifo_batch_size``, ``fifo_max_concurrency``) with a
  standard queue, ``read_capacity`` / ``write_capacity`` without ``billing="provisioned"``, and
  ``ledger_mode="per-message"`` where no ledger is kept (FIFO, at-least-once). Given
  as props or context they are refused (``PipelineShape.from_props``, ``context.py``), as AWS
  Solutions Constructs' ``Check*Props`` refuse contradictory props; in a ``PipelineShape`` handed to
  the construct whole, a value other than the default is a warning at synth (``Annotations``), since
  a shape cannot tell a value given from a default.
- **A restricted queue admits someone** (``admits_no_sender``): the app refuses it at its context,
  the construct at synth (where ``grant_send`` may have admitted someone since).

The visibility timeout needs no check of its own: it is derived as 6 x the ingest timeout + the
batching window, always above both (AWS's guidance for an SQS event source); nor does the markers'
lifetime, derived from the retentions (``PipelineShape.marker_ttl_seconds``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sensor_digest.config import ordered_at_least_once
from sensor_digest_cdk.rules import SQS_MAX_VISIBILITY_TIMEOUT_SECONDS, refused, shown
from sensor_digest_cdk.tunables import KIND, RULES, Tunables

Combination = tuple[tuple[str, ...], bool, str]
"""The fields involved, whether the shape passes, what is allowed."""

_STANDARD_EVENT_SOURCE = ("ingest_batch_size", "ingest_batching_window_seconds", "ingest_max_concurrency")
_FIFO_EVENT_SOURCE = ("fifo_batch_size", "fifo_max_concurrency")
_CAPACITY = ("read_capacity", "write_capacity")


def combinations(shape: Tunables, k: Callable[[str], str]) -> list[Combination]:
    """What AWS, ingest or the pipeline's sense refuses of values each in range (keys named by ``k``)."""
    visibility = shape.visibility_timeout_seconds
    retention = shape.queue_retention_days * 24 * 3600
    dead_letter_retention = shape.dead_letter_retention_days * 24 * 3600
    floor = shape.queue_age_floor_seconds
    derived = shape.derived_queue_age_alarm_seconds
    ordered = ordered_at_least_once(shape.queue_type, shape.delivery_mode, k("queue_type"), k("delivery_mode"))
    return [
        (("delivery_mode", "queue_type"), ordered is None, ordered or ""),
        (
            ("iot_topic", "queue_type"),
            not (shape.fifo and shape.iot_topic),
            f"AWS IoT's SQS action cannot send to a FIFO queue: {k('iot_topic')} needs {k('queue_type')}=standard",
        ),
        (
            ("iot_rule_name",),
            not shape.iot_rule_name or bool(shape.iot_topic),
            f"{k('iot_rule_name')} names the rule {k('iot_topic')} adds: give {k('iot_topic')} too",
        ),
        (
            ("iot_readings",),
            not shape.iot_readings or bool(shape.iot_topic),
            f"{k('iot_readings')} maps payload fields into readings in the rule {k('iot_topic')} adds: "
            f"give {k('iot_topic')} too",
        ),
        (
            ("producer_arns", "restrict_producers"),
            not shape.producer_arns or shape.restrict_producers,
            f"{k('producer_arns')} are the only senders the queue admits with {k('restrict_producers')}=true: "
            f"set {k('restrict_producers')} too",
        ),
        (
            ("ingest_batch_size", "ingest_batching_window_seconds"),
            shape.fifo or shape.ingest_batch_size <= 10 or shape.ingest_batching_window_seconds >= 1,
            "Lambda takes more than 10 messages a batch from a standard queue only with a batching window: "
            f"{k('ingest_batching_window_seconds')} of at least 1, or {k('ingest_batch_size')} of at most 10",
        ),
        (
            # cannot happen within the ranges above (6 x 900 s + 300 s), checked all the same
            ("ingest_timeout_seconds", "ingest_batching_window_seconds"),
            visibility <= SQS_MAX_VISIBILITY_TIMEOUT_SECONDS,
            f"the ingest queue's visibility timeout (6 x {k('ingest_timeout_seconds')} + the batching window = "
            f"{visibility} s) must stay within SQS's {SQS_MAX_VISIBILITY_TIMEOUT_SECONDS} s (12 h)",
        ),
        (
            ("max_receive_count", "queue_retention_days"),
            floor < retention,
            f"a message failing every receive stays {k('max_receive_count')} x the visibility timeout "
            f"({shape.max_receive_count} x {visibility} s = {floor} s) in the queue, "
            f"which must be less than the queue's retention ({retention} s), or it expires before it "
            f"reaches the dead-letter queue: lower {k('max_receive_count')} or {k('ingest_timeout_seconds')}, "
            f"or raise {k('queue_retention_days')}",
        ),
        (
            ("max_receive_count", "ingest_timeout_seconds", "queue_retention_days"),
            shape.queue_age_alarm_seconds != 0 or floor >= retention or derived < retention,
            f"the derived stall alarm ({k('max_receive_count')} x the visibility timeout + 300 s, at least "
            f"1800 s: {derived} s) must be less than the queue's retention ({retention} s), or "
            f"no message grows old enough to fire it: raise {k('queue_retention_days')} or lower "
            f"{k('max_receive_count')} or {k('ingest_timeout_seconds')}",
        ),
        (
            ("queue_age_alarm_seconds",),
            shape.queue_age_alarm_seconds == 0 or floor < shape.queue_age_alarm_seconds < retention,
            f"{k('queue_age_alarm_seconds')} takes 0 (derived: {derived} s), or more "
            f"than {k('max_receive_count')} x the visibility timeout ({floor} s: one message's "
            f"retries alone would fire it) and less than the queue's retention ({retention} s: no message "
            "grows older)",
        ),
        (
            ("iterator_age_alarm_seconds", "summary_max_record_age_hours"),
            shape.iterator_age_alarm_seconds < shape.summary_max_record_age_hours * 3600,
            f"{k('iterator_age_alarm_seconds')} must be less than {k('summary_max_record_age_hours')} "
            f"({shape.summary_max_record_age_hours * 3600} s): Lambda gives stream records up at that age, "
            "so the alarm would never fire",
        ),
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


def problems(shape: Tunables, key: Callable[[str], str], skip: Iterable[str], what: str) -> list[str]:
    """One line per problem, keys named by ``key``: a value of the wrong type or out of its range,
    a combination refused. The fields in ``skip`` were unreadable (their defaults stand in), so
    neither they nor a combination involving them is judged."""
    bad = set(skip)
    found: list[str] = []
    for name, rule in RULES.items():
        value = getattr(shape, name)
        if name in bad:
            continue
        if not KIND[name].takes(value):
            found.append(refused(what, key, name, value, rule))
            bad.add(name)
        elif not rule.ok(value):
            hint = rule.hint(value) if rule.hint else ""
            found.append(refused(what, key, name, value, rule) + hint)
            bad.add(name)
    for names, ok, allowed in combinations(shape, key):
        if not ok and not bad.intersection(names):
            given = " with ".join(f"{key(n)}={shown(getattr(shape, n), key)!r}" for n in names)
            found.append(f"{what} {given} is not allowed: {allowed}")
    return found


def acceptable(name: str, value: object) -> bool:
    """Whether ``value`` is of field ``name``'s type and passes its rule."""
    return KIND[name].takes(value) and RULES[name].ok(value)


def admits_no_sender(k: Callable[[str], str], *, construct: bool) -> str:
    """Why a queue restricted to its producers must admit one, keys named by ``k``: in the construct's
    words (``construct``: props, and ``grant_send``, which may admit one until synth) or the app's."""
    flag, how = ("True", "call grant_send(grantee), or give ") if construct else ("true", "give ")
    senders = f"{k('producer_arns')} (role or user ARNs) or {k('iot_topic')} too"
    return f"{k('restrict_producers')}={flag} admits no sender: {how}{senders}"


def not_applying(shape: Tunables, k: Callable[[str], str]) -> dict[str, str]:
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
    if not shape.import_enabled:
        why["import_max_concurrency"] = (
            f"{k('import_max_concurrency')} applies with {k('import_enabled')}=true only (no import is deployed)"
        )
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


def given_not_applying(shape: Tunables, given: Iterable[str], k: Callable[[str], str], what: str) -> list[str]:
    """One refusal per field in ``given`` (props or context keys a caller set, each in its range)
    that does not apply to the mode."""
    skipped = not_applying(shape, k)
    return [
        f"{what} {k(name)}={getattr(shape, name)!r} does not apply: {skipped[name]}"
        for name in given
        if name in skipped
    ]


def overridden_not_applying(shape: Tunables, k: Callable[[str], str]) -> list[str]:
    """A warning per field that does not apply to ``shape``'s mode yet differs from its default."""
    defaults = Tunables()
    return [
        f"{k(name)}={getattr(shape, name)!r} does not apply and is ignored: {why}"
        for name, why in not_applying(shape, k).items()
        if getattr(shape, name) != getattr(defaults, name)
    ]
