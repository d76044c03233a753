"""The in-process SQS's queue model: queues, their messages and SQS's semantics over them (receive,
visibility, redrive, FIFO groups and deduplication, message moves), with no botocore in sight.
``sqs_broker.py`` serves it to boto3 clients; see there for what of SQS is kept.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sensor_digest.dead_letter_format import SQS_MAX_MESSAGE_BYTES, attribute_name_ok, message_size

REGION = "us-east-1"
ACCOUNT = "000000000000"
DEDUPLICATION_WINDOW_SECONDS = 300.0
FIRST_SEQUENCE_NUMBER = 18_849_496_460_467_696_128  # as in AWS's example event: 20 digits
ENDPOINT = "http://sqs.in-process.invalid"


@dataclass
class _Message:
    message_id: str
    body: str
    attributes: dict[str, Any]
    sent_ms: int
    receive_count: int = 0
    first_receive_ms: int | None = None
    visible_at: float = 0.0
    receipt: str | None = None
    group_id: str | None = None
    deduplication_id: str | None = None
    sequence_number: str | None = None


@dataclass
class _Queue:
    name: str
    visibility_timeout: float
    dead_letter: str | None = None
    max_receive_count: int | None = None
    max_message_bytes: int = SQS_MAX_MESSAGE_BYTES
    fifo: bool = False
    messages: OrderedDict[str, _Message] = field(default_factory=OrderedDict)
    # FIFO: (group, deduplication id) -> (when it stops counting, the first message sent with them)
    deduplicated: dict[tuple[str, str], tuple[float, _Message]] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"{ENDPOINT}/{ACCOUNT}/{self.name}"

    @property
    def arn(self) -> str:
        return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{self.name}"


class QueueDoesNotExist(KeyError):
    pass


class MessageTooLong(ValueError):
    """SQS's ``InvalidParameterValue`` for a body plus attributes past ``MaximumMessageSize``."""


class InvalidAttributeName(ValueError):
    """SQS's ``InvalidParameterValue`` for a message attribute name SQS does not take."""


class InvalidRequest(ValueError):
    """A request SQS refuses with error ``code``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class InvalidFifoRequest(InvalidRequest):
    """SQS's ``MissingParameter`` / ``InvalidParameterValue`` for what a FIFO queue requires."""


MAX_VISIBILITY_SECONDS = 43_200


def md5(text: str) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


