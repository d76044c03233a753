"""Counted reports against the alarm rules, after their count (ingest's last step before its answer).

``AlarmEvaluator.evaluate`` takes the reports of a batch that ended **counted or found counted**
(a duplicate of a counted report is taken too: its count may have committed in an invocation that
ended before its evaluation did, and the alarm's own ``seen`` mark makes a second evaluation of it a
no-op). For each sensor with rules for its readings (``RuleSet.for_sensor``), its alarms are read
in one strongly consistent ``BatchGetItem`` per 100 alarms, decided (``model.evaluate``) and written
only when something changed, each write conditional on the version read: a lost race is decided
again from the alarm the winner wrote (``AlarmChanged``). A sensor without rules costs nothing.

What could not be evaluated (a fault, no time left) is handed back: ingest lists those messages as
batch item failures, so SQS delivers them again, they are found counted, and evaluated then.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sensor_digest.alarms.model import Alarm, Report, evaluate
from sensor_digest.alarms.rules import AlarmRule
from sensor_digest.alarms.store import AlarmChanged, AlarmStore, RuleCache, alarm_of
from sensor_digest.backoff import Backoff
from sensor_digest.errors import Contention, MalformedItem, RefusedWrite, TransientFault
from sensor_digest.logs import LOG
from sensor_digest.messages import SensorMessage

MICROS = 1_000_000
RACE = Backoff(attempts=6, base_seconds=0.01, cap_seconds=0.2, least=0.5)


@dataclass(frozen=True)
class Evaluated:
    """What one batch's evaluation came to."""

    failed: list[SensorMessage] = field(default_factory=list)
    writes: int = 0
    transitions: int = 0
    reads: int = 0


@dataclass
class AlarmEvaluator:
    rules: RuleCache
    alarms: AlarmStore
    clock: Callable[[], float] = time.time
    race: Backoff = RACE

    def evaluate(self, messages: Sequence[SensorMessage], expired: Callable[[], bool] | None = None) -> Evaluated:
        with_readings = [m for m in messages if m.readings]
        if not with_readings:
            return Evaluated()
        try:
            rules = self.rules.rules()
        except TransientFault as fault:
            LOG.warning("alarm rules unavailable; the reports will be evaluated on redelivery", reason=str(fault))
            return Evaluated(failed=list(with_readings))
        except (MalformedItem, RefusedWrite) as bad:  # no rules can be read: none is evaluated, nothing is held
            LOG.error("alarm rules unreadable, no alarm evaluated; apply a rule file again", reason=str(bad))
            return Evaluated()
        if not rules.rules:
            return Evaluated()
        watched: dict[int, list[SensorMessage]] = defaultdict(list)
        readings = rules.readings()
        for m in with_readings:
            if any(name in readings for name, _ in m.readings):
                watched[m.sensor_id].append(m)
        plan: dict[tuple[int, str], tuple[AlarmRule, list[SensorMessage]]] = {}
        for sensor, sensor_messages in watched.items():
            for rule in rules.for_sensor(sensor):
                hits = [m for m in sensor_messages if any(name == rule.reading for name, _ in m.readings)]
                if hits:
                    plan[(sensor, rule.name)] = (rule, hits)
        if not plan:
            return Evaluated()
        try:
            stored = self.alarms.get_many(plan, expired=expired)
        except TransientFault as fault:
            LOG.warning("alarms unreadable; the reports will be evaluated on redelivery", reason=str(fault))
            return Evaluated(failed=[m for _, hits in plan.values() for m in hits], reads=len(plan))
        failed: dict[str, SensorMessage] = {}
        writes = transitions = 0
        for key, (rule, hits) in plan.items():
            try:
                alarm = alarm_of(stored[key]) if key in stored else Alarm.fresh(key[0], rule)
                made, wrote = self._decide(alarm, rule, hits, expired)
            except TransientFault as fault:
                LOG.warning(
                    "alarm not evaluated; its reports will be evaluated on redelivery",
                    alarm=f"{key[0]}.{key[1]}",
                    reason=fault.reason,
                )
                failed.update((m.message_id, m) for m in hits)
                continue
            except (MalformedItem, RefusedWrite) as bad:  # a hand-made alarm item: skipped, never holds counts
                LOG.error(
                    "alarm item unreadable, not evaluated; reset it with `sensor-digest alarms reset`",
                    alarm=f"{key[0]}.{key[1]}",
                    reason=str(bad),
                )
                continue
            writes += wrote
            transitions += made
        return Evaluated(failed=list(failed.values()), writes=writes, transitions=transitions, reads=len(plan))

    def _decide(
        self, alarm: Alarm, rule: AlarmRule, hits: list[SensorMessage], expired: Callable[[], bool] | None
    ) -> tuple[int, int]:
        """Evaluate and write one alarm; the transitions made and the writes tried."""
        reports = [Report(m.at, value, m.event_id) for m in hits for name, value in m.readings if name == rule.reading]
        writes = 0
        for attempt in range(self.race.attempts):
            if expired is not None and expired():
                raise TransientFault("no time left in the invocation to evaluate alarms")
            after = evaluate(alarm, rule, reports, int(self.clock() * MICROS))
            if after is alarm:
                return 0, writes
            writes += 1
            try:
                written = self.alarms.write(alarm, after)
            except AlarmChanged as changed:
                alarm = changed.current
                self.race.wait(attempt)
                continue
            for t in written.made:
                LOG.info("alarm state changed", alarm=written.id, previous=t.previous, state=t.state, cause=t.cause)
            return len(written.made), writes
        raise Contention(f"alarm {alarm.id} kept changing under this write ({self.race.attempts} attempts)")
