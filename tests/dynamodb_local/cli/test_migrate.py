"""``sensor-digest migrate sequences``: the pair ordered mode's first release kept on a day item
(``AppliedSequence``, ``SequenceSource``), moved into its queue's own attribute (cli/migrate.py,
ops/sequences.py). That the migrated items still hold back what the first release applied, under
this release's ordered mode: tests/dynamodb_local/counting/test_ordered.py.

Engine: DynamoDB Local (the session's engine); the day items are put as the first release wrote them.
"""

from __future__ import annotations

import json
from typing import Any

from sensor_digest.store import schema
from sensor_digest_tools.ops.sequences import migrate_sequences
from tests.support.cli import invoke
from tests.support.tables import Tables, scan_all

DAY = "2024-05-01"
QUEUE = "arn:aws:sqs:us-east-1:000000000000:SensorDigest-IngestQueue-A.fifo"
OTHER = "arn:aws:sqs:us-east-1:000000000000:SensorDigest-IngestQueue-B.fifo"


def first_release_day(sensor: int, applied: int, source: str = QUEUE, **own: int) -> schema.Item:
    """A day item as ordered mode's first release left it (its pair), with the per-queue numbers
    ``own`` (queue ARN -> number) a later release wrote beside it."""
    item = schema.day_item(sensor, DAY, 3)
    item[schema.APPLIED_SEQUENCE] = {"S": schema.sequence_text(applied)}
    item[schema.SEQUENCE_SOURCE] = {"S": source}
    for queue, number in own.items():
        item[schema.applied_sequence_name(queue)] = {"S": schema.sequence_text(number)}
    return item


def sequences_of(ddb: Any, tables: Tables) -> dict[int, dict[str, str]]:
    """Each day item's sequence attributes (pair and per-queue), by sensor."""
    return {
        schema.sensor_of_item(item): {k: v["S"].lstrip("0") or "0" for k, v in item.items() if "Sequence" in k}
        for item in scan_all(ddb, tables.table)
    }


def test_the_pair_moves_into_its_queues_attribute_unless_that_holds_as_much_and_a_second_run_finds_none(
    ddb: Any, tables: Tables
) -> None:
    # Given day items of the first release: 1 with its pair alone; 2 whose queue's attribute (written
    # since) holds less; 3 whose queue's attribute holds more; 4 with another queue's attribute beside
    # the pair; and 5, a day item of another mode
    for item in (
        first_release_day(1, 500),
        first_release_day(2, 500, **{QUEUE: 400}),
        first_release_day(3, 500, **{QUEUE: 600}),
        first_release_day(4, 500, **{OTHER: 10**30}),
        schema.day_item(5, DAY, 1),
    ):
        ddb.put_item(TableName=tables.table, Item=item)

    # When the migration runs, from the command line, and again
    first = invoke("migrate", "sequences", "--table", tables.table, "--json")
    again = invoke("migrate", "sequences", "--table", tables.table)

    # Then each queue's attribute holds the higher number, no pair is left, and nothing else changed
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout) == {"found": 4, "raised": 3, "removed": 1, "failed": []}
    a, b = schema.applied_sequence_name(QUEUE), schema.applied_sequence_name(OTHER)
    assert sequences_of(ddb, tables) == {
        1: {a: "500"},
        2: {a: "500"},
        3: {a: "600"},
        4: {a: "500", b: str(10**30)},
        5: {},
    }
    assert {schema.sensor_of_item(i): schema.number_of(i, schema.DATA_COUNT) for i in scan_all(ddb, tables.table)} == {
        1: 3,
        2: 3,
        3: 3,
        4: 3,
        5: 1,
    }
    assert again.exit_code == 0 and "0 day item(s) with the first release's pair" in again.stdout


class RaisedMeanwhile:
    """DynamoDB, where a counter raises sensor 1's queue attribute past the pair just before the
    migration's first write of it."""

    def __init__(self, inner: Any, table: str, number: int) -> None:
        self._inner, self._table, self._number = inner, table, number
        self.writes = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def update_item(self, **kwargs: Any) -> Any:
        self.writes += 1
        if self.writes == 1:
            self._inner.update_item(
                TableName=self._table,
                Key=schema.day_key(1, DAY),
                UpdateExpression="SET #a = :n ADD DataCount :one",
                ExpressionAttributeNames={"#a": schema.applied_sequence_name(QUEUE)},
                ExpressionAttributeValues={":n": {"S": schema.sequence_text(self._number)}, ":one": {"N": "1"}},
            )
        return self._inner.update_item(**kwargs)


