"""The ingest use case: a batch of SQS messages in, a partial batch response out.

parse and validate every message -> keep the bad ones in the dead-letter queue (``SendMessageBatch``,
within the invocation's time) -> group the rest by (sensor, day) -> write the groups concurrently
-> list what must be retried. Nothing here raises for a per-message problem: each message ends
counted, duplicate, rejected or failed, and only failed ones are handed back to SQS.

A message's identity and time are its origin (``dead_letters.Origin``): its own ``messageId`` and
``SentTimestamp``, or, for a dead letter back from a redrive, the ``source_message_id`` and
``source_sent_timestamp`` attributes it carries. A report without ``event_id`` is counted by that
id, and one without ``timestamp`` dated by that time, so a redrive neither counts it again nor
moves it to the redrive's day. Two messages of one sensor with one identity in a batch are one
report: the first in batch order is written, the others follow its fate (counted, or listed).

On a FIFO queue (``QUEUE_TYPE=fifo``) each record also carries its ``SequenceNumber`` and its
``MessageGroupId``, which must be its sensor; the counting is ordered (``counting.py``), and the
batch response keeps each group's order: once a message of a group is listed, every later message
of that group in the batch is listed too (a later message held back before the writes is not
written at all).
"""

from __future__ import annotations

import hashlib
import random
import time
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import TYPE_CHECKING, Any, Protocol

from aws_lambda_powertools import Logger
from botocore.exceptions import BotoCoreError, ClientError

from sensor_digest.config import IngestSettings, QueueType
from sensor_digest.counting import DayCounter, GroupOutcome, Lookup
from sensor_digest.dead_letter_format import (
    EMPTY_BODY,
    BadOrigin,
    Origin,
    clip_reason,
    dead_letter_attributes,
    fifo_id,
    send_batches,
)
from sensor_digest.errors import RejectedMessage, TransientFault
from sensor_digest.messages import PendingMessage, SensorMessage, read_pending, sequenced
from sensor_digest.registry import ProfileCache, Registry
from sensor_digest.store.dynamo import ClientSource, make_client

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

LOG = Logger(child=True)

DEADLINE_MARGIN_SECONDS = 3.0
"""Time kept free before Lambda's timeout for what follows the writes (the response, the logs)."""


@dataclass(frozen=True)
class InboundMessage:
    """The parts of an SQS record that ingest reads."""

    message_id: str
    body: Any
    sent_timestamp: str | None = None
    # a FIFO queue's record only
    sequence_number: str | None = None
    group_id: str | None = None
    source: str = ""  # the queue's ARN (eventSourceARN)
    message_attributes: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> InboundMessage:
        attributes = record.get("attributes")
        attributes = attributes if isinstance(attributes, dict) else {}
        message_attributes = record.get("messageAttributes")
        return cls(
            message_id=str(record.get("messageId", "")),
            body=record.get("body"),
            sent_timestamp=attributes.get("SentTimestamp"),
            sequence_number=attributes.get("SequenceNumber"),
            group_id=attributes.get("MessageGroupId"),
            source=str(record.get("eventSourceARN") or ""),
            message_attributes=message_attributes if isinstance(message_attributes, dict) else {},
        )

    def origin(self) -> Origin:
        """Its identity and send time (``Origin.of``); ``BadOrigin`` if its origin attributes are not."""
        return Origin.of(self.message_id, self.sent_timestamp, self.message_attributes)

    def kept_origin(self) -> Origin:
        """The origin its dead letter carries: the stamped one, or its own where that is not valid."""
        try:
            return self.origin()
        except BadOrigin:
            return Origin(self.message_id, self.sent_timestamp)

    @property
    def group(self) -> str:
        """The ordering group of a FIFO record (a record without one is a group of its own)."""
        return self.group_id if isinstance(self.group_id, str) else f"<no group: {self.message_id}>"


