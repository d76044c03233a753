"""``sensor-digest send --reading`` and ``sensor-digest readings``: readings sent as the JSON numbers
typed, and their statistics read back exactly, per day and per hour (cli/send.py, cli/readings.py).

Engines: DynamoDB Local (the session's engine) behind the running local pipeline (``running``,
tests/dynamodb_local/cli/conftest.py), with moto's SQS server; a queue of the test's own for what
``send`` writes into a body."""

from __future__ import annotations

import json
import re
from decimal import Decimal, localcontext
from typing import Any

from sensor_digest.store import reads, schema
from sensor_digest_tools.local.pipeline import LocalPipeline
from sensor_digest_tools.ops.targets import save_local
from tests.support.cli import invoke, own_queues, wait_for

DAY = "2024-05-01"


def counted(running: LocalPipeline, sensor: int, day: str) -> int:
    ddb, table = running.target.dynamodb(), str(running.target.table)
    return dict(reads.sensor_days(ddb, table, sensor, day, day)).get(day, 0)


def sent(sensor: int, event_id: str, at: str, *readings: str) -> None:
    options = [x for reading in readings for x in ("--reading", reading)]
    result = invoke("send", "--sensor", str(sensor), "--timestamp", at, "--event-id", event_id, *options)
    assert result.exit_code == 0, result.output


def test_send_writes_each_reading_as_the_json_number_typed(running: LocalPipeline) -> None:
    sqs, queue, _ = own_queues(running)

    result = invoke(
        "send", "--sensor", "60", "--reading", "temperature=21.50", "--reading", "humidity=1E1", "--queue-url", queue
    )
    [message] = sqs.receive_message(QueueUrl=queue)["Messages"]

    # The body carries the text typed: a float would have written 21.5 and 10.0
    assert result.exit_code == 0, result.output
    assert '"readings": {"temperature": 21.50, "humidity": 1E1}' in message["Body"]
    assert json.loads(message["Body"])["sensor_id"] == 60


def test_readings_sent_are_read_back_exactly_per_day_and_per_hour(running: LocalPipeline) -> None:
    # Given three reports of sensor 61 on one day, over two hours (0.1 + 0.2 - 3.125 is not -2.825 in floats)
    save_local(running.target)
    sent(61, "r-1", f"{DAY}T09:10:00Z", "temperature=0.1", "humidity=45")
    sent(61, "r-2", f"{DAY}T09:50:00Z", "temperature=0.2")
    sent(61, "r-3", f"{DAY}T10:05:00Z", "temperature=-3.125")
    wait_for(lambda: counted(running, 61, DAY) == 3)

    # When the day's statistics are read, as JSON and as a table
    as_json = invoke("readings", "--sensor", "61", "--from", DAY, "--to", "2024-05-02", "--json")
    table = invoke("readings", "--sensor", "61", "--from", DAY, "--to", "2024-05-02")

    # Then count, sum, minimum and maximum are exact, mean and deviation the population's
    assert as_json.exit_code == 0, as_json.output
    answer = json.loads(as_json.stdout, parse_float=Decimal)
    assert answer["partial_days"] == [] and list(answer["days"]) == [DAY]
    temperature = answer["days"][DAY]["temperature"]
    values = [Decimal("0.1"), Decimal("0.2"), Decimal("-3.125")]
    assert {k: temperature[k] for k in ("count", "sum", "min", "max")} == {
        "count": 3,
        "sum": Decimal("-2.825"),
        "min": Decimal("-3.125"),
        "max": Decimal("0.2"),
    }
    with localcontext() as exact:
        exact.prec = 50
        mean = sum(values, Decimal(0)) / 3
        stddev = (sum(((v - mean) ** 2 for v in values), Decimal(0)) / 3).sqrt()
    assert abs(temperature["mean"] - mean) <= Decimal("1e-12") * abs(mean)
    assert abs(temperature["stddev"] - stddev) <= Decimal("1e-12") * stddev
    assert answer["days"][DAY]["humidity"]["sum"] == 45
    # And the table shows the exact figures, and the mean and deviation to 15 significant digits (the
    # page's rule: tests/unit/test_shown_numbers.py), a value alone as it was sent
    assert table.exit_code == 0, table.output
    assert re.search(r"│ 2024-05-01 │ humidity +│ +1 │ +45 │ +45 │ +45 │ +45 │ +0 │", table.stdout)
    assert re.search(
        r"│ +│ temperature │ +3 │ -2\.825 │ -3\.125 │ 0\.2 │ -0\.941666666666667 │ 1\.54438948743149 │", table.stdout
    )

    # When one day's hours are read
    hours = invoke("readings", "--sensor", "61", "--hourly", "--day", DAY, "--json")
    hours_table = invoke("readings", "--sensor", "61", "--hourly", "--day", DAY)

    # Then each hour holds its own reports' statistics, in the zone the day is counted in
    by_hour = json.loads(hours.stdout, parse_float=Decimal)
    assert (by_hour["complete"], by_hour["timezone"], sorted(by_hour["hours"])) == (True, "UTC", ["09", "10"])
    assert by_hour["hours"]["09"]["temperature"]["sum"] == Decimal("0.3")
    assert by_hour["hours"]["10"]["temperature"]["min"] == Decimal("-3.125")
    assert "by hour of its day in UTC (not registered: the digest zone, --timezone)" in hours_table.stdout
    assert re.search(r"│ 09:00 +│ humidity +│ +1 │ +45 │", hours_table.stdout)
    assert re.search(r"│ +│ temperature +│ +2 │ +0\.3 │ +0\.1 │ +0\.2 │ +0\.15 │", hours_table.stdout)
    assert re.search(r"│ 10:00 +│ temperature +│ +1 │ +-3\.125 │ +-3\.125 │ +-3\.125 │ +-3\.125 │", hours_table.stdout)


