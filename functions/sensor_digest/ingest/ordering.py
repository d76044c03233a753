"""What the queue type changes in ingest: how a record is read, and which messages a failure lists.

- ``StandardOrdering`` (a standard queue): a record is its body; the batch item failures are exactly
  the failed ones, in batch order.
- ``FifoGroupOrdering`` (``QUEUE_TYPE=fifo``): each record also carries its ``SequenceNumber``
  and its ``MessageGroupId``, which must be its sensor (``messages.sequenced``); and a group keeps
  its order: once a message of a group is a batch item failure, every later message of that group in the
  batch is one too, as Powertools' ``SqsFifoPartialProcessor(skip_group_on_error=True)`` does (a
  message failed before the writes holds back the rest of its group unwritten).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from sensor_digest.ingest.records import InboundMessage
from sensor_digest.messages import PendingMessage, sequenced


class Ordering(Protocol):
    def read(self, inbound: InboundMessage, pending: PendingMessage) -> PendingMessage:
        """The message with what the queue type adds to it; ``RejectedMessage`` if that is invalid."""
        ...

    def failures(self, messages: Sequence[InboundMessage], failed: Iterable[str]) -> list[str]:
        """The message ids to list for ``failed``, in batch order."""
        ...


def in_batch_order(messages: Sequence[InboundMessage], ids: Iterable[str]) -> list[str]:
    order = {m.message_id: i for i, m in enumerate(messages)}
    return sorted(ids, key=lambda mid: order.get(mid, -1))


class StandardOrdering:
    def read(self, inbound: InboundMessage, pending: PendingMessage) -> PendingMessage:
        return pending

    def failures(self, messages: Sequence[InboundMessage], failed: Iterable[str]) -> list[str]:
        return in_batch_order(messages, failed)


def failures_with_group_tails(messages: Sequence[InboundMessage], listed: Iterable[str]) -> list[str]:
    """The message ids to list so that each group keeps its order: the ``listed`` ones and every
    message after them in their group (in batch order, each once)."""
    failed, blocked, out = set(listed), set(), []
    for message in messages:
        if message.message_id in failed or message.group in blocked:
            blocked.add(message.group)
            out.append(message.message_id)
    return list(dict.fromkeys(out))


class FifoGroupOrdering:
    def read(self, inbound: InboundMessage, pending: PendingMessage) -> PendingMessage:
        return sequenced(
            pending, sequence_number=inbound.sequence_number, group_id=inbound.group_id, source=inbound.source
        )

    def failures(self, messages: Sequence[InboundMessage], failed: Iterable[str]) -> list[str]:
        return failures_with_group_tails(messages, failed)
