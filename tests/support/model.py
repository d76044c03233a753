"""The model the state machines (scenario 7, standard and FIFO) hold the tables to.

``SCRIPT`` is the fault rule their ingest services share: the faults the next write calls get, in
order. ``Sent`` is what a machine sent; while a message is unacknowledged its write may or may not
have committed, so each day count lies between what was acknowledged and that plus what is in doubt.
``ModelMachine`` is what both machines share: their fresh tables, that invariant, the teardown.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from sensor_digest import ingest
from sensor_digest.config import IngestSettings
from sensor_digest_tools.aws.dynamodb_local import create_tables
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from tests.support.faults import FaultySession
from tests.support.tables import day_counts

CONTEXT: dict[str, Any] = {}
"""What a machine's run gets from its test's fixtures (``machine_context``,
tests/dynamodb_local/reliability/conftest.py): ``ddb``, ``endpoint``, ``session``, ``dlq_url``."""


class Script:
    """The faults the next write calls get, in order."""

    def __init__(self) -> None:
        self.queue: list[str] = []

    def __call__(self, operation: str, kwargs: dict[str, Any]) -> str | None:
        return self.queue.pop(0) if self.queue else None


SCRIPT = Script()


def fresh_ingest(prefix: str, **options: Any) -> tuple[str, str, Any]:
    """A digest and a ledger table of their own, and the real ingest handler on them, its client
    behind the fault layer ``SCRIPT`` drives (cleared): the table, the ledger, the handler."""
    suffix = uuid.uuid4().hex[:8]
    table, ledger = f"{prefix}-{suffix}", f"{prefix}Ledger-{suffix}"
    create_tables(CONTEXT["ddb"], table, ledger)
    ingest_settings = IngestSettings(
        table_name=table, ledger_table_name=ledger, dlq_url=CONTEXT["dlq_url"], timezone=ZoneInfo("UTC"), **options
    )
    handler = lambda_handler(
        ingest.build_service(ingest_settings, FaultySession(inner=CONTEXT["session"], rule=SCRIPT))
    )
    SCRIPT.queue.clear()
    return table, ledger, handler


def run_machine(machine: type[RuleBasedStateMachine], *, examples: int, steps: int) -> None:
    """``machine`` run as hypothesis runs a state machine, without its deadline and slowness checks."""
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=examples,
            stateful_step_count=steps,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        ),
    )


Sent = dict[str, tuple[int, str, int]]
"""What a machine sent: a message's identity -> (sensor, day, count)."""


def model_counts(sent: Sent, ids: set[str]) -> Counter[tuple[int, str]]:
    """The day counts these of the sent messages add up to."""
    out: Counter[tuple[int, str]] = Counter()
    for identity in ids:
        sensor, day, count = sent[identity]
        out[(sensor, day)] += count
    return out


def assert_between_acknowledged_and_doubt(counts: dict[tuple[int, str], int], sent: Sent, acked: set[str]) -> None:
    """Each day count lies between what was acknowledged and that plus what is in doubt (sent,
    never acknowledged: its write may or may not have committed)."""
    low, doubt = model_counts(sent, acked), model_counts(sent, set(sent) - acked)
    for key in set(counts) | set(low) | set(doubt):
        assert low[key] <= counts.get(key, 0) <= low[key] + doubt[key], (key, counts.get(key), low[key], doubt[key])


class ModelMachine(RuleBasedStateMachine):
    """A machine of scenario 7: its ``@initialize`` calls ``start`` (fresh tables, the ingest handler on
    them, nothing sent or acknowledged), its rules fill ``sent`` and ``acked``, and the day counts stay
    between the two (``table_matches_model``). At the end the faults stop and ``settle`` (the machine's
    own) delivers whatever is left and holds the tables to the model exactly."""

    ddb: Any
    table: str
    ledger: str
    ingest: Any
    sent: Sent
    acked: set[str]

    def start(self, prefix: str, **options: Any) -> None:
        self.ddb = CONTEXT["ddb"]
        self.table, self.ledger, self.ingest = fresh_ingest(prefix, **options)
        self.sent = {}
        self.acked = set()

    @invariant()
    def table_matches_model(self) -> None:
        if not hasattr(self, "table"):
            return
        assert_between_acknowledged_and_doubt(day_counts(self.ddb, self.table), self.sent, self.acked)

    def teardown(self) -> None:
        if not hasattr(self, "table"):
            return
        SCRIPT.queue.clear()
        self.settle()

    def settle(self) -> None:
        raise NotImplementedError


def fault_rule(faults: Sequence[str]) -> Callable[..., None]:
    """A machine's rule that has the next write calls get one to three faults of ``faults`` (``SCRIPT``)."""

    @rule(kind=st.sampled_from(faults), count=st.integers(1, 3))
    def fault(self: ModelMachine, kind: str, count: int) -> None:
        SCRIPT.queue.extend([kind] * count)

    return fault
