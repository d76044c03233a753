"""The dead-letter queue, read as people need it: list (messages stay), drain (removed), redrive,
and stamp.

Each message is read back as a ``DeadLetter``: its body, the reason ingest wrote in the ``error``
attribute (none for a message that SQS moved there after ``maxReceiveCount`` receives), and its
origin (``sensor_digest.dead_letter_format.Origin.of_letter``): the original ``messageId`` and
``SentTimestamp``, from the ``sensor-digest.source_message_id`` and
``sensor-digest.source_sent_timestamp`` attributes where it carries them (or, on a letter an earlier
version wrote, the bare ``source_message_id`` and ``source_sent_timestamp`` it wrote them under),
else its own, which SQS keeps when it moves a message to the dead-letter queue.

A redrive sends each message back with its origin as the two namespaced attributes (its body
unchanged; the ``error`` attribute, the bare names of earlier versions and any attribute of the
producer stay behind), so that ingest counts a report without ``event_id`` by its original id (a
redrive gives the message a new one) and dates a report without ``timestamp`` by its original send
time. SQS's own redrive (``StartMessageMoveTask``, the console's "Start DLQ redrive") keeps a
message's body and attributes but gives it a new ``messageId``, a new ``SentTimestamp`` and a new
retention: it is exact for the dead letters ingest wrote, which carry their origin, and for the
others once ``stamp`` has written their origin on them (letters of earlier versions included: stamp
renames their bare attributes into the namespace, which ingest alone reads).

A pass that stops on the way (Ctrl-C, an endpoint that stops answering) has filled the
``MoveReport`` it was given up to that point: the caller can say how far it got.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from sensor_digest.dead_letter_format import ORIGIN_ATTRIBUTES, REASON_ATTRIBUTE, BadOrigin, Origin, send_batches
from sensor_digest_tools.ops.producer import fifo_fields, is_fifo

PASS_VISIBILITY_SECONDS = 300
"""How long a redrive or a stamp holds the letters it received (a stopped pass's come back after it)."""


@dataclass(frozen=True)
class DeadLetter:
    message_id: str
    body: str
    error: str | None
    source_message_id: str
    receipt_handle: str
    source_sent_timestamp: str | None = None
    group_id: str | None = None
    stamped: bool = False  # it carries its origin as the namespaced attributes already
    attributes: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_message(cls, message: dict[str, Any]) -> DeadLetter:
        attributes = message.get("MessageAttributes") or {}
        system = message.get("Attributes") or {}
        own = Origin(message["MessageId"], system.get("SentTimestamp"))
        try:
            origin = Origin.of_letter(own.message_id, own.sent_timestamp, attributes)
        except BadOrigin:  # an attribute that is not an origin: the message's own
            origin = own
        return cls(
            message_id=message["MessageId"],
            body=message["Body"],
            error=attributes.get(REASON_ATTRIBUTE, {}).get("StringValue"),
            source_message_id=origin.message_id,
            receipt_handle=message["ReceiptHandle"],
            source_sent_timestamp=origin.sent_timestamp,
            group_id=system.get("MessageGroupId"),
            stamped=all(name in attributes for name in ORIGIN_ATTRIBUTES),
            attributes=attributes,
        )

    @property
    def origin(self) -> Origin:
        return Origin(self.source_message_id, self.source_sent_timestamp)


@dataclass
class MoveReport:
    """What a redrive (or a stamp) did: messages moved, those left in place with the reason, and
    (a redrive) those that came back: letters whose origin this pass had sent already, rejected
    again while it ran, which stay in the dead-letter queue."""

    moved: int = 0
    left: list[tuple[str, str]] = field(default_factory=list)  # (message id, why it stayed)
    came_back: int = 0


def _batches(sqs: Any, url: str, limit: int, visibility: int = 30) -> Iterator[list[tuple[DeadLetter, bool]]]:
    """The messages of each receive (each once, up to ``limit`` in all), each with whether it was
    seen before in this pass. A caller that stops between two batches leaves nothing it was not
    given in flight."""
    seen: set[str] = set()
    while len(seen) < limit:
        got = sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=min(10, limit - len(seen)),
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
            VisibilityTimeout=visibility,
            WaitTimeSeconds=0,
        ).get("Messages", [])
        if not got:
            return
        batch: list[tuple[DeadLetter, bool]] = []
        for message in got:
            letter = DeadLetter.from_message(message)
            batch.append((letter, letter.message_id in seen))
            seen.add(letter.message_id)
        yield batch
        if all(repeat for _, repeat in batch):
            return


def _receive(sqs: Any, url: str, limit: int, visibility: int = 30) -> Iterator[tuple[DeadLetter, bool]]:
    """Each message once (up to ``limit``), with whether it was seen before in this pass."""
    for batch in _batches(sqs, url, limit, visibility):
        yield from batch


