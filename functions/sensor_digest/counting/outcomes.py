"""What counting hands back and how repeats are decided: a sensor-day (``DayKey``), one group's
parameters (``Group``) and outcome (``GroupOutcome``), the lookup before a batch's writes
(``Lookup``), a batch's count (``BatchCount``), and ``leaders`` / ``share_leaders_fate``: which message
of a repeated identity is written, and the fate its repeats share.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field

from sensor_digest.errors import RefusedWrite, StoreFault
from sensor_digest.messages import SensorMessage
from sensor_digest.store.day_view import DayKey
from sensor_digest.store.expressions import within_limits


@dataclass(frozen=True)
class Group:
    """One sensor-day's messages as ``DayCounter.count_group`` takes them.

    ``missing``: a read found no day item, so the first write starts at the insert. ``deadline``
    (the counter's clock): no write starts that could not end before it. ``may_defer``: messages whose
    write met another writer may be handed back (``GroupOutcome.deferred``) to be written at the end of
    the batch."""

    sensor_id: int
    day: str
    messages: Sequence[SensorMessage]
    deadline: float | None = None
    missing: bool = False
    may_defer: bool = False

    @property
    def key(self) -> DayKey:
        return (self.sensor_id, self.day)


@dataclass
class GroupOutcome:
    """What became of each message of one sensor-day group."""

    counted: list[SensorMessage] = field(default_factory=list)
    duplicates: list[SensorMessage] = field(default_factory=list)
    failed: list[SensorMessage] = field(default_factory=list)
    rejected: list[SensorMessage] = field(default_factory=list)  # their day item refuses the count
    deferred: list[SensorMessage] = field(default_factory=list)  # met another writer: written again at the end
    reason: str | None = None
    repair: str | None = None  # how to mend the item that refused the write, when not its DataCount
    refused_by: str | None = None  # the attribute of the item that refused it, when known
    refused_names: tuple[str, ...] = ()  # the reading names at fault, when that attribute is Readings

    def give_up(self, messages: Sequence[SensorMessage], fault: StoreFault) -> None:
        """``messages`` could not be written: failed (redelivered later), or, when DynamoDB refused
        the write as invalid (``RefusedWrite``: retrying cannot help), rejected with the reason."""
        (self.rejected if isinstance(fault, RefusedWrite) else self.failed).extend(messages)
        self.reason = fault.reason
        self.repair = fault.repair if isinstance(fault, RefusedWrite) else None
        self.refused_by = fault.attribute if isinstance(fault, RefusedWrite) else None

    requests: int = 0
    steps: list[str] = field(default_factory=list)
    retries: int = 0
    insert_refused: bool = False  # the insert found the day item there (another writer created it)


@dataclass
class Lookup:
    """What the reads before a batch's writes found: ledger keys already counted, sensor-days
    whose day item does not exist yet, and the requests it took."""

    counted_before: set[str] = field(default_factory=set)
    missing_days: set[DayKey] = field(default_factory=set)
    requests: int = 0


@dataclass
class BatchCount:
    """What ``count_batch`` did: the messages the lookup proved counted before, each group's
    outcome, and the lookup's requests."""

    known_duplicates: list[SensorMessage] = field(default_factory=list)
    groups: list[tuple[DayKey, GroupOutcome]] = field(default_factory=list)
    lookup_requests: int = 0


def leaders(
    messages: Sequence[SensorMessage], *, key: Callable[[SensorMessage], Hashable | None]
) -> tuple[list[SensorMessage], dict[Hashable, list[SensorMessage]]]:
    """The one place that decides which message of a repeated identity is written: the first in
    order leads (is written), its repeats follow it and share its fate. ``key`` is the identity (a
    ledger key: a transaction may touch an item once; a sequence number: one SQS message; across a
    batch, ``DayCounter.identity``); ``None`` makes every message a leader (at least once). The
    leaders in order, and the followers by identity (each list without its leader)."""
    first: dict[Hashable, SensorMessage] = {}
    followers: dict[Hashable, list[SensorMessage]] = {}
    order: list[SensorMessage] = []
    for message in messages:
        identity = key(message)
        if identity is None:
            order.append(message)
        elif identity in first:
            followers.setdefault(identity, []).append(message)
        else:
            first[identity] = message
            order.append(message)
    return order, followers


def share_leaders_fate(
    followers: dict[Hashable, list[SensorMessage]],
    outcome: GroupOutcome,
    *,
    key: Callable[[SensorMessage], Hashable],
) -> None:
    """A repeat of a counted (or already known) message is a duplicate; of a failed one, failed; of a
    rejected one, rejected."""
    if not followers:
        return
    failed_keys, rejected_keys = {key(m) for m in outcome.failed}, {key(m) for m in outcome.rejected}
    for identity, repeats in followers.items():
        if identity in failed_keys:
            outcome.failed.extend(repeats)
        elif identity in rejected_keys:
            outcome.rejected.extend(repeats)
        else:
            outcome.duplicates.extend(repeats)


def write_chunks(messages: Sequence[SensorMessage], most: int, *, identities: bool) -> Iterator[list[SensorMessage]]:
    """``messages`` in order, cut into the chunks one write each carries: at most ``most`` messages, and
    no more hours, reading names and (name, hour) pairs than a write's expressions hold (with an
    identity checked per message where ``identities``; ``expressions.fits``)."""
    chunk: list[SensorMessage] = []
    hours: set[str] = set()
    names: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for message in messages:
        more_names = names | {name for name, _ in message.readings}
        more_pairs = pairs | {(name, message.hour) for name, _ in message.readings}
        fits = len(chunk) < most and within_limits(
            hours=len(hours | {message.hour}),
            names=len(more_names),
            pairs=len(more_pairs),
            ids=len(chunk) + 1 if identities else 0,
        )
        if chunk and not fits:
            yield chunk
            chunk, hours, names, pairs = [], set(), set(), set()
            more_names = {name for name, _ in message.readings}
            more_pairs = {(name, message.hour) for name, _ in message.readings}
        chunk.append(message)
        hours.add(message.hour)
        names, pairs = more_names, more_pairs
    if chunk:
        yield chunk
