"""Where moto differs from DynamoDB, pinned (engine: moto), so that a moto upgrade that fixes or
breaks them is noticed. Each has its DynamoDB Local counterpart, which is what the code relies on."""

from __future__ import annotations

from moto.core import DEFAULT_ACCOUNT_ID
from moto.dynamodb.models import dynamodb_backends

from sensor_digest.store import schema
from tests.support.moto_tier import MotoAws

OVERLAPPING = "SET #m = if_not_exists(#m, :empty), #m.#d = :v"


def overlapping_update(aws: MotoAws) -> None:
    aws.ddb.update_item(
        TableName=aws.table,
        Key=schema.summary_key(1, "2024-05"),
        UpdateExpression=OVERLAPPING,
        ExpressionAttributeNames={"#m": schema.DAILY_COUNTS, "#d": "2024-05-01"},
        ExpressionAttributeValues={":empty": {"M": {}}, ":v": {"N": "1"}},
    )


def test_moto_accepts_two_overlapping_paths_in_one_update_once_the_map_exists(moto_aws: MotoAws) -> None:
    # DynamoDB (and DynamoDB Local: tests/dynamodb_local/summary/test_service.py) rejects this expression,
    # which is why the summary takes three steps instead of this one request.
    moto_aws.ddb.put_item(TableName=moto_aws.table, Item=schema.summary_item(1, "2024-05", {}))

    overlapping_update(moto_aws)  # accepted by moto

    item = moto_aws.ddb.get_item(TableName=moto_aws.table, Key=schema.summary_key(1, "2024-05"))["Item"]
    assert schema.daily_counts_of_item(item) == {"2024-05-01": 1}


def test_moto_emits_a_stream_record_for_an_update_that_changes_nothing(moto_aws: MotoAws) -> None:
    # DynamoDB writes no stream record when an update leaves the item as it was (DynamoDB Local
    # agrees: tests/dynamodb_local/summary/test_service.py). moto's streams API does not answer this
    # botocore, so its own record list is read.
    moto_aws.ddb.put_item(TableName=moto_aws.table, Item=schema.day_item(2, "2024-05-01", 5))

    moto_aws.ddb.update_item(
        TableName=moto_aws.table,
        Key=schema.day_key(2, "2024-05-01"),
        UpdateExpression="SET #c = :same",
        ExpressionAttributeNames={"#c": schema.DATA_COUNT},
        ExpressionAttributeValues={":same": {"N": "5"}},
    )

    table = dynamodb_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].get_table(moto_aws.table)
    records = [record.to_json() for record in table.stream_shard.items]
    assert [r["eventName"] for r in records] == ["INSERT", "MODIFY"]
    assert records[1]["dynamodb"]["OldImage"] == records[1]["dynamodb"]["NewImage"]


def test_moto_numbers_fifo_messages_at_random_not_growing_within_a_group(moto_aws: MotoAws) -> None:
    # SQS gives a group's messages growing sequence numbers, which ordered mode (QUEUE_TYPE=fifo)
    # rests on; moto draws 20 random digits per message. So the FIFO pipeline runs on the
    # in-process broker (tests/unit/test_sqs_broker_fifo.py checks that numbers grow there), never on moto.
    url = moto_aws.sqs.create_queue(QueueName="pin.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    numbers = [
        int(
            moto_aws.sqs.send_message(
                QueueUrl=url, MessageBody=str(i), MessageGroupId="g", MessageDeduplicationId=str(i)
            )["SequenceNumber"]
        )
        for i in range(40)
    ]

    assert numbers != sorted(numbers)  # 40 random draws in order: about 1 in 10^47


def test_moto_keeps_a_number_past_dynamodbs_38_digits(moto_aws: MotoAws) -> None:
    # DynamoDB (and DynamoDB Local) refuse a number of more than 38 significant digits as invalid
    # (ValidationException); the counters rely on that refusal for a sum of squares that outgrows
    # them (tests/dynamodb_local/store/test_repairs.py), so that decision is tested there, not on moto.
    long = "1." + "1" * 40
    moto_aws.ddb.put_item(TableName=moto_aws.table, Item={**schema.day_key(3, "2024-05-01"), "X": {"N": long}})

    item = moto_aws.ddb.get_item(TableName=moto_aws.table, Key=schema.day_key(3, "2024-05-01"))["Item"]
    assert len(item["X"]["N"].replace(".", "")) > 38
