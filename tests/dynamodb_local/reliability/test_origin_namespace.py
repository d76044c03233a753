"""The origin attributes are the project's own: a producer's attributes named like them are never
taken for an origin, and dead letters an earlier version wrote under the bare names stay
redrivable exactly (the project's redrive and ``dlq stamp`` rename them into the namespace).

SQS: the in-process broker on a clock the test moves on by days (``tests/support/life.py``), with
the local SQS event source; DynamoDB: DynamoDB Local; the ingest service is the real one.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sensor_digest.dead_letter_format import (
    LEGACY_ORIGIN_ATTRIBUTES,
    LEGACY_SOURCE_ID_ATTRIBUTE,
    LEGACY_SOURCE_SENT_ATTRIBUTE,
    ORIGIN_ATTRIBUTES,
    REASON_ATTRIBUTE,
)
from sensor_digest.registry import Registry, SensorProfile
from sensor_digest_tools.ops.dlq import list_dead_letters
from tests.support.life import DAY, MAY_1_10H, REDRIVES, Pipeline, answer_lost_into_the_dead_letter_queue
from tests.support.tables import Tables, day_counts


def text(value: str) -> dict[str, str]:
    return {"DataType": "String", "StringValue": value}


def number(value: str) -> dict[str, str]:
    return {"DataType": "Number", "StringValue": value}


def test_a_relays_own_source_message_id_attribute_never_merges_distinct_reports(
    ddb: Any, tables: Tables, engine_endpoint: str
) -> None:
    # Given a relay that tags every report it forwards with the upstream message's id and send
    # time, under the names the origin attributes had before they were namespaced
    pipeline = Pipeline(tables, engine_endpoint)
    tagged = {
        LEGACY_SOURCE_ID_ATTRIBUTE: text("upstream-batch-1"),
        LEGACY_SOURCE_SENT_ATTRIBUTE: number(str(int((MAY_1_10H - 5 * DAY) * 1000))),
    }

    # When three distinct reports without event_id or timestamp arrive with those attributes
    sent = [pipeline.send({"sensor_id": 5, "count": n}, tagged) for n in (1, 2, 4)]
    pipeline.drain()

    # Then each counts as a report of its own (by its own message id), on the day SQS took it: 1 + 2 + 4
    assert len(set(sent)) == 3
    assert day_counts(ddb, tables.table) == {(5, "2024-05-01"): 7}


def test_a_producer_message_sqs_moved_to_the_dead_letter_queue_keeps_its_own_identity_through_a_redrive(
    ddb: Any, tables: Tables, engine_endpoint: str
) -> None:
    # Given a relay's report (its own attributes beside a bare source_message_id) that fails every
    # receive during an outage, so that SQS moves it to the dead-letter queue itself
    outage = {"on": True}
    pipeline = Pipeline(tables, engine_endpoint, rule=lambda op, kw: "throttle" if outage["on"] else None)
    relayed = {LEGACY_SOURCE_ID_ATTRIBUTE: text("upstream-batch-1"), "relay": text("edge-3")}
    original = pipeline.send({"sensor_id": 6, "count": 2}, relayed)
    pipeline.drain()
    [letter] = list_dead_letters(pipeline.sqs, pipeline.dlq)

    # When it is redriven after the outage
    outage["on"] = False
    pipeline.now += DAY
    pipeline.project_redrive()
    pipeline.drain()

    # Then its origin is its own message, never the relay's attribute: counted once, on its day
    assert (letter.source_message_id, letter.error) == (original, None)
    assert day_counts(ddb, tables.table) == {(6, "2024-05-01"): 2}


def stamp_as_an_earlier_version(pipeline: Pipeline) -> None:
    """What ``dlq stamp`` of an earlier version left on each letter SQS moved there itself: its body
    again, with its origin under the bare names, and nothing else."""
    got = pipeline.sqs.receive_message(
        QueueUrl=pipeline.dlq, MaxNumberOfMessages=10, AttributeNames=["All"], MessageAttributeNames=["All"]
    )["Messages"]
    for message in got:
        pipeline.sqs.send_message(
            QueueUrl=pipeline.dlq,
            MessageBody=message["Body"],
            MessageAttributes={
                LEGACY_SOURCE_ID_ATTRIBUTE: text(message["MessageId"]),
                LEGACY_SOURCE_SENT_ATTRIBUTE: number(message["Attributes"]["SentTimestamp"]),
            },
        )
        pipeline.sqs.delete_message(QueueUrl=pipeline.dlq, ReceiptHandle=message["ReceiptHandle"])


@pytest.mark.parametrize("how", REDRIVES)
def test_a_letter_an_earlier_version_stamped_counts_once_on_its_day_after_the_upgrade(
    ddb: Any, tables: Tables, engine_endpoint: str, how: str
) -> None:
    # Given a report without event_id or timestamp whose write committed but whose answer was lost,
    # that then failed every receive into the dead-letter queue, and was stamped there by an earlier
    # version (its origin under the bare names)
    pipeline, outage, original = answer_lost_into_the_dead_letter_queue(tables, engine_endpoint)
    stamp_as_an_earlier_version(pipeline)
    committed_during_outage = day_counts(ddb, tables.table)
    [letter] = list_dead_letters(pipeline.sqs, pipeline.dlq)  # read as an earlier version's letter

    # When, after the upgrade, it is redriven two days later
    outage.on = False
    pipeline.now += 2 * DAY
    REDRIVES[how](pipeline)
    pipeline.drain()

    # Then it was counted once, on the day it was first sent: the redelivery, a new message, was found
    # counted by its first message id, which the letter carried under the bare names
    assert (letter.source_message_id, letter.stamped) == (original, False)
    assert outage.committed and committed_during_outage == {(8, "2024-05-01"): 4}
    assert day_counts(ddb, tables.table) == {(8, "2024-05-01"): 4}


def test_a_rejection_an_earlier_version_kept_is_redriven_by_its_origin_under_both_names(
    ddb: Any, tables: Tables, engine_endpoint: str
) -> None:
    # Given the dead letter an earlier version wrote when it rejected a report of an unregistered
    # sensor sent at 20:00 UTC on May 1st: the reason, and the origin under the bare names
    pipeline = Pipeline(tables, engine_endpoint, unknown_sensors="reject")
    sent_ms = str(int((MAY_1_10H + 10 * 3600) * 1000))
    pipeline.sqs.send_message(
        QueueUrl=pipeline.dlq,
        MessageBody=json.dumps({"sensor_id": 9}),
        MessageAttributes={
            REASON_ATTRIBUTE: text("sensor 9 is not registered (UNKNOWN_SENSORS=reject)"),
            LEGACY_SOURCE_ID_ATTRIBUTE: text("first-message-id"),
            LEGACY_SOURCE_SENT_ATTRIBUTE: number(sent_ms),
        },
    )
    Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb).register(
        SensorProfile(sensor_id=9, name="roof", serial="SN-9", timezone="Asia/Tokyo")
    )

    # When this version lists it, and redrives it three days later
    [letter] = list_dead_letters(pipeline.sqs, pipeline.dlq)
    pipeline.now += 3 * DAY
    moved = pipeline.sqs.receive_message  # what the redrive sent, read back below through the pipeline
    pipeline.project_redrive()
    [back] = moved(QueueUrl=pipeline.queue, MessageAttributeNames=["All"], VisibilityTimeout=0)["Messages"]
    pipeline.drain()

    # Then it carries its origin under both names (the bare ones for a rollback), and counts once on its
    # local day
    # (its send time's day in Tokyo, not the redrive's)
    assert (letter.source_message_id, letter.source_sent_timestamp) == ("first-message-id", sent_ms)
    assert set(back["MessageAttributes"]) == {*ORIGIN_ATTRIBUTES, *LEGACY_ORIGIN_ATTRIBUTES}
    assert day_counts(ddb, tables.table) == {(9, "2024-05-02"): 1}
