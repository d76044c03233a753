"""The page's readings in a real browser: headless Chromium (Debian's ``chromium``) loads ``/`` from the
local server, and the rendered DOM is checked: a sensor's chosen reading drawn day by day (its mean
inside its min-max band, as the API answered them), the selector of the names the range holds, a day's
hours with the reading's mean, min and max per hour, a reading name written by hand that is markup
shown as text, and a day whose readings were written by hand in a shape no writer leaves named with
the API's error and repair (an error that holds markup shown as text).

Engine: DynamoDB Local behind the API, the statistics written by the ingest's own counting; browser:
``chromium --headless --dump-dom``. Without ``chromium`` this test fails and says how to install it.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sensor_digest import api
from sensor_digest.config import ApiSettings
from sensor_digest.registry import Registry, SensorProfile
from sensor_digest.store import schema
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.local.api_server import LocalApi
from tests.support.browser import Dom, assert_drawn, render, served
from tests.support.counting import ingest
from tests.support.tables import Tables

HOSTILE = '<img src=x onerror="document.body.dataset.pwned=1">'
REPORTS = [  # (day, hour, readings): the numbers as a producer writes them
    ("2024-05-01", 9, '{"temperature": 20.5, "humidity": 40}'),
    ("2024-05-01", 9, '{"temperature": 21.25}'),
    ("2024-05-01", 10, '{"temperature": 18}'),
    ("2024-05-03", 14, '{"temperature": -2.5, "humidity": 55.5}'),
    ("2024-05-03", 15, '{"temperature": 1.5}'),
]


def reading_item(sensor: int, day: str, name: str, value: str) -> dict[str, Any]:
    """A day item of one report in hour 09 whose statistics hold one reading, written by hand under
    ``name`` in the layout ingest writes (docs/readings.md: an hour's one value, the day's squares)."""
    stats = {"09": {"N": value}, schema.READING_SQUARES: {"N": str(Decimal(value) ** 2)}}
    return {
        **schema.day_item(sensor, day, 1, {"09": 1}),
        schema.READINGS: {"M": {name: {"M": stats}}},
        schema.READINGS_COVER: {"N": "1"},
    }


DOCS = (Path(__file__).resolve().parents[3] / "docs" / "read-api-calling.md").read_text(encoding="utf-8")
DOCS_ADDRESS = re.compile(r'"\$SENSOR_DIGEST_API_URL(/\?[^"]+)"')


@pytest.fixture
def server(ddb: Any, tables: Tables, session: LocalSession) -> Iterator[LocalApi]:
    # Given sensor 7's reports with readings, counted by the ingest, and a day of sensor 8 whose
    # statistics were written by hand under a name that is markup
    Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb).register(
        SensorProfile(sensor_id=7, name="roof", serial="S-7")
    )
    bodies = [
        f'{{"sensor_id": 7, "timestamp": "{day}T{hour:02d}:30:00Z", "event_id": "e{i}", "readings": {readings}}}'
        for i, (day, hour, readings) in enumerate(REPORTS)
    ]
    ingest(ddb, tables, bodies)
    ddb.put_item(TableName=tables.table, Item=reading_item(8, "2024-05-02", HOSTILE, "3"))
    with served(
        api.build_service(ApiSettings(table_name=tables.table, ledger_table_name=tables.ledger), session)
    ) as local:
        yield local


def answer(server: LocalApi, path: str) -> Any:
    with urllib.request.urlopen(f"{server.url}{path}") as response:
        return json.load(response)


def marks(dom: Dom) -> list[dict[str, Any]]:
    """The chart's days: each one's day and statistics, as the page drew them from the API."""
    return [
        {k: e["attrs"][f"data-{k}"] for k in ("day", "mean", "min", "max", "count")}
        for e in dom.elements
        if e["tag"] == "g" and "data-day" in e["attrs"]
    ]


def test_the_page_draws_a_readings_days_and_its_hours_from_the_api(server: LocalApi, tmp_path: Path) -> None:
    # When Chromium opens the page on sensor 7's temperature over four days, with 2024-05-01's hours open
    query = "from=2024-05-01&to=2024-05-04&rsensor=7&reading=temperature&hsensor=7&hday=2024-05-01"
    dom = Dom(render(f"{server.url}/?{query}", tmp_path / "profile"))

    # Then each day with values is a mark, its mean, min and max the API's (2024-05-02 and -04 have none)
    assert_drawn(dom)
    answered = answer(server, "/sensors/7/readings?from=2024-05-01&to=2024-05-04")["days"]
    assert marks(dom) == [
        {"day": day, **{k: repr(answered[day]["temperature"][k]) for k in ("mean", "min", "max", "count")}}
        for day in ("2024-05-01", "2024-05-03")
    ]
    assert [m["max"] for m in marks(dom)] == ["21.25", "1.5"]
    titles = [e["text"] for e in dom.elements if e["tag"] == "title" and e["text"].startswith("2024-05")]
    assert titles[0] == (
        "2024-05-01, sensor 7 \u00b7 roof: mean 19.9166666666667, stddev 1.38944433337776, min 18, max 21.25 (3 values)"
    )
    # And the selector offers every name the range holds, the one shown selected
    options = dom.find("option")
    assert [o["text"] for o in options] == ["humidity", "temperature"]
    [line] = dom.find("p", id="readings-title-line")
    assert line["text"].startswith(
        "Sensor 7, temperature, 2024-05-01 to 2024-05-04: 2 day(s) with values, 5 value(s), from -2.5 to 21.25."
    )
    # And the day's hours hold the reading's mean, min and max in the hours that have values
    rows = {row["attrs"]["data-stat"]: row for row in dom.find("tr", **{"class": "reading-hours"})}
    assert sorted(rows) == ["max", "mean", "min"]
    cells = [e for e in dom.elements if e["tag"] == "td" and "reading" in e["attrs"].get("class", "")]
    by_stat = {stat: [c["text"] for c in cells[i * 24 : (i + 1) * 24]] for i, stat in enumerate(("mean", "min", "max"))}
    assert [by_stat[s][9] for s in ("mean", "min", "max")] == ["20.875", "20.5", "21.25"]
    assert [by_stat[s][10] for s in ("mean", "min", "max")] == ["18", "18", "18"]  # one value: as sent
    assert all(by_stat[s][h] == "" for s in by_stat for h in range(24) if h not in (9, 10))
    assert [c["attrs"]["data-hour"] for c in cells[:24]] == [f"{h:02d}" for h in range(24)]
    # And the counts of the hours are still the hours' (the readings' rows come under them)
    counts = [
        e["text"] for e in dom.elements if e["tag"] == "td" and "data-count" in e["attrs"] and "data-hour" in e["attrs"]
    ]
    assert counts[9:11] == ["2", "1"]


def test_another_reading_is_picked_from_the_address_and_a_name_written_by_hand_is_text(
    server: LocalApi, tmp_path: Path
) -> None:
    humidity = Dom(render(f"{server.url}/?from=2024-05-01&to=2024-05-04&rsensor=7&reading=humidity", tmp_path / "a"))
    hostile = Dom(
        render(f"{server.url}/?from=2024-05-01&to=2024-05-04&rsensor=8&hsensor=8&hday=2024-05-02", tmp_path / "b")
    )

    assert [m["day"] for m in marks(humidity)] == ["2024-05-01", "2024-05-03"]
    assert [m["mean"] for m in marks(humidity)] == ["40", "55.5"]
    # the name is an option's text, a mark's title and a row's head, never an element; its script never ran
    assert [o["text"] for o in hostile.find("option")] == [HOSTILE]
    assert [m["day"] for m in marks(hostile)] == ["2024-05-02"]
    assert [th["text"] for th in hostile.find("th") if th["text"].startswith(HOSTILE)] == [
        f"{HOSTILE} mean",
        f"{HOSTILE} min",
        f"{HOSTILE} max",
    ]
    assert hostile.find("img") == [] and "data-pwned" not in hostile.find("body")[0]["attrs"]
    assert f"Sensor 8, {HOSTILE}, 2024-05-01 to 2024-05-04" in hostile.find("p", id="readings-title-line")[0]["text"]


def test_the_docs_readings_example_opens_onto_its_data(
    ddb: Any, tables: Tables, session: LocalSession, tmp_path: Path
) -> None:
    # Given what the docs' example sends: sensor 7 (not registered), 2024-05-01 10:05, temperature=21.5
    [send] = re.findall(r"sensor-digest send (--sensor 7 .*--reading temperature=21\.5)\n", DOCS)
    assert "--timestamp 2024-05-01T10:05:00Z" in send
    ingest(ddb, tables, ['{"sensor_id": 7, "timestamp": "2024-05-01T10:05:00Z", "readings": {"temperature": 21.5}}'])
    with served(
        api.build_service(ApiSettings(table_name=tables.table, ledger_table_name=tables.ledger), session)
    ) as local:
        # When the page opens at the address the docs give for it
        [address] = [a for a in DOCS_ADDRESS.findall(DOCS) if "rsensor=" in a]
        dom = Dom(render(f"{local.url}{address}", tmp_path / "profile"))

    # Then it shows that day's temperature
    assert_drawn(dom)
    assert marks(dom) == [{"day": "2024-05-01", "mean": "21.5", "min": "21.5", "max": "21.5", "count": "1"}]


def test_a_reading_named_like_an_objects_own_property_is_shown_only_where_it_was_sent(
    ddb: Any, tables: Tables, session: LocalSession, tmp_path: Path
) -> None:
    # Given sensor 9's "constructor" (a name the rules accept, and a property every JavaScript object
    # inherits) in one hour of one day, and its temperature elsewhere
    ingest(
        ddb,
        tables,
        [
            '{"sensor_id": 9, "timestamp": "2024-05-01T09:30:00Z", "readings": {"temperature": 20}}',
            '{"sensor_id": 9, "timestamp": "2024-05-01T10:30:00Z", "readings": {"constructor": 5}}',
            '{"sensor_id": 9, "timestamp": "2024-05-03T09:30:00Z", "readings": {"temperature": 1}}',
        ],
    )
    with served(
        api.build_service(ApiSettings(table_name=tables.table, ledger_table_name=tables.ledger), session)
    ) as local:
        # When the page shows "constructor" over the range, with 2024-05-01's hours open
        query = "from=2024-05-01&to=2024-05-04&sensors=9&rsensor=9&reading=constructor&hsensor=9&hday=2024-05-01"
        dom = Dom(render(f"{local.url}/?{query}", tmp_path / "profile"))

    # Then the chart holds the one day that has it, and the hours' rows the one hour
    assert_drawn(dom)
    assert [o["text"] for o in dom.find("option")] == ["constructor", "temperature"]
    assert marks(dom) == [{"day": "2024-05-01", "mean": "5", "min": "5", "max": "5", "count": "1"}]
    [line] = dom.find("p", id="readings-title-line")
    assert line["text"].startswith("Sensor 9, constructor, 2024-05-01 to 2024-05-04: 1 day(s) with values, 1 value(s)")
    cells = [e for e in dom.elements if e["tag"] == "td" and "reading" in e["attrs"].get("class", "")]
    assert len(cells) == 3 * 24
    assert [c["text"] for c in cells[24:48]] == ["" if h != 10 else "5" for h in range(24)]  # the minimums


def bad_readings_item(sensor: int, day: str, hour: str) -> dict[str, Any]:
    """A day item of one report whose ``Readings`` hold ``t`` under ``hour``, written by hand: ingest
    writes only hours ``00``-``23``, so any other key is a shape no writer leaves."""
    stats = {hour: {"N": "3"}, schema.READING_SQUARES: {"N": "9"}}
    return {
        **schema.day_item(sensor, day, 1, {"09": 1}),
        schema.READINGS: {"M": {"t": {"M": stats}}},
        schema.READINGS_COVER: {"N": "1"},
    }


def test_a_day_whose_readings_cannot_be_read_is_named_with_its_repair_as_text(
    ddb: Any, tables: Tables, session: LocalSession, tmp_path: Path
) -> None:
    # Given sensor 401's t on 2024-06-02 and -04, counted by the ingest, and its 2024-06-03 written by
    # hand with an hour "24"; and sensor 402's 2024-06-03 with an hour key that is markup
    ingest(
        ddb,
        tables,
        [
            '{"sensor_id": 401, "timestamp": "2024-06-02T09:30:00Z", "readings": {"t": 20}}',
            '{"sensor_id": 401, "timestamp": "2024-06-04T09:30:00Z", "readings": {"t": 22}}',
        ],
    )
    ddb.put_item(TableName=tables.table, Item=bad_readings_item(401, "2024-06-03", "24"))
    ddb.put_item(TableName=tables.table, Item=bad_readings_item(402, "2024-06-03", HOSTILE))
    with served(
        api.build_service(ApiSettings(table_name=tables.table, ledger_table_name=tables.ledger), session)
    ) as local:
        # When Chromium opens each sensor's t over the range, with 2024-06-03's hours open
        query = "from=2024-06-01&to=2024-06-05&reading=t&hday=2024-06-03"
        bad = Dom(render(f"{local.url}/?sensors=401&rsensor=401&hsensor=401&{query}", tmp_path / "a"))
        hostile = Dom(render(f"{local.url}/?sensors=402&rsensor=402&hsensor=402&{query}", tmp_path / "b"))
        [named] = answer(local, "/sensors/401/readings?from=2024-06-01&to=2024-06-05")["malformed"]
        [named_hours] = answer(local, "/sensors/401/readings/hours?day=2024-06-03")["malformed"]
        [markup] = answer(local, "/sensors/402/readings?from=2024-06-01&to=2024-06-05")["malformed"]

    # Then the chart's line counts the good days and names the bad one with the API's error and repair
    assert (named["day"], "'24' is no hour" in named["error"]) == ("2024-06-03", True)
    assert_drawn(bad)
    [line] = bad.find("p", id="readings-title-line")
    assert line["text"].startswith("Sensor 401, t, 2024-06-01 to 2024-06-05: 2 day(s) with values, 2 value(s)")
    said = f"2024-06-03: cannot be read: {named['error']}. To mend it: {named['repair']}"
    assert f"1 day(s) cannot be read, left out of the chart: {said}." in line["text"]
    # And its slot in the chart is marked, not left empty
    slots = [e for e in bad.elements if e["tag"] == "g" and "data-day" in e["attrs"]]
    assert [(s["attrs"]["data-day"], s["attrs"].get("data-malformed")) for s in slots] == [
        ("2024-06-02", None),
        ("2024-06-03", "1"),
        ("2024-06-04", None),
    ]
    assert said in [e["text"] for e in bad.elements if e["tag"] == "title"]
    # And the day's hours say its readings cannot be read, with the error and repair of the hours' answer
    [hours_line] = bad.find("p", id="hours-readings-line")
    assert hours_line["text"] == (
        f"The readings of 2024-06-03 cannot be read: {named_hours['error']}. To mend it: {named_hours['repair']}."
    )
    # And an error that holds markup is text wherever the page shows it; its script never ran
    assert HOSTILE in markup["error"]
    [hostile_line] = hostile.find("p", id="readings-title-line")
    assert hostile_line["text"] == (
        "Sensor 402: no readings that can be read from 2024-06-01 to 2024-06-05. 1 day(s) cannot be read: "
        f"2024-06-03: cannot be read: {markup['error']}. To mend it: {markup['repair']}."
    )
    assert HOSTILE in hostile.find("p", id="hours-readings-line")[0]["text"]
    assert hostile.find("img") == [] and "data-pwned" not in hostile.find("body")[0]["attrs"]