@dataclass
class BatchReport:
    """The fate of every message of one batch, and what it cost."""

    counted: int = 0
    duplicates: int = 0
    rejected: int = 0
    failed_ids: list[str] = field(default_factory=list)
    requests: int = 0
    groups: int = 0
    retries: int = 0

    @property
    def failed(self) -> int:
        return len(self.failed_ids)

    def metrics(self) -> dict[str, int]:
        return {"counted": self.counted, "duplicate": self.duplicates, "rejected": self.rejected, "failed": self.failed}

    def log_fields(self) -> dict[str, int]:
        return {
            "counted": self.counted,
            "duplicates": self.duplicates,
            "rejected": self.rejected,
            "failed": self.failed,
            "groups": self.groups,
            "requests": self.requests,
            "retries": self.retries,
        }

    def response(self) -> dict[str, list[dict[str, str]]]:
        """Lambda's partial batch response (each failed message once, in batch order)."""
        return {"batchItemFailures": [{"itemIdentifier": mid} for mid in dict.fromkeys(self.failed_ids)]}


FIFO_GROUP_OF_STRANGERS = "no-message-group"


@dataclass(frozen=True)
class Rejection:
    """A message that breaks the contract, and why: it is kept in the dead-letter queue."""

    message: InboundMessage
    reason: str


class DeadLetters(Protocol):
    def keep(self, rejections: Sequence[Rejection], deadline: float | None = None) -> set[str]: ...


