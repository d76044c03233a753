"""The four strategies, each a Lambda handler the benchmark runs as the event source would.

(a) the blog's flow: a handler that writes its batch one message at a time, one update -> insert
-> update per message, no ledger; (b) Powertools idempotency (its DynamoDB persistence layer)
around that same per-message update; (c) this project's ingest handler, exactly-once; (d) the
same handler, at-least-once; (e) the same handler in ordered mode on a FIFO queue
(``queueType=fifo``: batches of at most 10, a group per sensor, no ledger). Every one gets the
deployed batch size and concurrency of its queue type.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any
from zoneinfo import ZoneInfo

from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer, IdempotencyConfig, idempotent_function
from botocore.exceptions import ClientError

from bench.esm import Handler
from sensor_digest import ingest
from sensor_digest.config import DeliveryMode, IngestSettings, QueueType
from sensor_digest.messages import SensorMessage, read_pending
from sensor_digest.store import schema
from sensor_digest_cdk.shape import PipelineShape
from sensor_digest_tools.lambda_runtime.events import FakeContext, QueuedMessage
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler

UTC = ZoneInfo("UTC")
UNUSED_DLQ = "https://sqs.us-east-1.amazonaws.com/000000000000/unused"
StrategyFactory = Callable[[Any, dict[str, str], PipelineShape], Handler]


def _parsed(message: QueuedMessage) -> SensorMessage:
    pending = read_pending(
        message_id=message.message_id, body=message.body, sent_timestamp=str(message.sent_timestamp_ms)
    )
    return pending.in_zone(UTC)


def blog_update(client: Any, table: str, parsed: SensorMessage) -> None:
    """update -> insert -> update, as the blog post does it, for one message."""
    key = schema.day_key(parsed.sensor_id, parsed.day)
    n = {":n": {"N": str(parsed.count)}}
    names = {"#count": schema.DATA_COUNT, "#pk": schema.SENSOR_ID}
    try:
        client.update_item(
            TableName=table,
            Key=key,
            UpdateExpression="ADD #count :n",
            ConditionExpression="attribute_exists(#pk)",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=n,
        )
        return
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
    try:
        client.put_item(
            TableName=table,
            Item=schema.day_item(parsed.sensor_id, parsed.day, parsed.count),
            ConditionExpression="attribute_not_exists(#pk)",
            ExpressionAttributeNames={"#pk": schema.SENSOR_ID},
        )
        return
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
    client.update_item(
        TableName=table,
        Key=key,
        UpdateExpression="ADD #count :n",
        ExpressionAttributeNames={"#count": schema.DATA_COUNT},
        ExpressionAttributeValues=n,
    )


def _per_message(count: Callable[[QueuedMessage], None]) -> Handler:
    """A Lambda handler that counts its batch one message at a time, as the blog's function does,
    listing a message whose write failed."""

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        failures = []
        for record in event["Records"]:
            message = QueuedMessage(
                body=record["body"],
                message_id=record["messageId"],
                sent_timestamp_ms=int(record["attributes"]["SentTimestamp"]),
            )
            try:
                count(message)
            except ClientError:
                failures.append({"itemIdentifier": record["messageId"]})
        return {"batchItemFailures": failures}

    return handler


def blog(session: Any, tables: dict[str, str], settings: PipelineShape) -> Handler:
    client = session.client("dynamodb")
    return _per_message(lambda message: blog_update(client, tables["table"], _parsed(message)))


def powertools_idempotency(session: Any, tables: dict[str, str], settings: PipelineShape) -> Handler:
    client = session.client("dynamodb")
    layer = DynamoDBPersistenceLayer(table_name=tables["idempotency"], boto3_client=client)
    config = IdempotencyConfig(event_key_jmespath="[sensor_id, event_id]", expires_after_seconds=29 * 86400)
    config.register_lambda_context(FakeContext(timeout_ms=settings.ingest_timeout_seconds * 1000))

    @idempotent_function(data_keyword_argument="message", config=config, persistence_store=layer)
    def count(message: dict[str, Any]) -> dict[str, bool]:
        original = QueuedMessage(
            body=message["body"], message_id=message["message_id"], sent_timestamp_ms=message["sent_timestamp_ms"]
        )
        blog_update(client, tables["table"], _parsed(original))
        return {"counted": True}

    def one(message: QueuedMessage) -> None:
        parsed = _parsed(message)
        count(
            message={
                "body": message.body,
                "message_id": message.message_id,
                "sent_timestamp_ms": message.sent_timestamp_ms,
                "sensor_id": parsed.sensor_id,
                "event_id": parsed.event_id,
            }
        )

    return _per_message(one)


def _ingest_handler(mode: DeliveryMode, queue_type: QueueType = QueueType.STANDARD) -> StrategyFactory:
    def make(session: Any, tables: dict[str, str], settings: PipelineShape) -> Handler:
        # the deployed function's environment (PipelineShape.ingest_environment), this strategy's mode and queue
        shape = replace(settings, delivery_mode=mode.value, queue_type=queue_type.value)
        environment = shape.ingest_environment(
            table=tables["table"],
            ledger=tables["ledger"],
            dlq_url=UNUSED_DLQ,  # the workloads hold no poison
        )
        return lambda_handler(ingest.build_service(IngestSettings.from_env(environment), session))

    return make


STRATEGIES: dict[str, tuple[str, StrategyFactory]] = {
    "a": ("(a) blog: per message, no ledger", blog),
    "b": ("(b) Powertools idempotency, per message", powertools_idempotency),
    "c": ("(c) SensorDigest exactly-once", _ingest_handler(DeliveryMode.EXACTLY_ONCE)),
    "d": ("(d) SensorDigest at-least-once", _ingest_handler(DeliveryMode.AT_LEAST_ONCE)),
    "e": ("(e) SensorDigest FIFO, ordered", _ingest_handler(DeliveryMode.EXACTLY_ONCE, QueueType.FIFO)),
}
FIFO_STRATEGIES = "e"  # read a FIFO queue: the event source's FIFO settings and drain