def queue_depth(sqs: Any, url: str) -> int | None:
    """How many messages the queue holds, visible or in flight (SQS's approximate counts), or
    ``None`` when SQS does not say."""
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    try:
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names).get("Attributes", {})
        return sum(int(attributes[name]) for name in names)
    except (ClientError, KeyError, ValueError):
        return None


def _release(sqs: Any, url: str, letters: list[DeadLetter]) -> None:
    """Make ``letters`` visible again, best effort: a letter whose hold ran out meanwhile (a long
    pass) is visible already, and SQS may refuse its old receipt handle; an endpoint that does not
    answer is not asked again (the letters come back when their hold ends); nothing is lost either way."""
    for letter in letters:
        try:
            sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=letter.receipt_handle, VisibilityTimeout=0)
        except ClientError:
            continue
        except BotoCoreError:
            return


def list_dead_letters(sqs: Any, url: str, *, limit: int = 10_000) -> list[DeadLetter]:
    """The queue's messages; they stay in it (made visible again once all are read: a FIFO queue
    would hand the same group's first messages back at once otherwise). On a FIFO queue a receive
    returns no message of a group while an earlier one is in flight, so past the first ten of a
    group (SQS's most per receive) a listing cannot see them; ``drain`` and ``redrive`` can."""
    out: list[DeadLetter] = []
    try:
        for letter, repeat in _receive(sqs, url, limit):
            if not repeat:
                out.append(letter)
    finally:
        _release(sqs, url, out)
    return out


def drain_dead_letters(sqs: Any, url: str, *, limit: int = 10_000) -> list[DeadLetter]:
    """The queue's messages, deleted from it as they are read."""
    out: list[DeadLetter] = []
    for letter, repeat in _receive(sqs, url, limit):
        sqs.delete_message(QueueUrl=url, ReceiptHandle=letter.receipt_handle)
        if not repeat:
            out.append(letter)
    return out


def _entry(entry_id: str, letter: DeadLetter, *, fifo: bool, tag: str, keep_reason: bool) -> dict[str, Any]:
    """A letter as a ``SendMessageBatch`` entry: its body and its origin (and its reason, when it
    stays a dead letter); on a FIFO queue also its group, and a deduplication id of its own."""
    attributes = letter.origin.attributes()
    if keep_reason and REASON_ATTRIBUTE in letter.attributes:
        attributes[REASON_ATTRIBUTE] = letter.attributes[REASON_ATTRIBUTE]
    entry: dict[str, Any] = {"Id": entry_id, "MessageBody": letter.body, "MessageAttributes": attributes}
    if fifo:
        entry["MessageGroupId"] = letter.group_id or fifo_fields(letter.body, letter.message_id)["MessageGroupId"]
        entry["MessageDeduplicationId"] = hashlib.sha256(f"{tag}:{letter.message_id}".encode()).hexdigest()
    return entry


def _move(sqs: Any, source: str, destination: str, letters: list[DeadLetter], report: MoveReport, tag: str) -> None:
    """Send ``letters`` to ``destination`` in batches, and delete each from ``source`` once SQS took
    it; a letter SQS refused stays in ``source``, with the reason in ``report``."""
    fifo, same_queue = is_fifo(destination), destination == source
    by_id = {str(i): letter for i, letter in enumerate(letters)}
    entries = [_entry(i, m, fifo=fifo, tag=tag, keep_reason=same_queue) for i, m in by_id.items()]
    for batch in send_batches(entries):
        try:
            response = sqs.send_message_batch(QueueUrl=destination, Entries=batch)
        except ClientError as exc:  # the whole request refused: these stay where they are
            reason = exc.response.get("Error", {}).get("Message", str(exc))
            response = {"Failed": [{"Id": e["Id"], "Message": reason} for e in batch]}
        sent = [by_id[ok["Id"]] for ok in response.get("Successful", [])]
        if sent:
            sqs.delete_message_batch(
                QueueUrl=source, Entries=[{"Id": str(i), "ReceiptHandle": m.receipt_handle} for i, m in enumerate(sent)]
            )
        report.moved += len(sent)
        for failed in response.get("Failed", []):
            report.left.append((by_id[failed["Id"]].message_id, str(failed.get("Message") or failed.get("Code"))))


def _move_or_release(
    sqs: Any, source: str, destination: str, letters: list[DeadLetter], report: MoveReport, tag: str
) -> None:
    """``_move``; stopped on the way (Ctrl-C, an endpoint that stops answering), the letters it held are
    made visible again at once rather than after the pass's hold (a letter sent and not yet deleted
    then moves again on the next pass, and counts once: it carries its origin)."""
    try:
        _move(sqs, source, destination, letters, report, tag)
    except BaseException:
        _release(sqs, source, letters)
        raise


