"""The four strategies, each a Lambda handler the benchmark runs as the event source would.

(a) the blog's flow: a handler that writes its batch one message at a time, one update -> insert
-> update per message, no ledger; (b) the exactly-once a user would otherwise build: Powertools'
``BatchProcessor`` with ``process_partial_response`` and a record handler under
``idempotent_function`` (its DynamoDB persistence layer, keyed on the report's ``sensor_id`` and
``event_id``, records kept as long as the stack keeps markers), around that same per-message update,
as Powertools' documentation composes them; (c) this project's ingest handler, exactly-once; (d) the
same handler, at-least-once; (e) the same handler in ordered mode on a FIFO queue
(``queueType=fifo``: batches of at most 10, a group per sensor, no ledger); (f) (c) without the
in-invocation retries; (g) (c) with the per-message ledger (``ledgerMode=per-message``, one marker per
message: the only ledger before the compact one). Every one gets the deployed batch size and
concurrency of its queue type.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from zoneinfo import ZoneInfo

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer, IdempotencyConfig, idempotent_function
from botocore.exceptions import ClientError

from bench.esm import Handler
from sensor_digest import ingest
from sensor_digest.config import DeliveryMode, IngestSettings, LedgerMode, QueueType
from sensor_digest.counting import Policies, RetryPolicy
from sensor_digest.messages import SensorMessage, read_pending
from sensor_digest.store import schema
from sensor_digest_cdk.shape import PipelineShape
from sensor_digest_tools.lambda_runtime.events import QueuedMessage
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


def readings_updates(client: Any, table: str, parsed: SensorMessage) -> None:
    """The readings' statistics of one message as a developer without this project writes them: per
    reading, an item per sensor-day and one per sensor-day-hour (``SensorId``, ``<day>#<name>`` and
    ``<day>T<HH>#<name>``), each with ``ADD`` of its count, sum (and the day's sum of squares), then
    the minimum and maximum each set by a conditional ``UpdateItem`` (DynamoDB has no min or max: a
    write refused because the stored value is already lower or higher is charged all the same)."""
    for name, value in parsed.readings:
        for sort_key, squares in ((f"{parsed.day}#{name}", True), (f"{parsed.day}T{parsed.hour}#{name}", False)):
            key = {schema.SENSOR_ID: {"N": str(parsed.sensor_id)}, schema.DATE: {"S": sort_key}}
            adds = "ADD #n :one, #s :v" + (", #q :q" if squares else "")
            values = {":one": {"N": "1"}, ":v": {"N": str(value)}}
            names = {"#n": "n", "#s": "s"}
            if squares:
                values[":q"], names["#q"] = {"N": str(value * value)}, "q"
            client.update_item(
                TableName=table,
                Key=key,
                UpdateExpression=adds,
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
            for bound, beyond in (("lo", ">"), ("hi", "<")):
                try:
                    client.update_item(
                        TableName=table,
                        Key=key,
                        UpdateExpression="SET #b = :v",
                        ConditionExpression=f"attribute_not_exists(#b) OR #b {beyond} :v",
                        ExpressionAttributeNames={"#b": bound},
                        ExpressionAttributeValues={":v": {"N": str(value)}},
                    )
                except ClientError as exc:
                    if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                        raise


def counted_their_way(client: Any, table: str, parsed: SensorMessage) -> None:
    """The blog's count, then the message's readings' statistics (``readings_updates``)."""
    blog_update(client, table, parsed)
    readings_updates(client, table, parsed)


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
    return _per_message(lambda message: counted_their_way(client, tables["table"], _parsed(message)))


def powertools_idempotency(session: Any, tables: dict[str, str], settings: PipelineShape) -> Handler:
    """Powertools' batch integration of idempotency, as its documentation shows it: records one at a
    time, each under ``idempotent_function``; a record that raises is listed in the batch response
    (a duplicate whose first copy is still in progress raises ``IdempotencyAlreadyInProgressError``).
    Each concurrent invocation gets a container of its own (processor, config, persistence layer), as
    on Lambda, where a container runs one invocation at a time."""
    client = session.client("dynamodb")

    def container() -> Handler:
        layer = DynamoDBPersistenceLayer(table_name=tables["idempotency"], boto3_client=client)
        config = IdempotencyConfig(
            event_key_jmespath="powertools_json(body).[sensor_id, event_id]",
            expires_after_seconds=settings.marker_ttl_seconds,
        )
        processor = BatchProcessor(event_type=EventType.SQS)

        @idempotent_function(data_keyword_argument="record", config=config, persistence_store=layer)  # type: ignore[untyped-decorator]
        def record_handler(record: SQSRecord) -> dict[str, bool]:
            message = QueuedMessage(
                body=record.body,
                message_id=record.message_id,
                sent_timestamp_ms=int(record.attributes.sent_timestamp),
            )
            counted_their_way(client, tables["table"], _parsed(message))
            return {"counted": True}

        def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
            config.register_lambda_context(context)
            response = process_partial_response(
                event=event, record_handler=record_handler, processor=processor, context=context
            )
            return dict(response)

        return lambda_handler

    return per_container(container)


def per_container(container: Callable[[], Handler]) -> Handler:
    """A handler whose every concurrent invocation runs in a container of its own, as on Lambda: one
    per invocation slot of the event source (``esm``'s thread ``invocation-<i>``), built by
    ``container`` on its first invocation and warm for every later one in that slot, in this feed or
    a later one (a warm-up's containers are the measured run's). What a container keeps between
    invocations (caches, what it learned) is its own, never another's."""
    containers: dict[str, Handler] = {}
    lock = threading.Lock()

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        slot = threading.current_thread().name
        with lock:
            if slot not in containers:
                containers[slot] = container()
            own = containers[slot]
        response: dict[str, Any] = own(event, context)
        return response

    return handler


def _ingest_handler(
    mode: DeliveryMode,
    queue_type: QueueType = QueueType.STANDARD,
    retry: RetryPolicy | None = None,
    ledger: LedgerMode | None = None,
    policies: Policies | None = None,
) -> StrategyFactory:
    def make(session: Any, tables: dict[str, str], settings: PipelineShape) -> Handler:
        # the deployed function's environment (PipelineShape.ingest_environment), this strategy's mode and queue
        shape = replace(settings, delivery_mode=mode.value, queue_type=queue_type.value)
        environment = shape.ingest_environment(
            table=tables["table"],
            ledger=tables["ledger"],
            dlq_url=UNUSED_DLQ,  # the workloads hold no poison
        )
        if ledger is not None:
            environment["LEDGER_MODE"] = ledger.value
        config = IngestSettings.from_env(environment)
        return per_container(
            lambda: lambda_handler(ingest.build_service(config, session, retry=retry, policies=policies))
        )

    return make


STRATEGIES: dict[str, tuple[str, StrategyFactory]] = {
    "a": ("(a) blog: per message, no ledger", blog),
    "b": ("(b) Powertools batch + idempotency", powertools_idempotency),
    "c": ("(c) SensorDigest exactly-once", _ingest_handler(DeliveryMode.EXACTLY_ONCE)),
    # the per-message ledger: one marker per message in the count's transaction (ledgerMode=per-message;
    # the only ledger before the compact one)
    "g": (
        "(g) SensorDigest exactly-once, per-message ledger",
        _ingest_handler(DeliveryMode.EXACTLY_ONCE, ledger=LedgerMode.PER_MESSAGE),
    ),
    "d": ("(d) SensorDigest at-least-once", _ingest_handler(DeliveryMode.AT_LEAST_ONCE)),
    "e": ("(e) SensorDigest FIFO, ordered", _ingest_handler(DeliveryMode.EXACTLY_ONCE, QueueType.FIFO)),
    # (c) whose contended transactions, once deferred to the end of the batch, are not retried in the
    # invocation but listed: what the retry policy spends against what it saves (--strategies c,f)
    "f": (
        "(f) (c) without in-invocation retries",
        _ingest_handler(DeliveryMode.EXACTLY_ONCE, retry=RetryPolicy(attempts=0)),
    ),
}
POLICY_STRATEGIES = {
    f"c-{name}": (
        f"(c) without {name.replace('_', ' ')}",
        _ingest_handler(DeliveryMode.EXACTLY_ONCE, policies=Policies(**{name: False})),
    )
    for name in Policies.__dataclass_fields__
}
"""(c) with one of the counter's savings switched off (``counting/policies.py``), for ``python -m bench.policies``."""
STRATEGIES.update(POLICY_STRATEGIES)
FIFO_STRATEGIES = "e"  # read a FIFO queue: the event source's FIFO settings and drain
