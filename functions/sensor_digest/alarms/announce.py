"""The alarm announcer: each transition an alarm write made, announced once as an EventBridge event.

Fed by the digest table's stream (``stream_filter.ALARM_FILTER``: only alarm writes that made
transitions), it reads the transitions of each record's new image (``Made``, the outbox written in
the same write as the state), puts one event per transition on the account's default bus
(``EVENT_SOURCE``, ``DETAIL_TYPE``, named in ``names``), then keeps each in the alarm's log. A
record whose events could not all be put (a fault, a ``FailedEntryCount``) is where the batch
checkpoints: Lambda hands it over again, and the events put before are put again with the **same**
``transition_id`` (a consumer drops a repeat by it). After the retries the stack allows, the record
goes to the announcer's failure queue, whose alarm says so; nothing is dropped in silence.

The event's ``detail`` (``detail_of``) writes values exactly, as the read API does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sensor_digest import exact_json, names
from sensor_digest.alarms.model import Alarm, Transition
from sensor_digest.alarms.store import AlarmStore, alarm_of
from sensor_digest.backoff import Backoff
from sensor_digest.config import AnnouncerSettings
from sensor_digest.errors import MalformedItem, StoreFault
from sensor_digest.logs import LOG
from sensor_digest.names import ALARM_DETAIL_TYPE as DETAIL_TYPE
from sensor_digest.names import ALARM_EVENT_SOURCE as EVENT_SOURCE
from sensor_digest.store import schema
from sensor_digest.store.dynamo import ClientSource, make_client
from sensor_digest.stream_filter import ALARM_FILTER, matches_filter

if TYPE_CHECKING:
    from mypy_boto3_events import EventBridgeClient

MAX_ENTRIES = 10  # PutEvents takes at most 10 entries per call
ENTRY_RETRIES = Backoff(attempts=3, base_seconds=0.05, cap_seconds=0.5, least=0.5)


def detail_of(alarm: Alarm, t: Transition, pipeline: str | None = None) -> dict[str, Any]:
    """The event's detail: the contract's fields, values exact (``None`` where an operator moved it),
    and the pipeline that made it (``SENSOR_DIGEST_PIPELINE``: the default bus is the account's, and a
    pipeline's own rule matches its own events by it)."""
    return {
        "pipeline": pipeline,
        "alarm_id": alarm.id,
        "sensor_id": alarm.sensor_id,
        "reading": alarm.reading,
        "rule": alarm.rule,
        **t.as_json(),
    }


def entry_of(alarm: Alarm, t: Transition, pipeline: str | None = None) -> dict[str, Any]:
    detail = exact_json.dumps(detail_of(alarm, t, pipeline))
    return {"Source": EVENT_SOURCE, "DetailType": DETAIL_TYPE, "Detail": detail}


@dataclass
class AnnounceReport:
    records: int = 0
    ignored: int = 0
    announced: int = 0
    unannounced: int = 0
    malformed: int = 0
    checkpoint: str | None = None
    reasons: list[str] = field(default_factory=list)

    def metrics(self) -> dict[str, int]:
        return {names.METRIC_ALARMS_ANNOUNCED: self.announced, names.METRIC_ALARMS_UNANNOUNCED: self.unannounced}

    def log_fields(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "ignored": self.ignored,
            "announced": self.announced,
            "unannounced": self.unannounced,
            "malformed": self.malformed,
            "checkpoint": self.checkpoint,
        }

    def response(self) -> dict[str, list[dict[str, str]]]:
        failures = [] if self.checkpoint is None else [{"itemIdentifier": self.checkpoint}]
        return {"batchItemFailures": failures}


def _new_transitions(record: Mapping[str, Any]) -> Alarm | None:
    """The alarm of a record whose write made transitions not announced by an earlier record."""
    if not matches_filter(record, ALARM_FILTER):
        return None
    images = record.get("dynamodb") or {}
    new, old = images.get("NewImage") or {}, images.get("OldImage") or {}
    if old.get(schema.ANNOUNCE) == new.get(schema.ANNOUNCE) and old.get(schema.VERSION) == new.get(schema.VERSION):
        return None
    return alarm_of(new)


class Announcer:
    """Stream records in, one event per transition out (see the module)."""

    def __init__(self, *, events: EventBridgeClient, alarms: AlarmStore, pipeline: str | None = None) -> None:
        self._events = events
        self._alarms = alarms
        self._pipeline = pipeline

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> AnnounceReport:
        report = AnnounceReport()
        for record in event.get("Records") or []:
            report.records += 1
            try:
                alarm = _new_transitions(record)
            except MalformedItem as bad:  # a hand-made alarm item: nothing of it can be announced
                LOG.error("an alarm item in the stream cannot be read; not announced", reason=str(bad))
                report.malformed += 1
                continue
            if alarm is None:
                report.ignored += 1
                continue
            try:
                self._alarms.log(alarm, alarm.made, alarm.version)  # first: a failed log announces nothing yet
                self._announce(alarm, alarm.made)
            except (StoreFault, AnnounceFailed) as fault:
                report.unannounced += len(alarm.made)
                report.checkpoint = str((record.get("dynamodb") or {}).get("SequenceNumber") or record.get("eventID"))
                report.reasons.append(str(fault))
                LOG.warning("alarm transitions not announced; the stream will retry", alarm=alarm.id, reason=str(fault))
                break
            report.announced += len(alarm.made)
            for t in alarm.made:
                LOG.info("alarm announced", alarm=alarm.id, transition_id=t.id, state=t.state.value)
        return report

    def _announce(self, alarm: Alarm, transitions: Sequence[Transition]) -> None:
        """Put one entry per transition; entries PutEvents did not take are put again (only they, so
        that a partial failure repeats nothing), ``ENTRY_RETRIES`` times, then ``AnnounceFailed``."""
        for start in range(0, len(transitions), MAX_ENTRIES):
            pending = [entry_of(alarm, t, self._pipeline) for t in transitions[start : start + MAX_ENTRIES]]
            for attempt in range(ENTRY_RETRIES.attempts):
                try:
                    answer = self._events.put_events(Entries=pending)  # type: ignore[arg-type]
                except Exception as exc:  # botocore's errors and the transport's: the stream retries the record
                    raise AnnounceFailed(f"PutEvents failed: {type(exc).__name__}: {exc}") from exc
                results = answer.get("Entries") or []
                refused = [e for e, r in zip(pending, results, strict=False) if r.get("ErrorCode")]
                if not answer.get("FailedEntryCount"):
                    break
                codes = sorted({str(r.get("ErrorCode")) for r in results if r.get("ErrorCode")})
                if attempt == ENTRY_RETRIES.attempts - 1:
                    raise AnnounceFailed(f"PutEvents refused {len(refused)} entries: {', '.join(codes)}")
                pending = refused
                ENTRY_RETRIES.wait(attempt)


class AnnounceFailed(Exception):
    """PutEvents did not take every entry: the record is retried."""


def build_service(settings: AnnouncerSettings, session: ClientSource, *, pipeline: str | None = None) -> Announcer:
    """The announcer of these settings, its clients from ``session`` (see ``announcer/handler.py``);
    ``pipeline``: the name its events carry (the construct's ``SENSOR_DIGEST_PIPELINE``)."""
    return Announcer(
        events=session.client("events"),
        alarms=AlarmStore(table_name=settings.table_name, client=make_client(session, max_pool_connections=4)),
        pipeline=pipeline,
    )


__all__ = ["DETAIL_TYPE", "EVENT_SOURCE", "AnnounceReport", "Announcer", "build_service", "detail_of"]
