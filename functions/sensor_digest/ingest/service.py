"""The ingest use case: a batch of SQS messages in, a partial batch response out.

read -> date -> count -> report:

1. **read** each record once (``messages.read_pending``, and what the queue type adds,
   ``ordering.py``): a message that breaks the contract is a ``Rejection``;
2. **date** each report in its sensor's zone (the profiles of the batch's sensors in one read;
   ``UNKNOWN_SENSORS=reject`` rejects a sensor that is not registered);
3. **dead-letter** the rejections (``dead_letters.py``), within the invocation's time;
4. **count** one message per identity (``counting/``: the lookup and the concurrent group
   writes); two messages of one sensor with one identity in a batch are one report: the first in
   batch order (the leader) is written, the others share its fate, whichever day they name:
   duplicates once it is counted, rejected with it, or batch item failures with it;
5. **evaluate** the alarm rules on the reports that ended counted or found counted
   (``alarms/evaluator.py``); one whose alarm could not be written is a batch item failure, so that
   its redelivery (found counted) evaluates it then;
6. **report** each message's fate: counted, duplicate, rejected or failed, and list the failed
   ones (``ordering.failures``) so that SQS redelivers them.

Nothing here raises for a per-message problem, and nothing here knows the queue type or the
delivery mode: the counter and the ordering policy carry them.

A message's identity and time are its origin (``dead_letter_format.Origin``): its own
``messageId`` and ``SentTimestamp``, or, for a dead letter back from a redrive, the
``sensor-digest.source_message_id`` and ``sensor-digest.source_sent_timestamp`` attributes
it carries. A report without ``event_id`` is counted by that id, and one without ``timestamp``
dated by that time, so a redrive neither counts it again nor moves it to the redrive's day.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field, replace
from datetime import tzinfo
from typing import Any

from sensor_digest.alarms.evaluator import AlarmEvaluator
from sensor_digest.config import DEADLINE_MARGIN_SECONDS
from sensor_digest.counting import DayCounter, GroupOutcome, leaders
from sensor_digest.dead_letter_format import BadOrigin, clip_reason
from sensor_digest.errors import MalformedItem, RejectedMessage, StoreFault
from sensor_digest.ingest.dead_letters import DeadLetters, Rejection
from sensor_digest.ingest.ordering import Ordering, StandardOrdering
from sensor_digest.ingest.records import InboundMessage
from sensor_digest.ingest.report import BatchReport
from sensor_digest.logs import LOG
from sensor_digest.messages import PendingMessage, SensorMessage, read_pending
from sensor_digest.profiles import ProfileCache, dating_zone

ANSWER_RESERVE_SECONDS = 1.0
"""How long before Lambda's timeout the handler answers whatever a call still under way does."""


