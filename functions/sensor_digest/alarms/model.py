"""An alarm (one rule for one sensor): its states, and every change of them as a pure decision.

The states are IoT Events' alarm model's::

    NORMAL ──breach lasts (for_seconds / for_reports)──▶ ACTIVE ──value clears──▶ NORMAL
       ▲                                                  │   (latch: LATCHED, until acknowledged)
       │                                        acknowledge▼
       └──────────────value clears───────────── ACKNOWLEDGED

    LATCHED ──acknowledge──▶ NORMAL;  LATCHED ──breach lasts──▶ ACTIVE
    any ──snooze(until)──▶ SNOOZED ──first report at or after `until`──▶ evaluated as from NORMAL
    any ──disable──▶ DISABLED ──enable──▶ NORMAL;  ACTIVE/ACKNOWLEDGED/LATCHED/SNOOZED ──reset──▶ NORMAL

**Time order** (``evaluate``). An alarm remembers the report it last acted on (``seen``: its report
time and ``event_id``): a report at or before it moves nothing. So a redelivered, redriven or resent
report, already evaluated, moves nothing a second time, and a report older than the one that last
moved the alarm does not move it back. Reports that change nothing (a value in range while NORMAL,
a breach while ACTIVE) are not written down: that is what keeps a rule free on a sensor whose values
are in range. Reports of one batch are evaluated in their own time order. An operator's action is
taken at its wall-clock time: reports from before it move nothing after it.

A breach in the making (``pending``) is the first breaching report's time and how many consecutive
reports have breached; a report that does not breach ends it.

Every transition has an ``id`` that is the same whenever it is made again from the same cause (the
report's ``event_id``, or the operator action and the alarm's version), so a consumer that sees one
twice can drop the repeat.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from enum import StrEnum

from sensor_digest.alarms.rules import AlarmRule
from sensor_digest.errors import ReasonedError

MICROS = 1_000_000
KEPT_TRANSITIONS = 1  # the transitions of the last write (the outbox); history is the announcer's


class State(StrEnum):
    NORMAL = "NORMAL"
    ACTIVE = "ACTIVE"
    ACKNOWLEDGED = "ACKNOWLEDGED"
    LATCHED = "LATCHED"
    SNOOZED = "SNOOZED"
    DISABLED = "DISABLED"


LISTED_ORDER = (State.ACTIVE, State.LATCHED, State.ACKNOWLEDGED, State.SNOOZED, State.DISABLED)
"""The states ``GET /alarms`` lists, in its order (active first); NORMAL alarms are a sensor's."""


class ActionRefused(ReasonedError):
    """An operator action the alarm's state does not allow (answered 409)."""


ACTIONS = ("acknowledge", "snooze", "reset", "disable", "enable")


