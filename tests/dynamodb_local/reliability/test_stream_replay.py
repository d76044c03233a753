"""Scenario 3: the summary under duplicated, reordered and replayed stream batches equals a
recomputation from the day items (DynamoDB Local, real stream records; hypothesis picks the schedule)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sensor_digest.stream_filter import matches_filter
from sensor_digest_tools.aws.stream_reader import StreamReader
from sensor_digest_tools.lambda_runtime.events import FakeContext, stream_event
from tests.support.tables import Tables, by_sensor, day_counts, scan_all, summaries


def test_any_schedule_of_stream_batches_converges_to_the_day_items(
    ddb: Any, tables: Tables, engine_endpoint: str, summary_handler: Any
) -> None:
    # Given day items that moved through several values (each write is a stream record)
    for step in range(1, 6):
        for sensor in range(4):
            for day in ("2024-05-01", "2024-05-02", "2024-05-03"):
                ddb.update_item(
                    TableName=tables.table,
                    Key={"SensorId": {"N": str(sensor)}, "Date": {"S": day}},
                    UpdateExpression="ADD DataCount :n",
                    ExpressionAttributeValues={":n": {"N": str(step + sensor)}},
                )
    records = [r for r in StreamReader(engine_endpoint, tables.table).poll() if matches_filter(r)]
    arn = "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/x"
    expected = by_sensor(day_counts(ddb, tables.table))

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        schedule=st.lists(st.lists(st.integers(0, len(records) - 1), min_size=1, max_size=30), min_size=1, max_size=12),
        tail=st.permutations(range(len(records))),
    )
    def replay(schedule: list[list[int]], tail: list[int]) -> None:
        for item in scan_all(ddb, tables.table):  # a fresh summary for each schedule
            if item["Date"]["S"].startswith("SUMMARY#"):
                ddb.delete_item(TableName=tables.table, Key={"SensorId": item["SensorId"], "Date": item["Date"]})
        # When arbitrary batches (duplicates, any order) are handled, then every record once more in any order
        for batch in [*schedule, list(tail)]:
            response = summary_handler(stream_event([records[i] for i in batch], arn), FakeContext())
            assert response == {"batchItemFailures": []}
            current = summaries(ddb, tables.table)
            # no element ever exceeds its day item: nothing invented
            assert all(n <= expected[s][d] for s, days in current.items() for d, n in days.items())
        # Then the summaries equal a recomputation from the day items
        assert summaries(ddb, tables.table) == expected

    replay()