class SqsQueues:
    """The queues and their messages, with SQS's semantics (see ``sqs_broker.py`` for what is kept)."""

    def __init__(self, clock: Callable[[], float] = time.time, ticks: Callable[[], float] = time.monotonic) -> None:
        self._queues: dict[str, _Queue] = {}
        self._lock = threading.Lock()
        self._sequence = itertools.count(FIRST_SEQUENCE_NUMBER)
        self.clock = clock  # the timestamps SQS reports (epoch seconds)
        self.ticks = ticks  # visibility timeouts and the deduplication window (seconds, only growing)

    def _now_ms(self) -> int:
        return int(self.clock() * 1000)

    # -- the queue model ------------------------------------------------------------------

    def create_queue(
        self,
        name: str,
        *,
        visibility_timeout: float = 30,
        dead_letter_url: str | None = None,
        max_receive_count: int | None = None,
        max_message_bytes: int = SQS_MAX_MESSAGE_BYTES,
        fifo: bool = False,
    ) -> str:
        if fifo != name.endswith(".fifo"):
            raise InvalidFifoRequest("InvalidParameterValue", "a FIFO queue's name, and only its, ends in .fifo")
        dead_letter = self._queue(dead_letter_url) if dead_letter_url else None
        if dead_letter is not None and dead_letter.fifo != fifo:
            raise InvalidFifoRequest("InvalidParameterValue", "a queue and its dead-letter queue must be of one type")
        queue = _Queue(
            name,
            visibility_timeout,
            dead_letter.name if dead_letter else None,
            max_receive_count,
            max_message_bytes,
            fifo,
        )
        with self._lock:
            self._queues[name] = queue
        return queue.url

    def _queue(self, url: str) -> _Queue:
        try:
            return self._queues[url.rstrip("/").rsplit("/", 1)[-1]]
        except KeyError:
            raise QueueDoesNotExist(url) from None

    def send(
        self,
        url: str,
        body: str,
        attributes: dict[str, Any] | None = None,
        *,
        group_id: str | None = None,
        deduplication_id: str | None = None,
    ) -> _Message:
        """The message as queued (on a FIFO queue, the first one when this is a duplicate)."""
        queue = self._queue(url)
        bad = next((name for name in attributes or {} if not attribute_name_ok(name)), None)
        if bad is not None:  # SQS refuses the message: letters, digits, '-', '_', '.'; no AWS./Amazon.
            raise InvalidAttributeName(f"The message attribute name '{bad}' is invalid.")
        size = message_size(body, attributes)
        if size > queue.max_message_bytes:  # SQS counts the attributes' names, types and values too
            raise MessageTooLong(
                f"One or more parameters are invalid. Reason: Message must be shorter than "
                f"{queue.max_message_bytes} bytes (this one, with its attributes, has {size})."
            )
        message = _Message(str(uuid.uuid4()), body, dict(attributes or {}), self._now_ms())
        with self._lock:
            if queue.fifo:
                first = self._deduplicate(queue, group_id, deduplication_id, message)
                if first is not None:
                    return first
            queue.messages[message.message_id] = message
        return message

    def _deduplicate(
        self, queue: _Queue, group_id: str | None, deduplication_id: str | None, message: _Message
    ) -> _Message | None:
        """Number a FIFO message, or return the one it duplicates (same group and deduplication id
        within the window). Called under the lock."""
        if not group_id:
            raise InvalidFifoRequest("MissingParameter", "The request must contain the parameter MessageGroupId.")
        if not deduplication_id:
            raise InvalidFifoRequest(
                "InvalidParameterValue",
                "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided "
                "explicitly",
            )
        now = self.ticks()
        key = (group_id, deduplication_id)
        seen = queue.deduplicated.get(key)
        if seen is not None and seen[0] > now:
            return seen[1]  # deleted since, or not: SQS answers with the first one's id and number
        queue.deduplicated[key] = (now + DEDUPLICATION_WINDOW_SECONDS, message)
        message.group_id, message.deduplication_id = group_id, deduplication_id
        message.sequence_number = str(next(self._sequence))
        return None

    def receive(self, url: str, max_messages: int = 1, visibility_timeout: float | None = None) -> list[_Message]:
        queue = self._queue(url)
        timeout = queue.visibility_timeout if visibility_timeout is None else visibility_timeout
        now = self.ticks()
        received: list[_Message] = []
        with self._lock:
            for message in self._candidates(queue, now):
                if len(received) >= max_messages:
                    break
                if queue.max_receive_count is not None and message.receive_count >= queue.max_receive_count:
                    self._move_to_dead_letter(queue, message)
                    continue
                message.receive_count += 1
                message.first_receive_ms = message.first_receive_ms or self._now_ms()
                message.visible_at = now + timeout
                message.receipt = f"{message.message_id}#{message.receive_count}#{uuid.uuid4().hex[:8]}"
                received.append(message)
        return received

    @staticmethod
    def _candidates(queue: _Queue, now: float) -> list[_Message]:
        """Messages a receive may return, in the order it takes them. Standard: every visible one.
        FIFO: the messages of the groups with none in flight (an earlier or a later one), the groups
        in the order of their oldest message, each group's run whole before the next (SQS returns as
        many messages of one group as it can)."""
        if not queue.fifo:
            return [m for m in queue.messages.values() if m.visible_at <= now]
        blocked = {str(m.group_id) for m in queue.messages.values() if m.visible_at > now}
        runs: dict[str, list[_Message]] = {}
        for message in queue.messages.values():
            if str(message.group_id) not in blocked:
                runs.setdefault(str(message.group_id), []).append(message)
        return [m for run in runs.values() for m in run]

    def _move_to_dead_letter(self, queue: _Queue, message: _Message) -> None:
        del queue.messages[message.message_id]
        if queue.dead_letter is not None:
            moved = _Message(
                message.message_id, message.body, message.attributes, message.sent_ms, message.receive_count
            )
            if queue.fifo:  # the group goes along, the deduplication id becomes the message id (as SQS
                # documents: two messages that shared one must both be kept); the dead-letter queue numbers it
                moved.group_id, moved.deduplication_id = message.group_id, message.message_id
                moved.sequence_number = str(next(self._sequence))
            self._queues[queue.dead_letter].messages[moved.message_id] = moved

    def move_messages(self, source_arn: str, destination_arn: str | None = None) -> int:
        """SQS's own redrive: every message of dead-letter queue ``source_arn`` to ``destination_arn``
        (default: the queue whose dead-letter queue it is), each a new message (new id, sent now)
        with its body and attributes; a FIFO message keeps its group and deduplication id."""
        with self._lock:
            source = self._by_arn(source_arn)
            if destination_arn is None:
                origins = [q for q in self._queues.values() if q.dead_letter == source.name]
                if len(origins) != 1:
                    raise InvalidFifoRequest("InvalidParameterValue", "the source queue's origin is not known")
                destination = origins[0]
            else:
                destination = self._by_arn(destination_arn)
            moved = list(source.messages.values())
            source.messages.clear()
        for message in moved:
            self.send(
                destination.url,
                message.body,
                message.attributes,
                group_id=message.group_id,
                deduplication_id=message.deduplication_id,
            )
        return len(moved)

    def _by_arn(self, arn: str) -> _Queue:
        name = arn.rsplit(":", 1)[-1]
        if name not in self._queues:
            raise QueueDoesNotExist(arn)
        return self._queues[name]

    def delete(self, url: str, receipt: str) -> None:
        queue = self._queue(url)
        message_id = receipt.split("#", 1)[0]
        with self._lock:
            message = queue.messages.get(message_id)
            if message is not None and message.receipt == receipt:
                del queue.messages[message_id]

    def change_visibility(self, url: str, receipt: str, timeout: float) -> None:
        """As SQS: 0 to 12 hours, only for a message in flight (``MessageNotInflight`` otherwise); an
        older receipt handle changes nothing."""
        if not 0 <= timeout <= MAX_VISIBILITY_SECONDS:
            raise InvalidRequest("InvalidParameterValue", f"VisibilityTimeout {timeout:g} is not 0 to 43200")
        queue = self._queue(url)
        with self._lock:
            message = queue.messages.get(receipt.split("#", 1)[0])
            if message is not None and message.receipt == receipt:
                now = self.ticks()
                if message.visible_at <= now:
                    raise InvalidRequest("MessageNotInflight", "the message is not in flight")
                message.visible_at = now + timeout

    def counts(self, url: str) -> tuple[int, int]:
        """(visible, in flight)."""
        queue = self._queue(url)
        now = self.ticks()
        with self._lock:
            in_flight = sum(1 for m in queue.messages.values() if m.visible_at > now)
            return len(queue.messages) - in_flight, in_flight
