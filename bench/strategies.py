"""The four strategies, all on the same DynamoDB Local and the same workload.

(a) the blog's flow: one update -> insert -> update per message, no ledger, one at a time;
(b) Powertools idempotency (its DynamoDB persistence layer) around that same per-message update;
(c) this project's ingest handler, exactly-once; (d) the same handler, at-least-once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo

from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer, IdempotencyConfig, idempotent_function
from botocore.exceptions import ClientError

from sensor_digest import ingest, layout
from sensor_digest.config import DeliveryMode, IngestSettings
from sensor_digest.messages import SensorMessage, read_pending
from sensor_digest_emulators.lambda_events import FakeContext, QueuedMessage, sqs_event, sqs_record
from sensor_digest_local.pipeline import lambda_handler

UTC = ZoneInfo("UTC")
UNUSED_DLQ = "https://sqs.us-east-1.amazonaws.com/000000000000/unused"
Strategy = Callable[[Any, dict[str, str], list[QueuedMessage], int], None]


def _parsed(message: QueuedMessage) -> SensorMessage:
    pending = read_pending(
        message_id=message.message_id, body=message.body, sent_timestamp=str(message.sent_timestamp_ms)
    )
    return pending.in_zone(UTC)


def blog_update(client: Any, table: str, parsed: SensorMessage) -> None:
    """update -> insert -> update, as the blog post does it, for one message."""
    key = layout.day_key(parsed.sensor_id, parsed.day)
    n = {":n": {"N": str(parsed.count)}}
    names = {"#count": layout.DATA_COUNT, "#pk": layout.SENSOR_ID}
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
            Item=layout.day_item(parsed.sensor_id, parsed.day, parsed.count),
            ConditionExpression="attribute_not_exists(#pk)",
            ExpressionAttributeNames={"#pk": layout.SENSOR_ID},
        )
        return
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
    client.update_item(
        TableName=table,
        Key=key,
        UpdateExpression="ADD #count :n",
        ExpressionAttributeNames={"#count": layout.DATA_COUNT},
        ExpressionAttributeValues=n,
    )


def blog(session: Any, tables: dict[str, str], deliveries: list[QueuedMessage], batch_size: int) -> None:
    client = session.client("dynamodb")
    for message in deliveries:
        blog_update(client, tables["table"], _parsed(message))


def powertools_idempotency(
    session: Any, tables: dict[str, str], deliveries: list[QueuedMessage], batch_size: int
) -> None:
    client = session.client("dynamodb")
    layer = DynamoDBPersistenceLayer(table_name=tables["idempotency"], boto3_client=client)
    config = IdempotencyConfig(event_key_jmespath="[sensor_id, event_id]", expires_after_seconds=29 * 86400)
    config.register_lambda_context(FakeContext())  # as the handler would; sets the in-progress expiry

    @idempotent_function(data_keyword_argument="message", config=config, persistence_store=layer)
    def count(message: dict[str, Any]) -> dict[str, bool]:
        original = QueuedMessage(
            body=message["body"], message_id=message["message_id"], sent_timestamp_ms=message["sent_timestamp_ms"]
        )
        blog_update(client, tables["table"], _parsed(original))
        return {"counted": True}

    for message in deliveries:
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


def _handler_strategy(mode: DeliveryMode) -> Strategy:
    def run(session: Any, tables: dict[str, str], deliveries: list[QueuedMessage], batch_size: int) -> None:
        settings = IngestSettings(
            table_name=tables["table"],
            ledger_table_name=tables["ledger"],
            dlq_url=UNUSED_DLQ,  # the workloads hold no poison
            timezone=UTC,
            delivery_mode=mode,
        )
        handler = lambda_handler(ingest.build_service(settings, session))
        queue = [sqs_record(m) for m in deliveries]
        while queue:
            batch, queue = queue[:batch_size], queue[batch_size:]
            response = handler({"Records": batch}, FakeContext())
            failed = {f["itemIdentifier"] for f in response["batchItemFailures"]}
            queue += [r for r in batch if r["messageId"] in failed]

    return run


STRATEGIES: dict[str, tuple[str, Strategy]] = {
    "a": ("(a) blog: per message, no ledger", blog),
    "b": ("(b) Powertools idempotency, per message", powertools_idempotency),
    "c": ("(c) SensorDigest exactly-once", _handler_strategy(DeliveryMode.EXACTLY_ONCE)),
    "d": ("(d) SensorDigest at-least-once", _handler_strategy(DeliveryMode.AT_LEAST_ONCE)),
}

__all__ = ["STRATEGIES", "sqs_event"]
