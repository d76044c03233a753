"""The ingest use case: a batch of SQS messages in, a partial batch response out.

parse and validate every message -> reject the bad ones into the dead-letter queue ->
group the rest by (sensor, day) -> write the groups concurrently -> list what must be retried.
Nothing here raises for a per-message problem: each message ends counted, duplicate, rejected
or failed, and only failed ones are handed back to SQS.

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
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from botocore.exceptions import BotoCoreError, ClientError

from sensor_digest.config import IngestSettings, QueueType
from sensor_digest.counting import DayCounter, GroupOutcome, Lookup
from sensor_digest.dead_letters import EMPTY_BODY, clip_reason, dead_letter_attributes, fifo_id
from sensor_digest.dynamo import ClientSource, make_client
from sensor_digest.errors import RejectedMessage, TransientFault
from sensor_digest.messages import PendingMessage, SensorMessage, read_pending, sequenced
from sensor_digest.registry import ProfileCache, Registry

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

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> InboundMessage:
        attributes = record.get("attributes")
        attributes = attributes if isinstance(attributes, dict) else {}
        return cls(
            message_id=str(record.get("messageId", "")),
            body=record.get("body"),
            sent_timestamp=attributes.get("SentTimestamp"),
            sequence_number=attributes.get("SequenceNumber"),
            group_id=attributes.get("MessageGroupId"),
            source=str(record.get("eventSourceARN") or ""),
        )

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


class DeadLetterSink:
    """Keeps rejected messages: the original body, with the reason in the ``error`` attribute.

    A FIFO dead-letter queue (``fifo=True``) also needs a message group and a deduplication id:
    the rejected message's own group, and its SQS message id, so that the same message rejected
    again on a redelivery within SQS's five-minute window is kept once."""

    def __init__(self, *, queue_url: str, client: SQSClient, fifo: bool = False) -> None:
        self._queue_url = queue_url
        self._client = client
        self._fifo = fifo

    def reject(self, message: InboundMessage, reason: str) -> bool:
        """``True`` once the message is kept; ``False`` if SQS refused (then SQS must redeliver)."""
        body = message.body if isinstance(message.body, str) and message.body else EMPTY_BODY
        ordering: dict[str, str] = {}
        if self._fifo:
            ordering = {
                "MessageGroupId": fifo_id(message.group_id) or FIFO_GROUP_OF_STRANGERS,
                "MessageDeduplicationId": fifo_id(message.message_id)
                or hashlib.sha256(message.message_id.encode()).hexdigest(),
            }
        try:
            self._client.send_message(
                QueueUrl=self._queue_url,
                MessageBody=body,
                MessageAttributes=dead_letter_attributes(reason, message.message_id),  # type: ignore[arg-type]
                **ordering,  # type: ignore[arg-type]
            )
        except (ClientError, BotoCoreError):
            LOG.exception("dead-letter send failed", message_id=message.message_id)
            return False
        return True


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
        dead_letters: DeadLetterSink,
        default_zone: tzinfo,
        profiles: ProfileCache | None = None,
        reject_unknown: bool = False,
        max_workers: int = 8,
        queue_type: QueueType = QueueType.STANDARD,
    ) -> None:
        self._counter = counter
        self._dead_letters = dead_letters
        self._zone = default_zone
        self._profiles = profiles
        self._reject_unknown = reject_unknown
        self._max_workers = max_workers
        self._fifo = queue_type is QueueType.FIFO

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> BatchReport:
        """An SQS event in Lambda's shape: its records, processed as one batch. ``remaining_ms``
        (the invocation's time left) bounds the retries of contended transactions."""
        records = event.get("Records") or []
        deadline = None if remaining_ms is None else time.monotonic() + remaining_ms / 1000 - DEADLINE_MARGIN_SECONDS
        return self.process([InboundMessage.from_record(r) for r in records if isinstance(r, dict)], deadline)

    def process(self, messages: Sequence[InboundMessage], deadline: float | None = None) -> BatchReport:
        report = BatchReport()
        reports = [(inbound, pending) for inbound in messages if (pending := self._read(inbound, report)) is not None]
        if self._profiles is not None:
            try:  # one BatchGetItem for the batch's sensors not cached yet
                self._profiles.prefetch(r.sensor_id for _, r in reports)
            except TransientFault as fault:  # without the profiles no day can be trusted: retry it all
                LOG.warning("profiles unavailable, the batch will be redelivered", reason=fault.reason)
                report.failed_ids.extend(inbound.message_id for inbound, _ in reports)
                return report
            except Exception:  # a bad profile item must not cost the batch: each sensor is looked up alone
                LOG.exception("profile prefetch raised; looking sensors up one by one")
        parsed = [m for inbound, pending in reports if (m := self._assign_day(inbound, pending, report)) is not None]
        if self._fifo and report.failed_ids:  # hold back what follows a listed message in its group
            report.failed_ids = listed_with_group_tails(messages, report.failed_ids)
            held = set(report.failed_ids)
            parsed = [m for m in parsed if m.message_id not in held]
        source = messages[0].source if messages else ""
        found = self._lookup(parsed, report)
        groups: dict[tuple[int, str], list[SensorMessage]] = defaultdict(list)
        for message in parsed:
            if message.ledger_key in found.counted_before:  # no transaction needed to find out
                report.duplicates += 1
            else:
                groups[(message.sensor_id, message.day)].append(message)
        report.groups = len(groups)
        for (sensor_id, day), outcome in self._write(groups, found.missing_days, deadline, source):
            report.counted += len(outcome.counted)
            report.duplicates += len(outcome.duplicates)
            report.failed_ids.extend(m.message_id for m in outcome.failed)
            report.requests += outcome.requests
            report.retries += outcome.retries
            if outcome.failed:
                LOG.warning(
                    "group failed, its messages will be redelivered",
                    sensor_id=sensor_id,
                    day=day,
                    reason=outcome.reason,
                    message_ids=[m.message_id for m in outcome.failed],
                )
        if self._fifo:
            report.failed_ids = listed_with_group_tails(messages, report.failed_ids)
        else:
            order = {m.message_id: i for i, m in enumerate(messages)}
            report.failed_ids.sort(key=lambda mid: order.get(mid, -1))
        return report

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

    def _read(self, inbound: InboundMessage, report: BatchReport) -> PendingMessage | None:
        """Load and validate one body (once); a rejection or any surprise ends with this message alone."""
        try:
            pending = read_pending(
                message_id=inbound.message_id, body=inbound.body, sent_timestamp=inbound.sent_timestamp
            )
            if self._fifo:
                pending = sequenced(pending, sequence_number=inbound.sequence_number, group_id=inbound.group_id)
            return pending
        except RejectedMessage as rejection:
            self._reject(inbound, rejection.reason, report)
        except Exception as exc:  # a parser bug on hostile input: keep the message with the reason
            self._reject_unexpected(inbound, exc, report)
        return None

    def _assign_day(
        self, inbound: InboundMessage, pending: PendingMessage, report: BatchReport
    ) -> SensorMessage | None:
        """The message with its day in the sensor's zone; ``None`` once it is rejected or listed."""
        try:
            return pending.in_zone(self._zone_of(pending.sensor_id))
        except RejectedMessage as rejection:
            self._reject(inbound, rejection.reason, report)
        except TransientFault as fault:  # this sensor's profile could not be read: retry this message
            LOG.warning(
                "profile unavailable, the message will be redelivered",
                message_id=inbound.message_id,
                reason=fault.reason,
            )
            report.failed_ids.append(inbound.message_id)
        except Exception as exc:
            self._reject_unexpected(inbound, exc, report)
        return None

    def _reject_unexpected(self, inbound: InboundMessage, exc: Exception, report: BatchReport) -> None:
        LOG.exception("reading the message raised unexpectedly", message_id=inbound.message_id)
        self._reject(inbound, f"unexpected error while reading the message: {type(exc).__name__}: {exc}", report)

    def _zone_of(self, sensor_id: int) -> tzinfo:
        """The sensor's registered zone, else the digest's; rejects an unknown sensor if told to."""
        zone = self._profiles.zone(sensor_id) if self._profiles is not None else None
        if zone is not None:
            return zone
        if self._reject_unknown and self._profiles is not None:
            raise RejectedMessage(f"sensor {sensor_id} is not registered (UNKNOWN_SENSORS=reject)")
        return self._zone

    def _reject(self, inbound: InboundMessage, reason: str, report: BatchReport) -> None:
        LOG.info("message rejected", message_id=inbound.message_id, reason=clip_reason(reason))
        if self._dead_letters.reject(inbound, reason):
            report.rejected += 1
        else:
            report.failed_ids.append(inbound.message_id)

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