@dataclass(eq=False, kw_only=True)
class IngestService:
    """Validates, dates and counts one batch; the handler wires it to Lambda."""

    counter: DayCounter
    dead_letters: DeadLetters
    default_zone: tzinfo
    ordering: InitVar[Ordering | None] = None
    profiles: ProfileCache | None = None
    reject_unknown: bool = False
    alarms: AlarmEvaluator | None = None
    clock: Callable[[], float] = time.monotonic
    _ordering: Ordering = field(init=False, repr=False)

    def __post_init__(self, ordering: Ordering | None) -> None:
        self._ordering = ordering or StandardOrdering()

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> BatchReport:
        """An SQS event in Lambda's shape: its records, processed as one batch. ``remaining_ms``
        (the invocation's time left) bounds the work: dead letters are sent, groups written and
        contended transactions retried only while time is left (``DEADLINE_MARGIN_SECONDS``
        before the end), and the rest are batch item failures. A single call that hangs past that (a network
        that stops answering) cannot hold the answer: the batch runs in a thread of its own, and
        ``ANSWER_RESERVE_SECONDS`` before the end the handler answers for what has ended by then
        and lists the rest (``cut_short``)."""
        messages = [InboundMessage.from_record(r) for r in event.get("Records") or [] if isinstance(r, dict)]
        if remaining_ms is None:
            return self.process(messages)
        deadline = self.clock() + remaining_ms / 1000 - DEADLINE_MARGIN_SECONDS
        report = BatchReport()
        outcome: list[BatchReport | BaseException] = []

        def work() -> None:
            try:
                outcome.append(self.process(messages, deadline, report))
            except BaseException as exc:  # handed to the invocation's own thread, raised there
                outcome.append(exc)

        worker = threading.Thread(target=work, name="ingest-batch", daemon=True)
        worker.start()
        worker.join(timeout=max(0.0, remaining_ms / 1000 - ANSWER_RESERVE_SECONDS))
        if not outcome:
            return self.cut_short(messages, report)
        if isinstance(outcome[0], BaseException):  # a crash: Lambda's own failure, the whole batch again
            raise outcome[0]
        return outcome[0]

    def cut_short(self, messages: Sequence[InboundMessage], report: BatchReport) -> BatchReport:
        """The answer for a batch still being worked on: what has ended stands, every other message
        is listed (on FIFO with the rest of its group). Writes still under way may commit later;
        their messages come back and are found counted (a marker, an applied sequence number). The
        batch's own thread starts nothing after this: its deadline has passed (every loop of calls
        asks it before the next), and ``report.answered`` keeps it from what follows the writes."""
        with report.lock:
            report.answered = True  # what is still under way starts nothing more (``process``)
            ended = set(report.ended_ids)
            # counted but not yet evaluated against the alarm rules: listed, so they come back, found counted
            unevaluated = set() if self.alarms is None or report.alarms_evaluated else set(report.settled_ids)
            answer = BatchReport(
                counted=report.counted,
                duplicates=report.duplicates,
                rejected=report.rejected,
                requests=report.requests,
                groups=report.groups,
                retries=report.retries,
                deferred=report.deferred,
                ended_ids=ended,
            )
        unended = [m.message_id for m in messages if m.message_id not in ended or m.message_id in unevaluated]
        LOG.warning("the invocation's time is nearly out: listing what has not ended", listed=len(unended))
        answer.failed_ids = self._ordering.failures(messages, unended)
        return answer

    def process(
        self, messages: Sequence[InboundMessage], deadline: float | None = None, report: BatchReport | None = None
    ) -> BatchReport:
        """The batch, start to end; ``report`` (one of the caller's, filled as the work goes) for
        a caller that may have to answer before the end."""
        report = report if report is not None else BatchReport()
        rejections: list[Rejection] = []
        reports = [
            (inbound, pending) for inbound in messages if (pending := self._read(inbound, rejections)) is not None
        ]
        if not self._prefetch_profiles(reports, report):
            self._dead_letter(rejections, report, deadline)
            return self._batch_item_failures(messages, report)
        dated = [
            m for inbound, pending in reports if (m := self._date(inbound, pending, rejections, report)) is not None
        ]
        self._dead_letter(rejections, report, deadline)
        held = set(
            self._batch_item_failures(messages, report).failed_ids
        )  # on FIFO, a batch item failure holds its group back
        # one message per identity across the whole batch, the first in batch order; its repeats wait
        # for its fate, whichever day they name: two reports with one event_id are one report
        first, followers = leaders([m for m in dated if m.message_id not in held], key=self._identity)
        if first:
            counted = self.counter.count_batch(first, deadline, on_outcome=lambda o: self._tally(o, report))
            with report.lock:
                report.requests += counted.lookup_requests
                report.groups = len({key for key, _ in counted.groups})  # a deferred group is written twice
            by_id = {m.message_id: m for m in messages}
            self._dead_letter([Rejection(by_id[mid], reason) for mid, reason in report.refused], report, deadline)
            self._dead_letter(self._followers_share_fate(first, followers, report, by_id), report, deadline)
            self._evaluate_alarms(first, report, deadline)
        self._batch_item_failures(messages, report)
        if report.answered:  # the handler answered without waiting for this: nothing runs on after it
            LOG.warning("the batch ended after its answer: what follows the writes is left to the redelivery")
            return report
        self._remember_counted(dated, report)
        for groups in report.take_audit():  # the audit trail: what each counted report contributed, where
            LOG.info("counted", groups=groups)
        return report

    # -- read ------------------------------------------------------------------------------

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
            return self._ordering.read(inbound, replace(pending, receive_count=inbound.receive_count))
        except BadOrigin as bad:
            rejections.append(Rejection(inbound, str(bad)))
        except RejectedMessage as rejection:
            rejections.append(Rejection(inbound, rejection.reason))
        except Exception as exc:  # a parser bug on hostile input: keep the message with the reason
            rejections.append(self._unexpected(inbound, exc))
        return None

    # -- date ------------------------------------------------------------------------------

    def _prefetch_profiles(self, reports: list[tuple[InboundMessage, PendingMessage]], report: BatchReport) -> bool:
        """One ``BatchGetItem`` for the batch's sensors not cached yet; ``False`` when the profiles
        could not be read (without them no day can be trusted: the batch's reports are batch item failures)."""
        if self.profiles is None:
            return True
        try:
            self.profiles.prefetch(r.sensor_id for _, r in reports)
        except StoreFault as fault:
            LOG.warning("profiles unavailable, the batch will be redelivered", reason=fault.reason)
            report.failed_ids.extend(inbound.message_id for inbound, _ in reports)
            return False
        except MalformedItem as bad:  # one profile item is not one: each sensor is looked up alone
            LOG.warning("a profile item is malformed; looking sensors up one by one", reason=str(bad))
        except Exception:  # a bug must not cost the batch either
            LOG.exception("profile prefetch raised; looking sensors up one by one")
        return True

    def _date(
        self, inbound: InboundMessage, pending: PendingMessage, rejections: list[Rejection], report: BatchReport
    ) -> SensorMessage | None:
        """The message with its day in the sensor's zone; ``None`` once it is rejected or a batch item failure."""
        try:
            return pending.in_zone(self._zone_of(pending.sensor_id))
        except RejectedMessage as rejection:
            rejections.append(Rejection(inbound, rejection.reason))
        except MalformedItem as bad:  # the sensor's profile is not one: kept, with the way to mend it
            rejections.append(
                Rejection(
                    inbound,
                    f"sensor {pending.sensor_id}'s profile cannot be read ({bad}); remove it with "
                    f"`sensor-digest sensors delete --sensor {pending.sensor_id}`, register it again, then redrive",
                )
            )
        except StoreFault as fault:  # this sensor's profile could not be read: retry this message
            LOG.warning(
                "profile unavailable, the message will be redelivered",
                message_id=inbound.message_id,
                reason=fault.reason,
            )
            report.failed_ids.append(inbound.message_id)
        except Exception as exc:
            rejections.append(self._unexpected(inbound, exc))
        return None

    def _zone_of(self, sensor_id: int) -> tzinfo:
        """The sensor's registered zone, else the digest's; rejects an unknown sensor if told to."""
        return dating_zone(self.profiles, sensor_id, self.default_zone, reject_unknown=self.reject_unknown)

    @staticmethod
    def _unexpected(inbound: InboundMessage, exc: Exception) -> Rejection:
        LOG.exception("reading the message raised unexpectedly", message_id=inbound.message_id)
        return Rejection(inbound, f"unexpected error while reading the message: {type(exc).__name__}: {exc}")

    # -- dead letters --------------------------------------------------------------------------------

    def _dead_letter(self, rejections: list[Rejection], report: BatchReport, deadline: float | None) -> None:
        """Rejected messages to the dead-letter queue; one that could not be sent there is a batch item failure."""
        if not rejections:
            return
        for rejection in rejections:
            LOG.info("message rejected", message_id=rejection.message.message_id, reason=clip_reason(rejection.reason))
        kept = self.dead_letters.send(rejections, deadline)
        report.end(rejected=[r.message.message_id for r in rejections if r.message.message_id in kept])
        with report.lock:
            report.failed_ids.extend(r.message.message_id for r in rejections if r.message.message_id not in kept)

    # -- count -------------------------------------------------------------------------------

    def _identity(self, message: SensorMessage) -> Hashable | None:
        return self.counter.identity(message)

    def _tally(self, outcome: GroupOutcome, report: BatchReport) -> None:
        """One group's outcome into the report, as soon as it is known (from the writing thread);
        its ended messages that SQS handed out before are remembered at once (``_remember``)."""
        report.end(
            counted=[m.message_id for m in outcome.counted], duplicates=[m.message_id for m in outcome.duplicates]
        )
        with report.lock:
            report.failed_ids.extend(m.message_id for m in outcome.failed)
            report.refused.extend((m.message_id, self._refusal(m, outcome)) for m in outcome.rejected)
            report.requests += outcome.requests
            report.retries += outcome.retries
            report.deferred += bool(outcome.deferred)
        self._remember([m for m in outcome.counted + outcome.duplicates if m.receive_count > 1])
        if outcome.counted:  # the audit trail (``BatchReport.take_audit``)
            first = outcome.counted[0]
            with report.lock:
                report.audit.append([first.sensor_id, first.day, [[m.event_id, m.count] for m in outcome.counted]])
        if outcome.failed:
            first = outcome.failed[0]
            LOG.warning(
                "group failed, its messages will be redelivered",
                sensor_id=first.sensor_id,
                day=first.day,
                reason=outcome.reason,
                message_ids=[m.message_id for m in outcome.failed],
            )

    def _evaluate_alarms(self, first: list[SensorMessage], report: BatchReport, deadline: float | None) -> None:
        """The leaders that ended counted or found counted, against the alarm rules; those that
        could not be evaluated are batch item failures (their repeats in the batch stay duplicates:
        the leader's redelivery is the one evaluated)."""
        if self.alarms is None:
            return
        with report.lock:
            if report.answered:
                return
            ended, refused = set(report.ended_ids), {mid for mid, _ in report.refused}
        settled = [m for m in first if m.message_id in ended and m.message_id not in refused]
        expired = None if deadline is None else (lambda: self.clock() >= deadline)
        evaluated = self.alarms.evaluate(settled, expired)
        with report.lock:
            report.alarms_evaluated = True
            report.transitions += evaluated.transitions
            report.requests += evaluated.writes + (1 if evaluated.reads else 0)
            report.failed_ids.extend(m.message_id for m in evaluated.failed)  # its repeats ended as duplicates
        if evaluated.failed:
            LOG.warning("alarm evaluation will be retried", message_ids=[m.message_id for m in evaluated.failed])

    @staticmethod
    def _refusal(message: SensorMessage, outcome: GroupOutcome) -> str:
        repair = outcome.repair or "mend the day item (its attributes as the contract gives them)"
        return (
            f"the day item of sensor {message.sensor_id} on {message.day} cannot take this count "
            f"({outcome.reason}); {repair}, then redrive"
        )

    def _followers_share_fate(
        self,
        first: list[SensorMessage],
        followers: dict[Hashable, list[SensorMessage]],
        report: BatchReport,
        inbound: Mapping[str, InboundMessage],
    ) -> list[Rejection]:
        """The repeats of each leader share its fate (as within a group, ``outcomes.share_leaders_fate``):
        of a counted (or known) leader, duplicates; of a failed one, batch item failures; of a
        rejected one, rejections with its reason, returned to be dead-lettered beside it."""
        rejected: list[Rejection] = []
        if not followers:
            return rejected
        with report.lock:
            ended, refused = set(report.ended_ids), dict(report.refused)
        for lead in first:  # in batch order
            repeats = followers.get(self._identity(lead), [])
            if not repeats:
                continue
            if lead.message_id in refused:
                rejected += [Rejection(inbound[m.message_id], refused[lead.message_id]) for m in repeats]
            elif lead.message_id in ended:
                report.end(duplicates=[m.message_id for m in repeats])
            else:
                with report.lock:
                    report.failed_ids.extend(m.message_id for m in repeats)
        return rejected

    def _remember_counted(self, dated: list[SensorMessage], report: BatchReport) -> None:
        """A group's counted tail on its first receive (a batch item failure all the same, behind a failed message
        of its group) is remembered once the answer is known; one received before already was,
        with its group's outcome."""
        with report.lock:
            listed, ended = set(report.failed_ids), set(report.ended_ids)
        self._remember([m for m in dated if m.message_id in ended and m.message_id in listed and m.receive_count == 1])

    def _remember(self, messages: list[SensorMessage]) -> None:
        """Messages that ended counted (or were found counted) but may come back, and could then
        reach the dead-letter queue, are handed to the counter to remember, so that a redrive never
        counts them again: those SQS has handed out before (a delete or an answer was lost once:
        it may be lost again, until SQS moves the message away), and a group's counted tail."""
        if not messages:
            return
        try:
            self.counter.remember_counted(messages)
        except StoreFault as fault:
            LOG.warning(
                "counted messages that may come back could not be remembered; if SQS moves them to "
                "the dead-letter queue, a redrive would count them again",
                reason=fault.reason,
                message_ids=[m.message_id for m in messages],
            )

    # -- report ------------------------------------------------------------------------------

    def _batch_item_failures(self, messages: Sequence[InboundMessage], report: BatchReport) -> BatchReport:
        report.failed_ids = self._ordering.failures(messages, report.failed_ids)
        return report
