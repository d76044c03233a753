"""Testing SensorDigest's Lambda handlers with moto, the way you would in your own suite: ingest, the
summary, and the read API.

Copy this file. It needs the handlers on the path (the repository's `functions/` folder: run pytest
from a clone, which sets `pythonpath = ["functions", ...]`, or add `functions/` to PYTHONPATH) and
their own dependencies: `pip install -r requirements.txt "moto[dynamodb,sqs]" pytest` (moto and
pytest alone are not enough: the handlers import Powertools and read zones from `tzdata`). An
installed wheel (`pip install "<checkout>"`) holds the handlers too, as
`sensor_digest_cdk.functions.ingest.handler` and `sensor_digest_cdk.functions.summary.handler`
(`...api.handler` for the read API): import them from there instead.

Each test sets the environment the handlers read (the stack sets it on AWS), creates the tables and
the dead-letter queue inside `mock_aws`, and calls `handler(event, context)` with events in
Lambda's shape: SQS, DynamoDB Streams, and the read API's API Gateway HTTP API event (payload 2.0).

The handlers build their clients and settings on the first call and keep them while the
environment stays the same; a test that sets another `TABLE_NAME` (or starts a fresh `mock_aws`
with other credentials) gets new ones by itself. `handler.reset()` (in `ingest.handler` and
`summary.handler` and `api.handler`) forgets them outright, if you ever need it.

moto is a fast check, not DynamoDB: see docs/testing.md for moto's divergences before you trust it with a
claim about conditions or concurrency.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from api import handler as api_handler
from ingest import handler as ingest_handler
from summary import handler as summary_handler


class Context:
    """What Lambda passes as `context` (Powertools reads these attributes)."""

    function_name = "sensor-digest-ingest"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:sensor-digest-ingest"
    aws_request_id = "test-request"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A moto account with the two tables and the dead-letter queue, named afresh for each test."""
    names = {"table": f"Digest-{uuid.uuid4().hex[:6]}", "ledger": f"Ledger-{uuid.uuid4().hex[:6]}"}
    for variable in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS"):
        monkeypatch.delenv(variable, raising=False)  # everything to moto
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    with mock_aws():
        ddb, sqs = boto3.client("dynamodb"), boto3.client("sqs")
        ddb.create_table(  # the contract's tables: (SensorId N, Date S) with a stream, and (pk S)
            TableName=names["table"],
            AttributeDefinitions=[
                {"AttributeName": "SensorId", "AttributeType": "N"},
                {"AttributeName": "Date", "AttributeType": "S"},
            ],
            KeySchema=[{"AttributeName": "SensorId", "KeyType": "HASH"}, {"AttributeName": "Date", "KeyType": "RANGE"}],
            BillingMode="PAY_PER_REQUEST",
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        )
        ddb.create_table(
            TableName=names["ledger"],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
        names["dlq"] = sqs.create_queue(QueueName="dead-letters")["QueueUrl"]
        monkeypatch.setenv("TABLE_NAME", names["table"])
        monkeypatch.setenv("LEDGER_TABLE_NAME", names["ledger"])
        monkeypatch.setenv("DLQ_URL", names["dlq"])
        yield names


def sqs_event(*bodies: dict[str, Any]) -> dict[str, Any]:
    """An SQS event as Lambda delivers it (only what the handler reads)."""
    return {
        "Records": [
            {
                "messageId": str(uuid.uuid4()),
                "body": json.dumps(body),
                "attributes": {"SentTimestamp": "1714557600000", "ApproximateReceiveCount": "1"},
                "messageAttributes": {},
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:SensorDigestQueue",
            }
            for body in bodies
        ]
    }


def stream_record(sensor_id: int, day: str, count: int, sequence: int) -> dict[str, Any]:
    """A DynamoDB Streams record of a day item, as Lambda delivers it."""
    item = {"SensorId": {"N": str(sensor_id)}, "Date": {"S": day}, "DataCount": {"N": str(count)}}
    return {
        "eventID": str(sequence),
        "eventName": "INSERT",
        "eventSource": "aws:dynamodb",
        "dynamodb": {
            "Keys": {k: item[k] for k in ("SensorId", "Date")},
            "NewImage": item,
            "SequenceNumber": str(sequence),
            "StreamViewType": "NEW_AND_OLD_IMAGES",
        },
    }


def day_count(table: str, sensor_id: int, day: str) -> int | None:
    item = (
        boto3.client("dynamodb")
        .get_item(TableName=table, Key={"SensorId": {"N": str(sensor_id)}, "Date": {"S": day}})
        .get("Item")
    )
    return None if item is None else int(item["DataCount"]["N"])


def test_a_report_is_counted_once_however_often_it_is_delivered(aws: dict[str, str]) -> None:
    event = sqs_event({"sensor_id": 7, "timestamp": "2024-05-01T10:00:00Z", "count": 3, "event_id": "r-1"})

    first = ingest_handler.handler(event, Context())
    again = ingest_handler.handler(event, Context())  # SQS delivers at least once

    assert first == again == {"batchItemFailures": []}
    assert day_count(aws["table"], 7, "2024-05-01") == 3


def test_a_bad_report_goes_to_the_dead_letter_queue_with_its_reason(aws: dict[str, str]) -> None:
    response = ingest_handler.handler(sqs_event({"sensor_id": "seven"}), Context())

    assert response == {"batchItemFailures": []}  # kept, not retried
    [kept] = boto3.client("sqs").receive_message(QueueUrl=aws["dlq"], MessageAttributeNames=["All"])["Messages"]
    assert kept["MessageAttributes"]["error"]["StringValue"] == 'sensor_id must be an integer, got string "seven"'


def test_the_summary_keeps_every_day_of_a_month(aws: dict[str, str]) -> None:
    records = [stream_record(7, "2024-05-01", 3, 1), stream_record(7, "2024-05-02", 5, 2)]

    response = summary_handler.handler({"Records": records}, Context())

    assert response == {"batchItemFailures": []}
    item = boto3.client("dynamodb").get_item(
        TableName=aws["table"], Key={"SensorId": {"N": "7"}, "Date": {"S": "SUMMARY#2024-05"}}
    )["Item"]
    assert {day: int(v["N"]) for day, v in item["DailyCounts"]["M"].items()} == {"2024-05-01": 3, "2024-05-02": 5}


def api_event(path: str, **query: str) -> dict[str, Any]:
    """A GET as API Gateway's HTTP API hands it to the read API's function (payload 2.0), signed by an
    IAM principal (only what the handler reads, and the IAM authorizer's part)."""
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": "&".join(f"{name}={value}" for name, value in query.items()),
        "queryStringParameters": query or None,
        "headers": {"host": "abc123.execute-api.us-east-1.amazonaws.com"},
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "abc123",
            "authorizer": {"iam": {"accountId": "123456789012", "userArn": "arn:aws:iam::123456789012:user/grafana"}},
            "http": {
                "method": "GET",
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "192.0.2.1",
                "userAgent": "test",
            },
            "requestId": "test-request",
            "routeKey": "$default",
            "stage": "$default",
        },
        "isBase64Encoded": False,
    }


