"""Upgrading, rolling back and upgrading again, with the previous release's own code (DynamoDB Local,
every test here).

docs/exactly-once.md ("Upgrading, and rolling back") gives the paths: upgrade in two deploys
(``ledgerMode=per-message``, then compact), roll back in steps (per-message, wait, the previous
release), and CloudFormation's own rollback of a failed deploy. On each, a report that comes back
(SQS redelivers it, a redrive brings it back from the dead-letter queue, its producer sends it again)
must find itself counted, whichever release counted it and whichever release meets it again. The
previous release here is the real one (``tests/support/previous_release.py``: the last commit before
the compact ledger, run as its Lambda handler in a process of its own), against the same tables.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sensor_digest import api, ingest
from sensor_digest.config import ApiSettings, IngestSettings, LedgerMode
from sensor_digest.dead_letter_format import Origin
from sensor_digest.store import schema
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.lambda_runtime.events import QueuedMessage, sqs_event
from tests.support.previous_release import PreviousRelease
from tests.support.tables import Tables, day_counts

SENSOR, DAY = 1, "2024-05-01"
SENT_MS = 1_714_550_400_000  # 2024-05-01T08:00:00Z, when every report was first sent
REDRIVEN_MS = 1_715_068_800_000  # 2024-05-07T08:00:00Z, when a dead letter comes back


def first_send(n: int) -> QueuedMessage:
    """Report ``e<n>`` as its producer first sent it: an ``event_id`` and a timestamp of ``DAY``."""
    body = json.dumps({"sensor_id": SENSOR, "event_id": f"e{n}", "timestamp": f"{DAY}T{n % 24:02d}:30:00Z"})
    return QueuedMessage(body=body, message_id=f"m-e{n}", sent_timestamp_ms=SENT_MS, receive_count=1)


def redelivered(n: int) -> QueuedMessage:
    """SQS hands the same message out again (its delete, or the invocation's answer, was lost)."""
    return replace(first_send(n), receive_count=2)


def resent(n: int) -> QueuedMessage:
    """Its producer sends the report again: a new message, the same ``event_id`` and timestamp."""
    return replace(first_send(n), message_id=f"resend-e{n}")


def redriven(n: int) -> QueuedMessage:
    """Back from the dead-letter queue by the project's redrive: a new message id and send time, its
    origin stamped as the redrive stamps it (``Origin.attributes``)."""
    origin = Origin(f"m-e{n}", str(SENT_MS)).attributes()
    return replace(first_send(n), message_id=f"redrive-e{n}", sent_timestamp_ms=REDRIVEN_MS, attributes=origin)


COMES_BACK = {"redelivered": redelivered, "resent": resent, "redriven": redriven}


class Releases:
    """The releases a stack runs in turn over one pair of tables: this one in either ledger mode, and
    the previous one; each call is one invocation of a freshly deployed function (new container)."""

    def __init__(self, settings: IngestSettings, session: LocalSession, previous: PreviousRelease) -> None:
        self._settings, self._session, self._previous = settings, session, previous

    def run(self, release: str, messages: Iterable[QueuedMessage]) -> dict[str, Any]:
        batch = list(messages)
        if release == "previous":
            return self._previous.ingest(batch)
        mode = LedgerMode(release)
        service = ingest.build_service(replace(self._settings, ledger_mode=mode), self._session)
        return service.handle_event(sqs_event(batch), 300_000).response()


@pytest.fixture
def releases(
    ingest_settings: IngestSettings, session: LocalSession, tables: Tables, engine_endpoint: str, tmp_path: Path
) -> Releases:
    previous = PreviousRelease(tmp_path, table=tables.table, ledger=tables.ledger, endpoint=engine_endpoint)
    return Releases(ingest_settings, session, previous)


def count(ddb: Any, tables: Tables) -> int:
    return day_counts(ddb, tables.table).get((SENSOR, DAY), 0)


def comes_back_to(
    releases: Releases, release: str, again: Callable[[int], QueuedMessage], reports: range, ddb: Any, tables: Tables
) -> None:
    """Every report of ``reports`` comes back to ``release`` (in batches of 10, as SQS hands them out):
    none counts again and none fails."""
    before = count(ddb, tables)
    for start in range(reports.start, reports.stop, 10):
        response = releases.run(release, (again(n) for n in range(start, min(start + 10, reports.stop))))
        assert response == {"batchItemFailures": []}, f"{release} listed failures"
    assert count(ddb, tables) == before, f"{release} counted {list(reports)[:3]}... again"


def comes_back_every_way_to(releases: Releases, release: str, reports: range, ddb: Any, tables: Tables) -> None:
    """Every report of ``reports`` comes back to ``release`` each way a report comes back (``COMES_BACK``)."""
    for again in COMES_BACK.values():
        comes_back_to(releases, release, again, reports, ddb, tables)


@pytest.mark.parametrize("form", sorted(COMES_BACK))
def test_rolled_back_then_upgraded_again_in_two_steps_every_report_counts_once(
    releases: Releases, ddb: Any, tables: Tables, form: str
) -> None:
    again = COMES_BACK[form]

    # The stack runs the compact ledger: e0-e59 (a day begun compact, 40 in its item, then a page)
    releases.run("compact", map(first_send, range(30)))
    releases.run("compact", map(first_send, range(30, 60)))

    # Rolling back, step 1: ledgerMode=per-message counts e60-e69 (a marker each, beside its hash);
    # everything counted so far may still come back
    releases.run("per-message", map(first_send, range(60, 70)))
    comes_back_to(releases, "per-message", again, range(70), ddb, tables)

    # Step 2 waited until nothing counted before step 1 can come back; step 3: the previous release
    # counts e70-e79 (markers only), and meets again what step 1 counted
    releases.run("previous", map(first_send, range(70, 80)))
    assert count(ddb, tables) == 80
    comes_back_to(releases, "previous", again, range(60, 70), ddb, tables)

    # Upgrading again, step 1: per-message counts e80-e84; anything may come back
    releases.run("per-message", map(first_send, range(80, 85)))
    comes_back_to(releases, "per-message", again, range(85), ddb, tables)

    # Step 2: the compact ledger counts e85-e89; anything may come back, e70-e79 (the previous
    # release's, markers alone) among them
    releases.run("compact", map(first_send, range(85, 90)))
    comes_back_to(releases, "compact", again, range(90), ddb, tables)

    assert count(ddb, tables) == 90


def test_cloudformation_rolling_back_either_step_of_the_upgrade_counts_nothing_twice(
    releases: Releases, ddb: Any, tables: Tables
) -> None:
    # The previous release counted e0-e9; the first step of the upgrade (per-message) counts e10-e19,
    # then its deploy fails and CloudFormation puts the previous release back: what the new release
    # counted comes back to it
    releases.run("previous", map(first_send, range(10)))
    releases.run("per-message", map(first_send, range(10, 20)))
    comes_back_every_way_to(releases, "previous", range(20), ddb, tables)

    # The second step (compact) counts e20-e29, a hash alone each, then its deploy fails and
    # CloudFormation puts step 1 (per-message) back
    releases.run("compact", map(first_send, range(20, 30)))
    comes_back_every_way_to(releases, "per-message", range(30), ddb, tables)
    assert count(ddb, tables) == 30


def test_a_report_the_previous_release_counts_on_a_compact_day_is_known_by_its_marker_when_it_comes_back(
    releases: Releases, ddb: Any, tables: Tables
) -> None:
    # During a one-step upgrade an old container still counts: the compact ledger began the day,
    # the previous release counts e5-e9 on it (markers alone: the day is no longer hashed)
    releases.run("compact", map(first_send, range(5)))
    releases.run("previous", map(first_send, range(5, 10)))
    item = ddb.get_item(TableName=tables.table, Key=schema.day_key(SENSOR, DAY))["Item"]
    assert (item[schema.DATA_COUNT], item[schema.HASHED_COUNT]) == ({"N": "10"}, {"N": "5"})

    # When its producer resends them to the new release (first deliveries, looked up by no read),
    # and the new release counts more of that day
    comes_back_every_way_to(releases, "compact", range(10), ddb, tables)
    releases.run("compact", map(first_send, range(10, 15)))

    # Then each counted once; the reports counted since left a marker beside their hash
    assert count(ddb, tables) == 15
    comes_back_to(releases, "previous", resent, range(10, 15), ddb, tables)


def test_a_day_the_previous_release_began_stays_exact_under_the_compact_ledger(
    releases: Releases, ddb: Any, tables: Tables
) -> None:
    releases.run("previous", map(first_send, range(8)))
    assert schema.ID_PAGE not in ddb.get_item(TableName=tables.table, Key=schema.day_key(SENSOR, DAY))["Item"]

    releases.run("compact", map(first_send, range(8, 12)))
    comes_back_every_way_to(releases, "compact", range(12), ddb, tables)
    assert count(ddb, tables) == 12


def test_after_the_previous_release_counts_on_a_day_with_hours_the_read_api_calls_its_hours_incomplete(
    releases: Releases, ddb: Any, tables: Tables, session: LocalSession
) -> None:
    # Given a day created with hours, then counted on by the previous release (which keeps none)
    releases.run("compact", map(first_send, range(6)))
    reader = api.build_service(ApiSettings(table_name=tables.table), session)
    whole = reader.hours(SENSOR, DAY)
    releases.run("previous", map(first_send, range(6, 9)))

    # Then the day's hours are what this release counted, and say they are not the whole day
    partial = reader.hours(SENSOR, DAY)
    assert (whole["count"], whole["complete"], sum(whole["hours"].values())) == (6, True, 6)
    assert (partial["count"], partial["complete"], partial["hours"]) == (9, False, whole["hours"])


def test_a_dead_letter_of_this_release_redriven_after_the_rollback_counts_once_on_its_own_day(
    releases: Releases, ddb: Any, tables: Tables
) -> None:
    # Given a report with neither event_id nor timestamp (known by its message id, dated by its send
    # time), counted by this release (rollback step 1 is per-message) but its answer lost, so that
    # SQS moved it to the dead-letter queue
    body = json.dumps({"sensor_id": SENSOR})
    first = QueuedMessage(body=body, message_id="m-bare", sent_timestamp_ms=SENT_MS, receive_count=1)
    releases.run("per-message", [first])

    # When, the rollback done, the previous release meets it redriven by this release's command
    back = replace(first, message_id="redrive-bare", sent_timestamp_ms=REDRIVEN_MS)
    stamped = replace(back, attributes=Origin.of_letter("m-bare", str(SENT_MS), {}).attributes())
    response = releases.run("previous", [stamped])

    # Then the previous release reads its origin (the names it knows): the report counts once, on the
    # day it was sent, not again on the redrive's day
    assert response == {"batchItemFailures": []}
    assert day_counts(ddb, tables.table) == {(SENSOR, DAY): 1}