class DeadLetterSink:
    """Keeps rejected messages: the original body, with the reason in the ``error`` attribute and
    the message's origin in ``source_message_id`` and ``source_sent_timestamp``.

    They go in ``SendMessageBatch`` requests (ten at most, 1 MiB at most), one after another while
    the invocation has time (``deadline``, ``clock``): a flood of poison costs a tenth of the
    requests, and whatever is left when time runs out is listed, so SQS brings it back later.

    A FIFO dead-letter queue (``fifo=True``) also needs a message group and a deduplication id:
    the rejected message's own group, and its SQS message id, so that the same message rejected
    again on a redelivery within SQS's five-minute window is kept once."""

    def __init__(
        self, *, queue_url: str, client: SQSClient, fifo: bool = False, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._queue_url = queue_url
        self._client = client
        self._fifo = fifo
        self._clock = clock

    def keep(self, rejections: Sequence[Rejection], deadline: float | None = None) -> set[str]:
        """The message ids now kept; the others could not be (SQS refused, or no time was left)."""
        entries = [self._entry(str(i), r) for i, r in enumerate(rejections)]
        by_entry = {str(i): r.message.message_id for i, r in enumerate(rejections)}
        kept: set[str] = set()
        for batch in send_batches(entries):
            if deadline is not None and self._clock() >= deadline:
                LOG.warning("no time left to keep rejected messages; they will be redelivered", left=len(batch))
                break
            try:
                response = self._client.send_message_batch(QueueUrl=self._queue_url, Entries=batch)  # type: ignore[arg-type]
            except (ClientError, BotoCoreError):
                LOG.exception("dead-letter batch failed", message_ids=[by_entry[e["Id"]] for e in batch])
                continue
            kept.update(by_entry[ok["Id"]] for ok in response.get("Successful", []))
            for refused in response.get("Failed", []):
                LOG.error("dead-letter send refused", message_id=by_entry[refused["Id"]], code=refused.get("Code"))
        return kept

    def _entry(self, entry_id: str, rejection: Rejection) -> dict[str, Any]:
        message = rejection.message
        entry: dict[str, Any] = {
            "Id": entry_id,
            "MessageBody": message.body if isinstance(message.body, str) and message.body else EMPTY_BODY,
            "MessageAttributes": dead_letter_attributes(rejection.reason, message.kept_origin()),
        }
        if self._fifo:
            entry["MessageGroupId"] = fifo_id(message.group_id) or FIFO_GROUP_OF_STRANGERS
            entry["MessageDeduplicationId"] = (
                fifo_id(message.message_id) or hashlib.sha256(message.message_id.encode()).hexdigest()
            )
        return entry


def listed_with_group_tails(messages: Sequence[InboundMessage], listed: Iterable[str]) -> list[str]:
    """The message ids to list so that each group keeps its order: the ``listed`` ones and every
    message after them in their group (in batch order, each once), as Powertools'
    ``SqsFifoPartialProcessor(skip_group_on_error=True)`` does."""
    failed, blocked, out = set(listed), set(), []
    for message in messages:
        if message.message_id in failed or message.group in blocked:
            blocked.add(message.group)
            out.append(message.message_id)
    return list(dict.fromkeys(out))


class IngestService:
    """Validates, groups and counts one batch; the handler wires it to Lambda."""

    def __init__(
        self,
        *,
        counter: DayCounter,
        dead_letters: DeadLetters,
        default_zone: tzinfo,
        profiles: ProfileCache | None = None,
        reject_unknown: bool = False,
        max_workers: int = 8,
        queue_type: QueueType = QueueType.STANDARD,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._counter = counter
        self._dead_letters = dead_letters
        self._zone = default_zone
        self._profiles = profiles
        self._reject_unknown = reject_unknown
        self._max_workers = max_workers
        self._fifo = queue_type is QueueType.FIFO
        self._clock = clock

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> BatchReport:
        """An SQS event in Lambda's shape: its records, processed as one batch. ``remaining_ms``
        (the invocation's time left) bounds the work: dead letters are sent, groups written and
        contended transactions retried only while time is left; the rest is listed."""
        records = event.get("Records") or []
        deadline = None if remaining_ms is None else self._clock() + remaining_ms / 1000 - DEADLINE_MARGIN_SECONDS
        return self.process([InboundMessage.from_record(r) for r in records if isinstance(r, dict)], deadline)

    def process(self, messages: Sequence[InboundMessage], deadline: float | None = None) -> BatchReport:
        report = BatchReport()
        rejections: list[Rejection] = []
        reports = [
            (inbound, pending) for inbound in messages if (pending := self._read(inbound, rejections)) is not None
        ]
        if self._profiles is not None:
            try:  # one BatchGetItem for the batch's sensors not cached yet
                self._profiles.prefetch(r.sensor_id for _, r in reports)
            except TransientFault as fault:  # without the profiles no day can be trusted: retry it all
                LOG.warning("profiles unavailable, the batch will be redelivered", reason=fault.reason)
                report.failed_ids.extend(inbound.message_id for inbound, _ in reports)
                self._keep(rejections, report, deadline)
                return self._ordered_response(messages, report)
            except Exception:  # a bad profile item must not cost the batch: each sensor is looked up alone
                LOG.exception("profile prefetch raised; looking sensors up one by one")
        parsed = [
            m
            for inbound, pending in reports
            if (m := self._assign_day(inbound, pending, rejections, report)) is not None
        ]
        self._keep(rejections, report, deadline)
        if self._fifo and report.failed_ids:  # hold back what follows a listed message in its group
            report.failed_ids = listed_with_group_tails(messages, report.failed_ids)
            held = set(report.failed_ids)
            parsed = [m for m in parsed if m.message_id not in held]
        leaders, followers = self._leaders(parsed)
        source = messages[0].source if messages else ""
        found = self._lookup(leaders, report)
        groups: dict[tuple[int, str], list[SensorMessage]] = defaultdict(list)
        done: list[SensorMessage] = []  # leaders that ended counted or duplicate
        for message in leaders:
            if message.ledger_key in found.counted_before:  # no transaction needed to find out
                report.duplicates += 1
                done.append(message)
            else:
                groups[(message.sensor_id, message.day)].append(message)
        report.groups = len(groups)
        for (sensor_id, day), outcome in self._write(groups, found.missing_days, deadline, source):
            report.counted += len(outcome.counted)
            report.duplicates += len(outcome.duplicates)
            report.failed_ids.extend(m.message_id for m in outcome.failed)
            report.requests += outcome.requests
            report.retries += outcome.retries
            done += outcome.counted + outcome.duplicates
            if outcome.failed:
                LOG.warning(
                    "group failed, its messages will be redelivered",
                    sensor_id=sensor_id,
                    day=day,
                    reason=outcome.reason,
                    message_ids=[m.message_id for m in outcome.failed],
                )
        self._settle_followers(followers, done, report)
        return self._ordered_response(messages, report)

    def _ordered_response(self, messages: Sequence[InboundMessage], report: BatchReport) -> BatchReport:
        """The listed ids in batch order; on FIFO, with every later message of their groups."""
        if self._fifo:
            report.failed_ids = listed_with_group_tails(messages, report.failed_ids)
        else:
            order = {m.message_id: i for i, m in enumerate(messages)}
            report.failed_ids.sort(key=lambda mid: order.get(mid, -1))
        return report

    def _leaders(
        self, messages: list[SensorMessage]
    ) -> tuple[list[SensorMessage], dict[Hashable, list[SensorMessage]]]:
        """One message per identity across the whole batch (``DayCounter.identity``: a ledger key, a
        sequence number), the first in batch order; the repeats wait for its fate, whichever day
        they name: two reports with one ``event_id`` are one report, counted once, on the day of
        the first."""
        leaders: list[SensorMessage] = []
        followers: dict[Hashable, list[SensorMessage]] = {}
        for message in messages:
            identity = self._counter.identity(message)
            if identity is None:  # at-least-once: every message counts
                leaders.append(message)
            elif identity in followers:
                followers[identity].append(message)
            else:
                followers[identity] = []
                leaders.append(message)
        return leaders, {k: v for k, v in followers.items() if v}

    def _settle_followers(
        self, followers: dict[Hashable, list[SensorMessage]], done: list[SensorMessage], report: BatchReport
    ) -> None:
        """A repeat of a counted (or known) message is a duplicate; of any other, listed with it."""
        settled = {self._counter.identity(m) for m in done}
        for identity, repeats in followers.items():
            if identity in settled:
                report.duplicates += len(repeats)
            else:
                report.failed_ids.extend(m.message_id for m in repeats)

    def _lookup(self, messages: list[SensorMessage], report: BatchReport) -> Lookup:
        """Known markers and missing day items (``DayCounter.lookup``: a ``BatchGetItem`` per 100
        keys); an optimisation only, so a failed read costs nothing but the wasted writes it
        would have saved."""
        if not messages:
            return Lookup()
        try:
            found = self._counter.lookup(messages)
        except TransientFault as fault:
            LOG.warning("lookup before the writes failed; the writes will find out", reason=fault.reason)
            return Lookup()
        report.requests += found.requests
        return found

    def _read(self, inbound: InboundMessage, rejections: list[Rejection]) -> PendingMessage | None:
        """Load and validate one body (once); a rejection or any surprise ends with this message alone."""
        try:
            origin = inbound.origin()
            pending = read_pending(
                message_id=inbound.message_id,
                body=inbound.body,
                sent_timestamp=origin.sent_timestamp,
                origin_id=origin.message_id,
            )
            if self._fifo:
                pending = sequenced(pending, sequence_number=inbound.sequence_number, group_id=inbound.group_id)
            return pending
        except BadOrigin as bad:
            rejections.append(Rejection(inbound, str(bad)))
        except RejectedMessage as rejection:
            rejections.append(Rejection(inbound, rejection.reason))
        except Exception as exc:  # a parser bug on hostile input: keep the message with the reason
            rejections.append(self._unexpected(inbound, exc))
        return None

    def _assign_day(
        self, inbound: InboundMessage, pending: PendingMessage, rejections: list[Rejection], report: BatchReport
    ) -> SensorMessage | None:
        """The message with its day in the sensor's zone; ``None`` once it is rejected or listed."""
        try:
            return pending.in_zone(self._zone_of(pending.sensor_id))
        except RejectedMessage as rejection:
            rejections.append(Rejection(inbound, rejection.reason))
        except TransientFault as fault:  # this sensor's profile could not be read: retry this message
            LOG.warning(
                "profile unavailable, the message will be redelivered",
                message_id=inbound.message_id,
                reason=fault.reason,
            )
            report.failed_ids.append(inbound.message_id)
        except Exception as exc:
            rejections.append(self._unexpected(inbound, exc))
        return None

    @staticmethod
    def _unexpected(inbound: InboundMessage, exc: Exception) -> Rejection:
        LOG.exception("reading the message raised unexpectedly", message_id=inbound.message_id)
        return Rejection(inbound, f"unexpected error while reading the message: {type(exc).__name__}: {exc}")

    def _zone_of(self, sensor_id: int) -> tzinfo:
        """The sensor's registered zone, else the digest's; rejects an unknown sensor if told to."""
        zone = self._profiles.zone(sensor_id) if self._profiles is not None else None
        if zone is not None:
            return zone
        if self._reject_unknown and self._profiles is not None:
            raise RejectedMessage(f"sensor {sensor_id} is not registered (UNKNOWN_SENSORS=reject)")
        return self._zone

    def _keep(self, rejections: list[Rejection], report: BatchReport, deadline: float | None) -> None:
        """Rejected messages to the dead-letter queue; one that could not be kept is listed."""
        if not rejections:
            return
        for rejection in rejections:
            LOG.info("message rejected", message_id=rejection.message.message_id, reason=clip_reason(rejection.reason))
        kept = self._dead_letters.keep(rejections, deadline)
        report.rejected += len(kept)
        report.failed_ids.extend(r.message.message_id for r in rejections if r.message.message_id not in kept)

    def _write(
        self,
        groups: dict[tuple[int, str], list[SensorMessage]],
        missing: set[tuple[int, str]],
        deadline: float | None,
        source: str,
    ) -> Iterable[tuple[tuple[int, str], GroupOutcome]]:
        if not groups:
            return []
        items = list(groups.items())
        # in an order of this invocation's own: concurrent invocations of one sensor's traffic
        # would otherwise all start with its group, and meet on its day item at once
        random.shuffle(items)
        if len(items) == 1 or self._max_workers == 1:
            return [(key, self._safe_count(key, msgs, key in missing, deadline, source)) for key, msgs in items]
        with ThreadPoolExecutor(max_workers=min(self._max_workers, len(items))) as pool:
            futures = [
                (key, pool.submit(self._safe_count, key, msgs, key in missing, deadline, source)) for key, msgs in items
            ]
            return [(key, future.result()) for key, future in futures]

    def _safe_count(
        self, key: tuple[int, str], messages: list[SensorMessage], missing: bool, deadline: float | None, source: str
    ) -> GroupOutcome:
        if deadline is not None and self._clock() >= deadline:  # listed now rather than cut off by the timeout
            return GroupOutcome(failed=list(messages), reason="no time left in the invocation")
        try:
            return self._counter.count_group(key[0], key[1], messages, deadline, missing=missing, source=source)
        except Exception as exc:  # a bug must fail this group only, never the batch
            LOG.exception("group raised", sensor_id=key[0], day=key[1])
            return GroupOutcome(failed=list(messages), reason=f"internal error: {type(exc).__name__}")


def build_service(settings: IngestSettings, session: ClientSource) -> IngestService:
    """The ingest service of these settings, its clients from ``session`` (see ``ingest/handler.py``)."""
    client = make_client(session, max_pool_connections=settings.max_workers + 2)
    counter = DayCounter(
        table_name=settings.table_name,
        ledger_table_name=settings.ledger_table_name,
        client=client,
        mode=settings.delivery_mode,
        marker_ttl_seconds=settings.marker_ttl_seconds,
        queue_type=settings.queue_type,
    )
    registry = Registry(table_name=settings.table_name, ledger_table_name=settings.ledger_table_name, client=client)
    return IngestService(
        counter=counter,
        dead_letters=DeadLetterSink(
            queue_url=settings.dlq_url, client=session.client("sqs"), fifo=settings.queue_type is QueueType.FIFO
        ),
        default_zone=settings.timezone,
        profiles=ProfileCache(registry, ttl=settings.profile_cache_seconds),
        reject_unknown=settings.unknown_sensors == "reject",
        max_workers=settings.max_workers,
        queue_type=settings.queue_type,
    )