def iso(micros: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS[.ffffff]Z`` of an instant."""
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=micros)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}.{moment.microsecond:06d}Z" if moment.microsecond else f"{text}Z"


def alarm_id(sensor_id: int, rule: str) -> str:
    """The alarm's id in the API and on the command line: ``<sensor_id>.<rule>``."""
    return f"{sensor_id}.{rule}"


def transition_id(sensor_id: int, rule: str, cause: str) -> str:
    return hashlib.sha256(f"{sensor_id}\x1f{rule}\x1f{cause}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Report:
    """What an alarm needs of a counted report: its time, its reading's value, its identity."""

    at: int  # microseconds since the epoch
    value: Decimal
    event_id: str

    @property
    def mark(self) -> tuple[int, str]:
        return (self.at, self.event_id)


@dataclass(frozen=True)
class Transition:
    id: str
    previous: State
    state: State
    at: int  # when it was decided (wall clock, microseconds)
    by: str  # "report", or the operator (an IAM ARN, a user name)
    cause: str  # the report's event_id, or the action
    severity: int
    value: Decimal | None = None
    report_time: int | None = None

    def as_json(self) -> dict[str, object]:
        """The transition as the read API's history and the event's detail give it (values exact;
        ``value`` and ``report_time`` ``None`` where an operator moved it)."""
        return {
            "transition_id": self.id,
            "previous": self.previous.value,
            "state": self.state.value,
            "severity": self.severity,
            "value": self.value,
            "report_time": None if self.report_time is None else iso(self.report_time),
            "at": iso(self.at),
            "by": self.by,
            "cause": self.cause,
        }


@dataclass(frozen=True)
class Alarm:
    """One alarm as stored; ``version`` 0: not stored yet (NORMAL, nothing seen)."""

    sensor_id: int
    rule: str
    reading: str
    severity: int = 3
    state: State = State.NORMAL
    version: int = 0
    seen: tuple[int, str] | None = None
    pending_since: int | None = None
    pending_count: int = 0
    snoozed_until: int | None = None
    since: int | None = None  # when the state was entered (wall clock)
    made: tuple[Transition, ...] = ()  # the transitions of the write that stored this version

    @property
    def id(self) -> str:
        return alarm_id(self.sensor_id, self.rule)

    @classmethod
    def fresh(cls, sensor_id: int, rule: AlarmRule) -> Alarm:
        return cls(sensor_id=sensor_id, rule=rule.name, reading=rule.reading, severity=rule.severity)


def _moved(alarm: Alarm, state: State, now: int, *, by: str, cause: str, report: Report | None) -> Alarm:
    made = Transition(
        # a report's cause and an operator's in their own namespaces: an event_id cannot name an action
        id=transition_id(
            alarm.sensor_id,
            alarm.rule,
            ("report\x1f" if report is not None else "operator\x1f") + f"{cause}\x1f{alarm.state}\x1f{state}",
        ),
        previous=alarm.state,
        state=state,
        at=now,
        by=by,
        cause=cause,
        severity=alarm.severity,
        value=None if report is None else report.value,
        report_time=None if report is None else report.at,
    )
    return replace(
        alarm,
        state=state,
        since=now,
        pending_since=None,
        pending_count=0,
        snoozed_until=alarm.snoozed_until if state is State.SNOOZED else None,
        made=(*alarm.made, made),
    )


def _breach_step(alarm: Alarm, rule: AlarmRule, report: Report, now: int, target: State) -> Alarm:
    """A breaching report while NORMAL or LATCHED: the breach in the making grows, or is active."""
    since = report.at if alarm.pending_since is None else alarm.pending_since
    count = alarm.pending_count + 1
    if count >= rule.for_reports and report.at - since >= rule.for_seconds * MICROS:
        return _moved(alarm, target, now, by="report", cause=report.event_id, report=report)
    return replace(alarm, pending_since=since, pending_count=count)


def _step(alarm: Alarm, rule: AlarmRule, report: Report, now: int) -> Alarm:
    state = alarm.state
    if state is State.DISABLED:
        return alarm
    if state is State.SNOOZED:
        if alarm.snoozed_until is not None and report.at < alarm.snoozed_until:
            return alarm
        if rule.breaches(report.value):
            woken = _breach_step(replace(alarm, pending_since=None, pending_count=0), rule, report, now, State.ACTIVE)
            if woken.state is State.ACTIVE:
                return woken
            awake = _moved(alarm, State.NORMAL, now, by="report", cause=report.event_id, report=report)
            return replace(awake, pending_since=woken.pending_since, pending_count=woken.pending_count)
        return _moved(alarm, State.NORMAL, now, by="report", cause=report.event_id, report=report)
    if state in (State.NORMAL, State.LATCHED):
        if rule.breaches(report.value):
            return _breach_step(alarm, rule, report, now, State.ACTIVE)
        if alarm.pending_since is not None:
            return replace(alarm, pending_since=None, pending_count=0)
        return alarm
    if rule.clears(report.value):  # ACTIVE, ACKNOWLEDGED
        after = State.LATCHED if state is State.ACTIVE and rule.latch else State.NORMAL
        return _moved(alarm, after, now, by="report", cause=report.event_id, report=report)
    return alarm


def evaluate(alarm: Alarm, rule: AlarmRule, reports: Iterable[Report], now: int) -> Alarm:
    """The alarm after ``reports`` (any order; taken in their own time order), with ``made`` holding
    only the transitions they caused; ``alarm`` itself when none moved anything (nothing to write)."""
    start = replace(alarm, made=(), severity=rule.severity, reading=rule.reading)
    current = start
    for report in sorted(reports, key=lambda r: r.mark):
        if current.seen is not None and report.mark <= current.seen:
            continue
        after = _step(current, rule, report, now)
        if after != current:
            current = replace(after, seen=report.mark)
    return alarm if current == start else current


def act(alarm: Alarm, action: str, now: int, by: str, until: int | None = None) -> Alarm:
    """An operator's action on the alarm; ``ActionRefused`` where its state does not allow it."""
    state = alarm.state
    cause = f"{action}#{alarm.version + 1}"
    allowed: dict[str, tuple[State, ...]] = {
        "acknowledge": (State.ACTIVE, State.LATCHED),
        "snooze": (State.NORMAL, State.ACTIVE, State.ACKNOWLEDGED, State.LATCHED, State.SNOOZED),
        "reset": (State.ACTIVE, State.ACKNOWLEDGED, State.LATCHED, State.SNOOZED),
        "disable": (State.NORMAL, State.ACTIVE, State.ACKNOWLEDGED, State.LATCHED, State.SNOOZED),
        "enable": (State.DISABLED,),
    }
    if action not in allowed:
        raise ActionRefused(f"unknown action {action!r}: one of {', '.join(ACTIONS)}")
    if state not in allowed[action]:
        raise ActionRefused(
            f"alarm {alarm.id} is {state}: {action} applies to " + ", ".join(s.value for s in allowed[action])
        )
    if action == "snooze":
        if until is None or until <= now:
            raise ActionRefused("a snooze must end in the future")
        target = State.SNOOZED
    elif action == "acknowledge":
        target = State.ACKNOWLEDGED if state is State.ACTIVE else State.NORMAL
    elif action == "disable":
        target = State.DISABLED
    else:  # reset, enable
        target = State.NORMAL
    base = replace(alarm, made=(), snoozed_until=until if action == "snooze" else alarm.snoozed_until)
    moved = _moved(base, target, now, by=by, cause=cause, report=None)
    seen = max(alarm.seen or (now, ""), (now, ""))
    return replace(moved, seen=seen)
