"""Upgrading, rolling back and upgrading again, with the previous release's own code (DynamoDB Local,
every test here).

docs/exactly-once.md ("Upgrading, and rolling back") gives the paths: upgrade in two deploys
(``ledgerMode=per-message``, then compact), roll back in steps (per-message, wait, the previous
release), and CloudFormation's own rollback of a failed deploy. On each, a report that comes back
(SQS redelivers it, a redrive brings it back from the dead-letter queue, its producer sends it again)
must find itself counted, whichever release counted it and whichever release meets it again. The
previous release here is the real one (``tests/support/previous_release.py``: the last commit before
the compact ledger, run as its Lambda handler in a process of its own), against the same tables.

The items and dead letters of that release's layout that this one keeps reading are written here by
that release's own code: days begun under markers, day items without ``HourCounts`` or
``ReadingsCover``, day items it leaves empty (no ``DataCount``), and dead letters with the bare
origin names (SQS there: moto's server, ``LocalSqs``). docs/changelog.md's table of compatibility
paths names the test of each.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sensor_digest import api, ingest
from sensor_digest.config import ApiSettings, IngestSettings, LedgerMode
from sensor_digest.dead_letter_format import Origin
from sensor_digest.registry import Registry, SensorProfile
from sensor_digest.silence.check import SilenceCheck
from sensor_digest.store import schema
from sensor_digest.stream_filter import day_count_of, matches_filter
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.aws.sqs_server import LocalSqs
from sensor_digest_tools.lambda_runtime.events import QueuedMessage, received_sqs_event, sqs_event
from sensor_digest_tools.ops.dlq import list_dead_letters, redrive
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

    # its HourCounts (the previous release wrote none) were created by this release's first write, and
    # hold what this release counted
    item = ddb.get_item(TableName=tables.table, Key=schema.day_key(SENSOR, DAY), ConsistentRead=True)["Item"]
    assert schema.hour_counts_of_item(item) == {f"{n:02d}": 1 for n in range(8, 12)}


def test_after_the_previous_release_counts_on_a_day_with_hours_the_read_api_calls_its_hours_incomplete(
    releases: Releases, ddb: Any, tables: Tables, session: LocalSession
) -> None:
    # Given a day created with hours, then counted on by the previous release (which keeps none)
    releases.run("compact", map(first_send, range(6)))
    reader = api.build_service(ApiSettings(table_name=tables.table, ledger_table_name=tables.ledger), session)
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


NEXT_DAY = "2024-05-02"
NEXT_DAY_MS = SENT_MS + 86_400_000  # 2024-05-02T08:00:00Z


def test_a_day_item_the_previous_release_left_empty_is_no_day_for_any_reader_of_this_one(
    releases: Releases, ddb: Any, tables: Tables, session: LocalSession
) -> None:
    # Given a report naming an event_id but no timestamp, counted by the previous release on the day it
    # was sent, whose producer sends it again the next day: the previous release creates that day's
    # item empty (its key alone) before its marker finds the report counted, and leaves it so
    body = json.dumps({"sensor_id": SENSOR, "event_id": "untimed"})
    releases.run("previous", [QueuedMessage(body=body, message_id="m-untimed", sent_timestamp_ms=SENT_MS)])
    again = QueuedMessage(body=body, message_id="resend-untimed", sent_timestamp_ms=NEXT_DAY_MS)
    assert releases.run("previous", [again]) == {"batchItemFailures": []}
    empty = ddb.get_item(TableName=tables.table, Key=schema.day_key(SENSOR, NEXT_DAY), ConsistentRead=True)["Item"]
    assert set(empty) == {schema.SENSOR_ID, schema.DATE}
    Registry(
        table_name=tables.table,
        ledger_table_name=tables.ledger,
        client=ddb,
        clock=lambda: dt.datetime(2024, 4, 1, tzinfo=dt.UTC),
    ).register(SensorProfile(SENSOR, "roof", "SN-1"))

    # When this release's readers read the sensor: the read API's days, the summary's stream filter
    # (the item's INSERT as the stream carries it), the silence check two days later
    reader = api.build_service(ApiSettings(table_name=tables.table, ledger_table_name=tables.ledger), session)
    insert = {"eventName": "INSERT", "dynamodb": {"Keys": schema.day_key(SENSOR, NEXT_DAY), "NewImage": empty}}
    silence = SilenceCheck(
        table_name=tables.table,
        client=ddb,
        default_hours=6,
        default_zone=ZoneInfo("UTC"),
        clock=lambda: dt.datetime(2024, 5, 3, 12, tzinfo=dt.UTC),
    ).run()

    # Then the empty item is no day: the API lists the day counted alone, the summary never sees it,
    # and the sensor was last heard on the day the report was counted
    assert reader.days(SENSOR, DAY, NEXT_DAY, None, None)["days"] == {DAY: 1}
    assert (matches_filter(insert), day_count_of(insert)) == (False, None)
    [silent] = silence.silent
    assert silent.last_report_hour is not None and silent.last_report_hour.startswith(DAY)


def with_readings(n: int) -> QueuedMessage:
    """Report ``r<n>`` on ``DAY`` with the reading ``t`` of ``n``."""
    body = {"sensor_id": SENSOR, "event_id": f"r{n}", "timestamp": f"{DAY}T10:00:00Z", "readings": {"t": n}}
    return QueuedMessage(body=json.dumps(body), message_id=f"m-r{n}", sent_timestamp_ms=SENT_MS)


def test_readings_of_a_day_the_previous_release_counted_say_they_do_not_hold_its_reports(
    releases: Releases, tables: Tables, session: LocalSession
) -> None:
    # Given reports with readings that the previous release counted (it keeps no readings, and no
    # ReadingsCover)
    assert releases.run("previous", map(with_readings, range(3))) == {"batchItemFailures": []}
    reader = api.build_service(ApiSettings(table_name=tables.table, ledger_table_name=tables.ledger), session)

    # When this release reads the day's readings by hour, then counts one more report with readings
    before = reader.readings_hours(SENSOR, DAY)
    assert releases.run("compact", [with_readings(3)]) == {"batchItemFailures": []}
    after = reader.readings(SENSOR, DAY, DAY, None, None)

    # Then neither passes the statistics off as the day's: before, no readings and not complete; after,
    # the one report's, and the day named partial
    assert (before["hours"], before["complete"]) == ({}, False)
    assert after["days"][DAY]["t"]["count"] == 1 and after["partial_days"] == [DAY]


@pytest.fixture
def local_sqs() -> Iterator[LocalSqs]:
    server = LocalSqs()
    yield server
    server.stop()


def test_a_dead_letter_of_the_previous_release_redriven_after_the_upgrade_counts_once_on_its_own_day(
    local_sqs: LocalSqs, ddb: Any, tables: Tables, engine_endpoint: str, tmp_path: Path
) -> None:
    # Given a report without event_id or timestamp (known by its message id, dated by its send time)
    # that the previous release rejected (its sensor unregistered, UNKNOWN_SENSORS=reject): its own
    # dead letter, its origin under the bare names that release writes
    queues = local_sqs.create_queues("SensorDigestQueue", visibility_timeout=30, max_receive_count=5)
    previous = PreviousRelease(
        tmp_path,
        table=tables.table,
        ledger=tables.ledger,
        endpoint=engine_endpoint,
        dlq_url=queues.dlq_url,
        sqs_endpoint=local_sqs.endpoint,
        settings={"UNKNOWN_SENSORS": "reject", "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1"},
    )
    first = QueuedMessage(body=json.dumps({"sensor_id": 9}), message_id="m-rejected", sent_timestamp_ms=SENT_MS)
    assert previous.ingest([first]) == {"batchItemFailures": []}
    sqs = local_sqs.client()
    [letter] = list_dead_letters(sqs, queues.dlq_url)

    # When, upgraded, the sensor is registered and this release's redrive sends the letter back, days
    # later, to this release's ingest
    Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb).register(
        SensorProfile(9, "roof", "SN-9")
    )
    assert redrive(sqs, queues.dlq_url, queues.queue_url).moved == 1
    got = sqs.receive_message(
        QueueUrl=queues.queue_url, AttributeNames=["All"], MessageAttributeNames=["All"], MaxNumberOfMessages=10
    )["Messages"]
    settings = IngestSettings(
        table_name=tables.table, ledger_table_name=tables.ledger, dlq_url=queues.dlq_url, timezone=ZoneInfo("UTC")
    )
    current = ingest.build_service(settings, LocalSession({"dynamodb": engine_endpoint, "sqs": local_sqs.endpoint}))
    response = current.handle_event(received_sqs_event(got), 300_000).response()

    # Then the report counts once, on the day it was first sent, not on the redrive's: the letter was
    # read as the previous release wrote it, its origin the first message
    assert response == {"batchItemFailures": []}
    assert day_counts(ddb, tables.table) == {(9, DAY): 1}
    assert (letter.source_message_id, letter.source_sent_timestamp, letter.stamped) == (
        "m-rejected",
        str(SENT_MS),
        False,
    )
    assert "not registered" in str(letter.error)