def test_the_read_api_answers_the_days_and_readings_ingest_counted(aws: dict[str, str]) -> None:
    reports = [
        {"sensor_id": 7, "timestamp": "2024-05-01T09:15:00Z", "event_id": "r-1", "readings": {"temperature": 20.5}},
        {"sensor_id": 7, "timestamp": "2024-05-01T09:45:00Z", "event_id": "r-2", "readings": {"temperature": 21}},
        {"sensor_id": 7, "timestamp": "2024-05-01T10:05:00Z", "event_id": "r-3", "readings": {"temperature": 22}},
        {"sensor_id": 7, "timestamp": "2024-05-02T08:00:00Z", "event_id": "r-4", "count": 2},
    ]
    assert ingest_handler.handler(sqs_event(*reports), Context()) == {"batchItemFailures": []}

    may = {"from": "2024-05-01", "to": "2024-05-31"}
    days = api_handler.handler(api_event("/sensors/7/days", **may), Context())
    readings = api_handler.handler(api_event("/sensors/7/readings", **may), Context())

    assert days["statusCode"] == readings["statusCode"] == 200
    assert days["headers"]["Content-Type"] == "application/json"
    assert json.loads(days["body"]) == {"sensor_id": 7, "days": {"2024-05-01": 3, "2024-05-02": 2}}
    assert json.loads(readings["body"]) == {  # the day of 2024-05-02 has no readings, so it is absent
        "sensor_id": 7,
        "days": {
            "2024-05-01": {
                "temperature": {
                    "count": 3,
                    "sum": 63.5,
                    "min": 20.5,
                    "max": 22,
                    "mean": 21.166666666666668,
                    "stddev": 0.6236095644623235,
                }
            }
        },
        "partial_days": [],
    }
