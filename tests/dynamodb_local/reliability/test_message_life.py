"""A report's whole life: through the dead-letter queue and back, by this project's redrive and by
SQS's own, it counts once and on the day it would have counted originally.

SQS: the in-process broker (SQS's semantics: redrive after ``maxReceiveCount`` keeps a message's id
and ``SentTimestamp``; ``StartMessageMoveTask`` gives it a new id and a new ``SentTimestamp``),
with a clock the test moves on by days; the local SQS event source. DynamoDB: DynamoDB Local. The
ingest service is the real one (``build_service``), with the fault layer in its client.
"""

from __future__ import annotations

from typing import Any

import pytest

from sensor_digest.dead_letter_format import SOURCE_ID_ATTRIBUTE, SOURCE_SENT_ATTRIBUTE
from sensor_digest.registry import Registry, SensorProfile
from sensor_digest_tools.ops.dlq import list_dead_letters
from tests.support.life import DAY, MAY_1_10H, REDRIVES, Pipeline, answer_lost_into_the_dead_letter_queue
from tests.support.tables import Tables, day_counts, identities, markers, recorded


@pytest.mark.parametrize("how", REDRIVES)
def test_a_committed_report_without_event_id_or_timestamp_counts_once_on_its_day_after_the_dlq(
    ddb: Any, tables: Tables, engine_endpoint: str, how: str
) -> None:
    # Given sensor 8's day under way, then an outage in which its next write commits but its answer
    # is lost, and every later call for it (the marker lookup included) fails, for longer than
    # maxReceiveCount receives: the report has failed its way into the dead-letter queue
    pipeline, outage, original = answer_lost_into_the_dead_letter_queue(tables, engine_endpoint)
    [letter] = list_dead_letters(pipeline.sqs, pipeline.dlq)
    committed_during_outage = day_counts(ddb, tables.table)

    # When two days later it is redriven
    pipeline.now += 2 * DAY
    outage.on = False
    REDRIVES[how](pipeline)
    pipeline.drain()

    # Then it was counted exactly once, on the day it was first sent: the redelivery's new message
    # id found the first delivery's identity under the original id
    assert (letter.error, letter.source_message_id) == (None, original)  # SQS moved it there itself
    assert outage.committed
    assert committed_during_outage == {(8, "2024-05-01"): 4}
    assert day_counts(ddb, tables.table) == {(8, "2024-05-01"): 4}
    assert recorded(ddb, tables, 8, "2024-05-01", "earlier") and recorded(ddb, tables, 8, "2024-05-01", original)
    # (the earlier report names an event_id without a timestamp: an identity and a marker; the
    # original, an identity)
    assert (identities(ddb, tables), markers(ddb, tables)) == (2, ["MSG#8#earlier"])
    assert pipeline.broker.counts(pipeline.dlq) == (0, 0)


@pytest.mark.parametrize("how", [*REDRIVES, "SQS's own redrive"])
def test_a_report_rejected_for_an_unknown_sensor_counts_on_its_day_once_the_sensor_is_registered(
    ddb: Any, tables: Tables, engine_endpoint: str, how: str
) -> None:
    # Given UNKNOWN_SENSORS=reject, and a report without timestamp sent at 20:00 UTC on May 1st
    # (05:00 on May 2nd in Tokyo) by a sensor not registered yet
    pipeline = Pipeline(tables, engine_endpoint, unknown_sensors="reject")
    pipeline.now = MAY_1_10H + 10 * 3600
    original = pipeline.send({"sensor_id": 9})
    pipeline.drain()

    # When it is redriven a day later before the sensor is registered (rejected again), and once
    # more two days after that, now registered with its zone
    pipeline.now += DAY
    pipeline.project_redrive()
    pipeline.drain()
    [again] = list_dead_letters(pipeline.sqs, pipeline.dlq)
    Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb).register(
        SensorProfile(sensor_id=9, name="roof", serial="SN-9", timezone="Asia/Tokyo")
    )
    pipeline.now += 2 * DAY
    if how == "SQS's own redrive":
        pipeline.sqs_own_redrive()
    else:
        REDRIVES[how](pipeline)
    pipeline.drain()

    # Then the second dead letter still carried the first message's id and send time, and the
    # report counted once, on the sensor's local day of its first send
    assert again.source_message_id == original
    assert again.source_sent_timestamp == str(int((MAY_1_10H + 10 * 3600) * 1000))
    assert again.error == "sensor 9 is not registered (UNKNOWN_SENSORS=reject)"
    assert {SOURCE_ID_ATTRIBUTE, SOURCE_SENT_ATTRIBUTE} <= set(again.attributes)
    assert day_counts(ddb, tables.table) == {(9, "2024-05-02"): 1}
    assert recorded(ddb, tables, 9, "2024-05-02", original)
    assert identities(ddb, tables) == 1


def test_sqs_own_redrive_of_an_unstamped_dead_letter_gives_it_a_new_identity(
    ddb: Any, tables: Tables, engine_endpoint: str
) -> None:
    # What `dlq stamp` is for, shown on the emulator: a message SQS moved to the dead-letter queue
    # itself, redriven by SQS without a stamp, comes back with a new id and a new send time, so a
    # report without event_id and timestamp would count again, on the redrive's day
    pipeline = Pipeline(tables, engine_endpoint, rule=lambda op, kw: "throttle")
    original = pipeline.send({"sensor_id": 4})
    pipeline.drain()
    pipeline.now += DAY
    pipeline.sqs_own_redrive()
    [back] = pipeline.sqs.receive_message(QueueUrl=pipeline.queue, AttributeNames=["All"])["Messages"]
    assert back["MessageId"] != original
    assert back["Attributes"]["SentTimestamp"] == str(int(pipeline.now * 1000))
    assert "MessageAttributes" not in back or not back["MessageAttributes"]
