"""The demo's alarm scenario: a rule set, readings that breach and clear it, an acknowledgement, a
snooze and a reset, each report also resent by its producer, every transition and its event set
against the scenario's own expectation.

The scenario is written as what a person expects of the rule ("above 30 for two reports, clear at
28"), not computed by the alarm code: ``STEPS`` lists each report's value (or the operator's
action) with the transition it must make, if any. Each step waits until the pipeline has drained,
so the reports are counted in their own time order (a standard queue may otherwise reorder them,
and the alarm then follows the rule for late reports, docs/alarms.md).
"""

from __future__ import annotations

import getpass
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sensor_digest.alarms.operations import AlarmOperations
from sensor_digest.alarms.rules import AlarmRule, RuleSet
from sensor_digest.alarms.store import AlarmStore, RuleStore
from sensor_digest_tools.ops.producer import batch_entry, is_fifo

ALARM_SENSOR = 900  # outside the traffic's sensors (0..sensors-1): its counts are the scenario's own
RULE: dict[str, Any] = {
    "name": "hot",
    "reading": "temperature",
    "sensors": [ALARM_SENSOR],
    "condition": "above",
    "threshold": 30,
    "clear": 28,
    "for_reports": 2,
    "severity": 2,
    "description": "the demo's: above 30 for two reports, normal again at 28",
}
STEPS: tuple[tuple[str, str | None], ...] = (
    # (a reading's value, or an operator's action), the state it must lead to (None: no transition)
    ("25", None),
    ("31", None),  # the first breaching report: a breach in the making
    ("32", "ACTIVE"),  # the second: active
    ("acknowledge", "ACKNOWLEDGED"),
    ("29.5", None),  # between the clear level and the threshold: still acknowledged
    ("27", "NORMAL"),  # cleared
    ("33", None),
    ("34", "ACTIVE"),
    ("snooze", "SNOOZED"),
    ("40", None),  # snoozed: no transition
    ("reset", "NORMAL"),
    ("20", None),
)


@dataclass
class AlarmCheck:
    """What the scenario expected and what the pipeline did."""

    expected: list[tuple[str, str, str | None]] = field(default_factory=list)  # (previous, state, value)
    events: list[dict[str, Any]] = field(default_factory=list)
    resent: int = 0
    differences: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences


def set_alarm_rule(pipeline: Any) -> None:
    """Store the scenario's rule (before the traffic: a container reads the rules when it starts,
    then at most every minute)."""
    rules = RuleStore(ledger_table_name=str(pipeline.target.ledger), client=pipeline.dynamodb())
    rules.save(RuleSet.of([AlarmRule.parse(RULE)]), expected=rules.version(consistent=True), by="demo", now=0)


def run_alarm_scenario(pipeline: Any, wait: Callable[[], bool], clock: Callable[[], float] = time.time) -> AlarmCheck:
    """Play ``STEPS`` through ``pipeline`` (a started ``LocalPipeline`` with ``set_alarm_rule``'s rule);
    ``wait`` drains it."""
    target = pipeline.target
    ddb = pipeline.dynamodb()
    rules = RuleStore(ledger_table_name=str(target.ledger), client=ddb)
    operations = AlarmOperations(rules=rules, alarms=AlarmStore(table_name=str(target.table), client=ddb))
    alarm_id = f"{ALARM_SENSOR}.{RULE['name']}"
    check = AlarmCheck()
    state, before = "NORMAL", len(pipeline.events.events)
    operator = f"demo ({getpass.getuser()})"
    for index, (step, after) in enumerate(STEPS):
        reading = step[0].isdigit()
        if reading:
            body = json.dumps(
                {
                    "sensor_id": ALARM_SENSOR,
                    "timestamp": clock(),
                    "event_id": f"alarm-demo-{index}",
                    "readings": {"temperature": float(step)},
                }
            )
            entry = batch_entry("0", body, fifo=is_fifo(str(target.queue_url)), fallback_id=f"alarm-demo-{index}")
            for _ in range(2):  # the producer resends it (it missed the answer): one report, one cause
                pipeline.sqs().send_message_batch(QueueUrl=target.queue_url, Entries=[entry])
            wait()
            check.resent += 1
        else:
            minutes = {"minutes": 60} if step == "snooze" else {}
            operations.act(alarm_id, step, by=operator, **minutes)  # type: ignore[arg-type]
            wait()
        if after is not None:
            check.expected.append((state, after, step if reading else None))
            state = after
    check.events = [e["detail"] for e in pipeline.events.events[before:]]
    check.differences = _differences(check.expected, check.events)
    return check


def _differences(expected: list[tuple[str, str, str | None]], events: list[dict[str, Any]]) -> list[str]:
    got = [
        (e["previous"], e["state"], None if e["value"] is None else str(Decimal(str(e["value"])).normalize()))
        for e in events
    ]
    want = [(p, s, None if v is None else str(Decimal(v).normalize())) for p, s, v in expected]
    lines = []
    if got != want:
        lines.append(f"alarm events {got} differ from the scenario's {want}")
    ids = [e["transition_id"] for e in events]
    if len(ids) != len(set(ids)):
        lines.append("an alarm transition was announced twice")
    return lines
