"""The page of ``sensor-digest up`` in a real browser: headless Chromium (Debian's ``chromium``) loads
``/`` from the local server, the page draws its heatmap and a sensor's months from the API, and the
rendered DOM is checked: the counts in their cells, and a hostile sensor name shown as text.

Engine: DynamoDB Local behind the API; browser: ``chromium --headless --dump-dom``. Without
``chromium`` this test fails and says how to install it (CI installs it: .ci/run).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sensor_digest import api
from sensor_digest.config import ApiSettings
from sensor_digest.registry import Registry, SensorProfile
from sensor_digest.store import schema
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from sensor_digest_tools.local.api_server import LocalApi
from tests.support.browser import Dom, render
from tests.support.tables import Tables

pytestmark = pytest.mark.dynamodb_local

HOSTILE = '<img src=x onerror="document.body.dataset.pwned=1">'


@pytest.fixture
def server(ddb: Any, tables: Tables, session: LocalSession) -> Iterator[LocalApi]:
    # Given two registered sensors, one with a hostile name, and their counts
    registry = Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb)
    registry.register(SensorProfile(sensor_id=7, name="roof", serial="S-7"))
    registry.register(SensorProfile(sensor_id=8, name=HOSTILE, serial="S-8"))
    for sensor, day, count in ((7, "2024-05-01", 3), (7, "2024-05-03", 12), (8, "2024-05-02", 1)):
        ddb.put_item(TableName=tables.table, Item=schema.day_item(sensor, day, count))
    ddb.put_item(TableName=tables.table, Item=schema.summary_item(7, "2024-05", {"2024-05-01": 3, "2024-05-03": 12}))
    local = LocalApi(lambda_handler(api.build_service(ApiSettings(table_name=tables.table), session)))
    local.start()
    yield local
    local.stop()


def test_the_page_draws_the_heatmap_and_the_months_from_the_api_with_names_as_text(
    server: LocalApi, tmp_path: Path
) -> None:
    # When Chromium opens the page for three days of May and sensor 7's months
    query = "from=2024-05-01&to=2024-05-03&sensors=&sensor=7&mfrom=2024-04&mto=2024-06"
    dom = Dom(render(f"{server.url}/?{query}", tmp_path / "profile"))

    # Then it is drawn, a row a registered sensor, a cell a day, each count where the API put it
    body = dom.find("body")[0]["attrs"]
    assert body.get("data-state") == "ready", dom.find("p", id="status")
    rows = {row["attrs"]["data-sensor"] for row in dom.find("tr") if "data-sensor" in row["attrs"]}
    assert rows == {"7", "8"}
    counted = sorted(
        (cell["attrs"]["data-day"], cell["attrs"]["data-count"])
        for cell in dom.elements
        if cell["tag"] == "td" and "data-day" in cell["attrs"] and cell["attrs"]["data-count"] != "0"
    )
    heatmap = [("2024-05-01", "3"), ("2024-05-02", "1"), ("2024-05-03", "12")]
    months = [("2024-05-01", "3"), ("2024-05-03", "12")]
    assert counted == sorted(heatmap + months)
    assert [row["attrs"]["data-month"] for row in dom.find("tr") if "data-month" in row["attrs"]] == ["2024-05"]
    # And the hostile name is text in its row's label, never an element, and its script never ran
    labels = [e["text"] for e in dom.find("th", **{"class": "sensor-name"})]
    assert labels == ["7 · roof", f"8 · {HOSTILE}"]
    assert dom.find("img") == [] and "data-pwned" not in body


def test_the_page_shows_the_apis_error_for_a_bad_range(server: LocalApi, tmp_path: Path) -> None:
    dom = Dom(render(f"{server.url}/?from=2024-05-03&to=2024-05-01", tmp_path / "profile"))

    assert dom.find("body")[0]["attrs"].get("data-state") == "error"
    assert dom.find("p", id="status")[0]["text"] == "Error: from 2024-05-03 is after to 2024-05-01"


def test_the_page_opens_a_days_hours_and_marks_a_silent_sensor_with_its_last_hour_as_text(
    ddb: Any, tables: Tables, session: LocalSession, tmp_path: Path
) -> None:
    # Given sensor 9 (a hostile name), registered with a silence threshold of 1 hour, whose last
    # reports were in hour 09 of 2024-05-03 (long ago: it is silent now)
    registry = Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb)
    registry.register(SensorProfile(sensor_id=9, name=HOSTILE, serial="S-9", silence_hours=1))
    hours = {"07": 2, "09": 3}
    ddb.put_item(TableName=tables.table, Item=schema.day_item(9, "2024-05-03", 5, hours))
    local = LocalApi(lambda_handler(api.build_service(ApiSettings(table_name=tables.table), session)))
    local.start()
    try:
        # When Chromium opens the page with that day's hours open (as a click on its cell leaves the URL)
        query = "from=2024-05-01&to=2024-05-03&hsensor=9&hday=2024-05-03"
        dom = Dom(render(f"{local.url}/?{query}", tmp_path / "profile"))
    finally:
        local.stop()

    # Then the day's 24 hours are drawn, each count in its hour
    assert dom.find("body")[0]["attrs"].get("data-state") == "ready", dom.find("p", id="status")
    cells = [e for e in dom.elements if e["tag"] == "td" and "data-hour" in e["attrs"]]
    assert len(cells) == 24
    counted = {c["attrs"]["data-hour"]: int(c["attrs"]["data-count"]) for c in cells}
    assert {hour: n for hour, n in counted.items() if n} == hours
    # And the sensor's row is marked silent, since the end of its last hour, its name still text
    [row] = [r for r in dom.find("tr") if r["attrs"].get("data-silent") == "1"]
    assert row["attrs"]["data-sensor"] == "9"
    [label] = dom.find("th", **{"class": "sensor-name"})
    [silence] = dom.find("span", **{"class": "silence"})
    assert label["text"] == f"9 · {HOSTILE}"
    assert silence["text"].startswith(" · silent since 2024-05-03T09:00 (")
    assert dom.find("img") == []