def test_a_number_a_counter_raised_meanwhile_is_never_lowered(ddb: Any, tables: Tables) -> None:
    # Given sensor 1's day of the first release (pair 500), whose queue then applies 700 between the
    # migration's read and its write
    ddb.put_item(TableName=tables.table, Item=first_release_day(1, 500))
    client = RaisedMeanwhile(ddb, tables.table, 700)

    # When the migration runs
    done = migrate_sequences(client, tables.table)

    # Then its first write was refused, the item read from the refusal, and only the pair removed
    assert (done.found, done.raised, done.removed, done.failed, client.writes) == (1, 0, 1, [], 2)
    assert sequences_of(ddb, tables) == {1: {schema.applied_sequence_name(QUEUE): "700"}}


def test_a_pair_not_as_the_first_release_wrote_it_is_named_and_left(ddb: Any, tables: Tables) -> None:
    # Given a pair written by hand: no queue, and a number that is no sequence number
    broken = first_release_day(1, 500)
    del broken[schema.SEQUENCE_SOURCE]
    odd = first_release_day(2, 500)
    odd[schema.APPLIED_SEQUENCE] = {"S": "12"}
    for item in (broken, odd, first_release_day(3, 500)):
        ddb.put_item(TableName=tables.table, Item=item)

    # When the migration runs
    result = invoke("migrate", "sequences", "--table", tables.table)

    # Then the good one is migrated, the two are named (exit code 1) and left as they were
    assert result.exit_code == 1
    assert "1 moved into their queue's attribute" in result.stdout
    assert result.stderr.count("are not the pair ordered mode's first release wrote") == 2
    assert sequences_of(ddb, tables)[1] == {schema.APPLIED_SEQUENCE: "500"}
    assert sequences_of(ddb, tables)[2] == {schema.APPLIED_SEQUENCE: "12", schema.SEQUENCE_SOURCE: QUEUE}
    assert sequences_of(ddb, tables)[3] == {schema.applied_sequence_name(QUEUE): "500"}


def test_a_number_past_128_bits_or_a_queue_attribute_of_another_shape_is_named_and_left(
    ddb: Any, tables: Tables
) -> None:
    # Given a pair whose number no SQS sequence number can be (39 nines, past 2**128 - 1); a pair
    # whose queue's own attribute was written by hand as no sequence number; and a good one
    past = first_release_day(1, 500)
    past[schema.APPLIED_SEQUENCE] = {"S": "9" * 39}
    odd_own = first_release_day(2, 500)
    odd_own[schema.applied_sequence_name(QUEUE)] = {"S": "zzz"}
    for item in (past, odd_own, first_release_day(3, 500)):
        ddb.put_item(TableName=tables.table, Item=item)

    # When the migration runs
    result = invoke("migrate", "sequences", "--table", tables.table)

    # Then only the good one is migrated; the two are named and keep their pair (the real number
    # is not lost behind a hand-written attribute)
    assert result.exit_code == 1
    assert "1 moved into their queue's attribute" in result.stdout
    assert "9" * 39 in result.stderr and "zzz" in result.stderr
    assert sequences_of(ddb, tables)[1][schema.APPLIED_SEQUENCE] == "9" * 39
    assert sequences_of(ddb, tables)[2][schema.APPLIED_SEQUENCE] == "500"


def test_an_item_dynamodb_refuses_to_write_is_named_and_the_others_are_migrated(ddb: Any, tables: Tables) -> None:
    # Given a pair whose queue name is past DynamoDB's 64 KB attribute name, first in the scan's way
    huge = first_release_day(1, 500, source="arn:aws:sqs:us-east-1:000000000000:" + "q" * 70_000)
    for item in (huge, first_release_day(2, 500), first_release_day(3, 500)):
        ddb.put_item(TableName=tables.table, Item=item)

    # When the migration runs
    result = invoke("migrate", "sequences", "--table", tables.table)

    # Then the two others are migrated and the one DynamoDB refused is named, its pair kept
    assert result.exit_code == 1
    assert "2 moved into their queue's attribute" in result.stdout
    assert "SensorId '1'" in result.stderr and "left as is" in result.stderr, result.stderr
    assert schema.APPLIED_SEQUENCE in sequences_of(ddb, tables)[1]


def test_a_table_that_is_no_digest_table_is_refused_in_one_line(ddb: Any, tables: Tables) -> None:
    # Given a table keyed otherwise (the ledger)
    ddb.put_item(TableName=tables.ledger, Item={"pk": {"S": "x"}, schema.APPLIED_SEQUENCE: {"S": "1"}})

    # When the migration is pointed at it
    result = invoke("migrate", "sequences", "--table", tables.ledger)

    # Then it says so in one line and writes nothing
    assert result.exit_code == 1
    assert result.stderr.strip().count("\n") == 0 and "no digest table" in result.stderr, result.stderr
