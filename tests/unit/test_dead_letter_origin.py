"""The origin attributes' names and who may read them: namespaced names SQS takes, read by ingest
alone, and the bare names of earlier versions read by the redrive only on the letters those versions
wrote. No engine: the parsers, and the in-process SQS broker for SQS's naming rule."""

from __future__ import annotations

from typing import Any

import pytest

from sensor_digest.dead_letter_format import (
    DEAD_LETTER_OVERHEAD_BYTES,
    LEGACY_ORIGIN_ATTRIBUTES,
    LEGACY_SOURCE_ID_ATTRIBUTE,
    LEGACY_SOURCE_SENT_ATTRIBUTE,
    NAMESPACE,
    ORIGIN_ATTRIBUTES,
    REASON_ATTRIBUTE,
    Origin,
    attribute_name_ok,
    dead_letter_attributes,
    written_by_earlier_version,
)
from sensor_digest_tools.aws.sqs_broker import LocalSqsBroker
from sensor_digest_tools.ops.dlq import DeadLetter

TEXT = "String"
NUMBER = "Number"


def attribute(value: str, kind: str = TEXT) -> dict[str, str]:
    return {"DataType": kind, "StringValue": value}


def test_the_origin_attributes_are_in_the_projects_namespace_under_names_sqs_takes() -> None:
    assert all(name.startswith(NAMESPACE) for name in ORIGIN_ATTRIBUTES)
    assert all(attribute_name_ok(name) for name in (*ORIGIN_ATTRIBUTES, REASON_ATTRIBUTE))
    attributes = dead_letter_attributes("why", Origin("m-1", "1714557600000"))
    assert set(attributes) == {REASON_ATTRIBUTE, *ORIGIN_ATTRIBUTES, *LEGACY_ORIGIN_ATTRIBUTES}
    # 1,024 for the reason, 128 + 15 for the origin under each of its two names, the names and types
    assert DEAD_LETTER_OVERHEAD_BYTES == 1449


def test_the_origin_is_written_under_the_bare_names_too_with_the_same_values() -> None:
    # The release before the namespace reads the bare names only (a rollback's step 3)
    attributes = Origin("m-1", "1714557600000").attributes()
    assert attributes[LEGACY_SOURCE_ID_ATTRIBUTE] == attributes[ORIGIN_ATTRIBUTES[0]]
    assert attributes[LEGACY_SOURCE_SENT_ATTRIBUTE] == attributes[ORIGIN_ATTRIBUTES[1]]
    # and this release reads the namespaced ones where both are present
    forged = {**attributes, LEGACY_SOURCE_ID_ATTRIBUTE: {"DataType": "String", "StringValue": "other"}}
    assert Origin.of_letter("new", "9", forged).message_id == "m-1"


@pytest.mark.parametrize(
    "name",
    ["", ".x", "x.", "a..b", "AWS.origin", "amazon.origin", "x" * 257, "with space", "naïve", "sensor-digest/id"],
)
def test_a_name_sqs_refuses_is_refused_by_the_rule_and_by_the_local_sqs(
    name: str, sqs: Any, broker: LocalSqsBroker
) -> None:
    queue = broker.create_queue("q")
    assert not attribute_name_ok(name)
    with pytest.raises(sqs.exceptions.ClientError, match="InvalidParameterValue"):
        sqs.send_message(QueueUrl=queue, MessageBody="{}", MessageAttributes={name: attribute("x")})


def test_ingest_reads_only_the_namespaced_names() -> None:
    bare = {LEGACY_SOURCE_ID_ATTRIBUTE: attribute("upstream"), LEGACY_SOURCE_SENT_ATTRIBUTE: attribute("1", NUMBER)}
    namespaced = {ORIGIN_ATTRIBUTES[0]: attribute("first"), ORIGIN_ATTRIBUTES[1]: attribute("2", NUMBER)}

    assert Origin.of("own", "9", bare) == Origin("own", "9")
    assert Origin.of("own", "9", {**bare, **namespaced}) == Origin("first", "2")


EARLIER_INGEST = {
    REASON_ATTRIBUTE: attribute("sensor 9 is not registered"),
    LEGACY_SOURCE_ID_ATTRIBUTE: attribute("first"),
    LEGACY_SOURCE_SENT_ATTRIBUTE: attribute("2", NUMBER),
}


@pytest.mark.parametrize(
    ("attributes", "earlier"),
    [
        (EARLIER_INGEST, True),  # ingest's rejection
        ({k: v for k, v in EARLIER_INGEST.items() if k != LEGACY_SOURCE_SENT_ATTRIBUTE}, True),  # before sent times
        ({k: v for k, v in EARLIER_INGEST.items() if k != REASON_ATTRIBUTE}, True),  # its dlq stamp
        ({LEGACY_SOURCE_ID_ATTRIBUTE: attribute("first")}, False),  # a relay's id alone
        ({**EARLIER_INGEST, "relay": attribute("edge-3")}, False),  # a producer's attribute beside them
        ({**EARLIER_INGEST, LEGACY_SOURCE_SENT_ATTRIBUTE: attribute("2")}, False),  # a send time it never typed so
        ({REASON_ATTRIBUTE: attribute("why")}, False),  # no origin at all
    ],
)
def test_the_bare_names_are_an_origin_only_on_what_an_earlier_version_wrote(
    attributes: dict[str, Any], earlier: bool
) -> None:
    assert written_by_earlier_version(attributes) is earlier
    origin = Origin.of_letter("own", "9", attributes)
    assert (origin.message_id == "first") is earlier


def test_the_redrive_reads_a_letter_of_an_earlier_version_and_sends_it_on_under_both_names() -> None:
    message = {"MessageId": "own", "Body": "{}", "ReceiptHandle": "r", "MessageAttributes": EARLIER_INGEST}
    letter = DeadLetter.from_message(message | {"Attributes": {"SentTimestamp": "9"}})

    assert (letter.source_message_id, letter.source_sent_timestamp, letter.stamped) == ("first", "2", False)
    assert set(letter.origin.attributes()) == {*ORIGIN_ATTRIBUTES, *LEGACY_ORIGIN_ATTRIBUTES}
    assert letter.origin.attributes()[ORIGIN_ATTRIBUTES[0]]["StringValue"] == "first"
