"""The ingest role's grant against what ingest really does (DynamoDB Local, every test here).

``tests/synth/test_iam.py`` pins the grant; this runs the ingest handler, built by its own ``build_service``,
through a sensor-day that fills its day item and two identity pages, a redelivered batch (the
lookups), a report without ``timestamp`` (a marker) and a new day, records every DynamoDB action
it sends (each action of a transaction counted as the IAM action it is authorised as), and checks
each against the synthesized template's statements for the ingest function: an action the code
needs and the role lacks would be an ``AccessDenied`` that only a deployed stack would show.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from aws_cdk.assertions import Template

from sensor_digest import ingest
from sensor_digest.config import IngestSettings, LedgerMode
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from tests.support.faults import FaultySession
from tests.support.granted import CALLS, Recorder, granted
from tests.support.messages import FakeContext, QueuedMessage, body_of, sqs_event
from tests.support.tables import Tables, identities, markers
from tests.support.templates import synth


@pytest.fixture(scope="module")
def template() -> Template:
    """The stack's template as app.py synthesizes it (``tests/synth``'s fixtures are that folder's)."""
    return synth()[1]


def _report(i: int, day: str = "2024-05-01", received: int = 0, **extra: Any) -> QueuedMessage:
    return QueuedMessage(
        body=body_of(7, day, event_id=f"e{i}", **extra), message_id=f"m{i}-{day}", receive_count=received
    )


@pytest.mark.parametrize("mode", list(LedgerMode))
def test_every_dynamodb_action_ingest_sends_is_granted_to_its_role(
    mode: LedgerMode, template: Template, ddb: Any, tables: Tables, ingest_settings: IngestSettings, session: Any
) -> None:
    # Given the handler as Lambda runs it, every DynamoDB call recorded
    recorder = Recorder()
    handler = lambda_handler(
        ingest.build_service(
            replace(ingest_settings, ledger_mode=mode), FaultySession(session, recorder, operations=CALLS)
        )
    )
    day = [_report(i) for i in range(150)]  # the day item's 40, then pages 1 and 2

    # When a sensor-day outgrows its day item, part of it is redelivered, a report names no
    # timestamp, and a new day begins
    for start in range(0, len(day), 30):
        assert handler(sqs_event(day[start : start + 30]), FakeContext()) == {"batchItemFailures": []}
    redelivered = [replace(m, receive_count=2) for m in day[::7]]
    untimed = QueuedMessage(body=json.dumps({"sensor_id": 7, "event_id": "no-time"}), message_id="m-untimed")
    later = [_report(i, day="2024-05-02") for i in range(200, 203)]
    assert handler(sqs_event([*redelivered, untimed, *later]), FakeContext()) == {"batchItemFailures": []}

    # Then the ledger really took both paths, and every action is one the role is granted
    ledger_actions = {a for a, t in recorder.used if t == tables.ledger}
    if mode is LedgerMode.COMPACT:
        assert identities(ddb, tables) >= 153
        assert ledger_actions >= {"dynamodb:UpdateItem", "dynamodb:GetItem", "dynamodb:PutItem"}
    else:
        assert len(markers(ddb, tables)) == 154
    assert "MSG#7#no-time" in markers(ddb, tables)
    assert recorder.used - granted(template, tables, "ingest.handler.handler") == set()
