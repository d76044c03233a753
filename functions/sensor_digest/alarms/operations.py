"""What operators do to alarms and rules, shared by the command line and the read API's operator routes.

``AlarmOperations.act`` reads the alarm (an alarm never written is NORMAL under a rule that applies
to its sensor), decides (``model.act``: ``ActionRefused`` where the state does not allow it) and
writes on condition of the version read; a lost race with ingest or another operator is decided
again from what won, so an acknowledgement racing another one makes one transition and the second
is refused (already ACKNOWLEDGED). ``parse_alarm_id`` reads ``<sensor_id>.<rule>``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from sensor_digest.alarms.model import ActionRefused, Alarm, act
from sensor_digest.alarms.rules import MAX_SENSOR_ID, NAME, RuleSet
from sensor_digest.alarms.store import AlarmChanged, AlarmStore, RuleStore
from sensor_digest.backoff import Backoff
from sensor_digest.errors import Contention, ReasonedError

MICROS = 1_000_000
ALARM_ID = re.compile(r"([0-9]{1,16})\.(.+)")
MAX_SNOOZE_SECONDS = 30 * 86_400
RACE = Backoff(attempts=6, base_seconds=0.02, cap_seconds=0.5, least=0.5)


class UnknownAlarm(ReasonedError):
    """No rule watches that sensor under that name (answered 404)."""


class BadAlarmId(ReasonedError):
    """An alarm id that is not ``<sensor_id>.<rule>`` (answered 400)."""


def parse_alarm_id(text: str) -> tuple[int, str]:
    match = ALARM_ID.fullmatch(text) if isinstance(text, str) else None
    if match is None or int(match[1]) > MAX_SENSOR_ID or NAME.fullmatch(match[2]) is None:
        shown = repr(text[:80]) if isinstance(text, str) else type(text).__name__
        raise BadAlarmId(f"an alarm id is <sensor_id>.<rule name>, such as 7.hot; got {shown}")
    return int(match[1]), match[2]


@dataclass
class AlarmOperations:
    rules: RuleStore
    alarms: AlarmStore
    clock: Callable[[], float] = time.time
    race: Backoff = RACE

    def alarm(self, sensor_id: int, rule_name: str, rules: RuleSet | None = None) -> Alarm:
        """The alarm as it is: stored, or NORMAL under a rule that watches the sensor; ``UnknownAlarm``."""
        stored = self.alarms.get(sensor_id, rule_name)
        if stored is not None:
            return stored
        rule = next((r for r in (rules or self.rules.load()).for_sensor(sensor_id) if r.name == rule_name), None)
        if rule is None:
            raise UnknownAlarm(f"no rule named {rule_name} watches sensor {sensor_id}")
        return Alarm.fresh(sensor_id, rule)

    def act(
        self, alarm_id: str, action: str, *, by: str, until: int | None = None, minutes: int | None = None
    ) -> Alarm:
        """The alarm after ``action`` (``snooze``: until an instant in microseconds, or for ``minutes``)."""
        sensor_id, rule_name = parse_alarm_id(alarm_id)
        if action == "snooze":
            until = self._snooze_end(until, minutes)
        current = self.alarm(sensor_id, rule_name)
        for attempt in range(self.race.attempts):
            now = int(self.clock() * MICROS)
            after = act(current, action, now, by, until)
            try:
                return self.alarms.write(current, after)
            except AlarmChanged as changed:
                current = changed.current
                self.race.wait(attempt)
        raise Contention(f"alarm {alarm_id} kept changing; try again")

    def _snooze_end(self, until: int | None, minutes: int | None) -> int:
        now = int(self.clock() * MICROS)
        if (until is None) == (minutes is None):
            raise ActionRefused('a snooze takes "until" (a time) or "minutes", one of them')
        if minutes is not None:
            if (
                isinstance(minutes, bool)
                or not isinstance(minutes, int)
                or not 1 <= minutes <= MAX_SNOOZE_SECONDS // 60
            ):
                raise ActionRefused(f"minutes must be a whole number from 1 to {MAX_SNOOZE_SECONDS // 60}")
            return now + minutes * 60 * MICROS
        assert until is not None
        if not now < until <= now + MAX_SNOOZE_SECONDS * MICROS:
            raise ActionRefused("a snooze must end in the future, within 30 days")
        return until

    def of_sensor(self, sensor_id: int, rules: RuleSet | None = None) -> list[Alarm]:
        """Every alarm of a sensor: one per rule that watches it (NORMAL where none is stored), and the
        stored ones of rules since deleted."""
        stored = {a.rule: a for a in self.alarms.of_sensor(sensor_id)}
        watching = (rules or self.rules.load()).for_sensor(sensor_id)
        out = [stored.pop(r.name) if r.name in stored else Alarm.fresh(sensor_id, r) for r in watching]
        return out + sorted(stored.values(), key=lambda a: a.rule)


__all__ = [
    "ActionRefused",
    "AlarmOperations",
    "BadAlarmId",
    "UnknownAlarm",
    "parse_alarm_id",
]