def _each_ten(sqs: Any, url: str, limit: int) -> Iterator[list[DeadLetter]]:
    """The queue's messages ten at a time, each once (they stay invisible for the pass)."""
    chunk: list[DeadLetter] = []
    for letter, repeat in _receive(sqs, url, limit, visibility=PASS_VISIBILITY_SECONDS):
        if not repeat:
            chunk.append(letter)
        if len(chunk) == 10:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def redrive(
    sqs: Any,
    source: str,
    destination: str,
    *,
    limit: int = 10_000,
    dry_run: bool = False,
    select: Callable[[DeadLetter], bool] | None = None,
    at_most: int | None = None,
    report: MoveReport | None = None,
) -> MoveReport:
    """Move messages back to ``destination`` with their origin (see the module's docstring): each
    is deleted from ``source`` only once SQS took it; one SQS refuses (too large to carry its origin
    beside its body) stays in ``source``, named in the report. ``dry_run``: count, move nothing.
    ``select``: only the letters it accepts move; the others stay where they are.

    A pass moves each dead letter at most once, and no more than were there when it began: while
    the pipeline runs, a letter it sent back may be rejected again and return to ``source`` with a
    new message id but its origin; the pass leaves such a letter where it is (counted in
    ``came_back``), and it stops once it has moved ``at_most`` letters (by default the queue's depth
    as SQS counts it at the start), so letters that arrive meanwhile wait for the next pass.
    ``report``: filled as the pass goes (a caller that is interrupted still knows how many moved)."""
    report = report if report is not None else MoveReport()
    untouched: list[DeadLetter] = []
    sent: set[str] = set()  # the origins this pass moved
    bound = queue_depth(sqs, source) if at_most is None and not dry_run else at_most
    try:
        for batch in _batches(sqs, source, limit, visibility=PASS_VISIBILITY_SECONDS):
            every = [letter for letter, repeat in batch if not repeat]
            chunk: list[DeadLetter] = []
            for letter in every:
                full = bound is not None and len(sent) >= bound
                if full or (select is not None and not select(letter)):
                    untouched.append(letter)
                elif letter.source_message_id in sent:  # it came back: it stays
                    untouched.append(letter)
                    report.came_back += 1
                else:
                    sent.add(letter.source_message_id)
                    chunk.append(letter)
            if chunk:
                if dry_run:
                    untouched += chunk
                    report.moved += len(chunk)
                else:
                    _move_or_release(sqs, source, destination, chunk, report, "redrive")
                    left = {message_id for message_id, _ in report.left}
                    untouched += [m for m in chunk if m.message_id in left]
            if bound is not None and len(sent) >= bound:
                break
    finally:
        _release(sqs, source, untouched)
    return report


def moved_by_sqs(letter: DeadLetter) -> bool:
    """A message SQS moved to the dead-letter queue itself, after ``maxReceiveCount`` receives: one
    without the ``error`` attribute ingest writes on those it rejects."""
    return letter.error is None


@dataclass(frozen=True)
class RedrivePlan:
    """What a redrive would move now: how many messages, and how many of them SQS moved there itself."""

    messages: int
    moved_by_sqs: int


def plan_redrive(
    sqs: Any, source: str, *, limit: int = 10_000, select: Callable[[DeadLetter], bool] | None = None
) -> RedrivePlan:
    """``redrive``'s dry run with the same ``limit`` and ``select``, counted: nothing moves, every
    message read is made visible again. Messages that arrive or leave meanwhile change the count."""
    chosen: list[DeadLetter] = []

    def pick(letter: DeadLetter) -> bool:
        if select is None or select(letter):
            chosen.append(letter)
            return True
        return False

    redrive(sqs, source, source, limit=limit, dry_run=True, select=pick)
    return RedrivePlan(messages=len(chosen), moved_by_sqs=sum(moved_by_sqs(letter) for letter in chosen))


def stamp(sqs: Any, url: str, *, limit: int = 10_000, report: MoveReport | None = None) -> MoveReport:
    """Write its origin on every message of the dead-letter queue that lacks it under the namespaced
    names (those SQS moved there itself, and the letters of earlier versions, whose bare names ingest
    no longer reads): each is sent again to the same queue with the ``sensor-digest.source_message_id``
    and ``sensor-digest.source_sent_timestamp`` attributes (and its ``error``, if any), and the
    original deleted once SQS took the copy. Then SQS's own redrive keeps a report's identity and
    time, as this project's redrive does. The copy is a new message: its retention starts again
    (the ledger's markers live long enough for that: ``PipelineShape.marker_ttl_seconds``)."""
    report = report if report is not None else MoveReport()
    untouched: list[DeadLetter] = []
    try:
        for chunk in _each_ten(sqs, url, limit):
            untouched += [m for m in chunk if m.stamped]
            _move_or_release(sqs, url, url, [m for m in chunk if not m.stamped], report, "stamp")
            left = {message_id for message_id, _ in report.left}
            untouched += [m for m in chunk if m.message_id in left]
    finally:
        _release(sqs, url, untouched)
    return report