def test_a_day_counted_partly_before_readings_were_kept_is_marked_partial(running: LocalPipeline) -> None:
    # Given a day item of a release before readings (four reports, no ReadingsCover), then a report with one
    save_local(running.target)
    ddb, table = running.target.dynamodb(), str(running.target.table)
    ddb.put_item(TableName=table, Item=schema.day_item(62, DAY, 4, {"08": 4}))
    sent(62, "p-1", f"{DAY}T09:00:00Z", "t=7")
    wait_for(lambda: counted(running, 62, DAY) == 5)

    shown = invoke("readings", "--sensor", "62", "--from", DAY, "--to", DAY)
    as_json = invoke("readings", "--sensor", "62", "--from", DAY, "--to", DAY, "--json")
    hours = invoke("readings", "--sensor", "62", "--hourly", "--day", DAY, "--json")

    assert "2024-05-01 (partial)" in shown.stdout
    assert "partial: the statistics hold only the reports counted since readings were kept" in shown.stdout
    assert shown.stdout.rstrip().endswith(f"kept none): {DAY}")
    assert json.loads(as_json.stdout)["partial_days"] == [DAY]
    assert json.loads(hours.stdout)["complete"] is False


def test_a_sensor_without_readings_gets_a_note_and_exit_code_0(running: LocalPipeline) -> None:
    save_local(running.target)
    sent(63, "n-1", f"{DAY}T09:00:00Z")  # a report without readings
    wait_for(lambda: counted(running, 63, DAY) == 1)

    shown = invoke("readings", "--sensor", "63", "--from", DAY, "--to", DAY)
    as_json = invoke("readings", "--sensor", "63", "--from", DAY, "--to", DAY, "--json")
    hours = invoke("readings", "--sensor", "63", "--hourly", "--day", "2024-05-02")

    assert (shown.exit_code, as_json.exit_code, hours.exit_code) == (0, 0, 0)
    assert shown.stdout == "" and "sensor 63 has no readings from 2024-05-01 to 2024-05-01" in shown.stderr
    assert json.loads(as_json.stdout)["days"] == {}
    assert "sensor 63 has no readings on 2024-05-02" in hours.stderr


def test_readings_that_cannot_be_read_are_named_with_their_repair(running: LocalPipeline) -> None:
    save_local(running.target)
    ddb, table = running.target.dynamodb(), str(running.target.table)
    item: dict[str, Any] = {**schema.day_item(64, DAY, 1), schema.READINGS: {"S": "written by hand"}}
    ddb.put_item(TableName=table, Item=item)
    # and a day whose count is text, holding readings as ingest writes them
    readings = {"M": {"t": {"M": {"q": {"N": "4"}, "09": {"N": "2"}}}}}
    ddb.put_item(
        TableName=table,
        Item={**schema.day_key(65, DAY), schema.DATA_COUNT: {"S": "1"}, schema.READINGS: readings},
    )

    shown = invoke("readings", "--sensor", "64", "--from", DAY, "--to", DAY)
    hours = invoke("readings", "--sensor", "64", "--hourly", "--day", DAY)
    text_count = invoke("readings", "--sensor", "65", "--from", DAY, "--to", DAY)
    text_count_hours = invoke("readings", "--sensor", "65", "--hourly", "--day", DAY)

    for result in (shown, hours):
        assert result.exit_code == 1 and result.stdout == ""
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
        assert f"REMOVE {schema.READINGS}, {schema.READINGS_COVER}" in result.stderr
    for result in (text_count, text_count_hours):  # named as counts names it, never "no readings"
        assert result.exit_code == 1 and result.stdout == ""
        assert result.stderr.startswith("error: ") and schema.DATA_COUNT in result.stderr
