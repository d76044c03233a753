"""The page of ``sensor-digest up`` in a real browser: headless Chromium (Debian's ``chromium``) loads
``/`` from the local server, the page draws its heatmap and a sensor's months from the API, and the
rendered DOM is checked: the counts in their cells, and a hostile sensor name shown as text.

Engine: DynamoDB Local behind the API; browser: ``chromium --headless --dump-dom``. Without
``chromium`` this test fails and says how to install it (CI installs it: .ci/run).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from rich.console import Console

from sensor_digest import api
from sensor_digest.config import ApiSettings
from sensor_digest.registry import Registry, SensorProfile
from sensor_digest.silence.check import SilenceCheck
from sensor_digest.silence.rules import wording
from sensor_digest.store import schema
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.cli import render as cli_render
from sensor_digest_tools.local.api_server import LocalApi
from tests.support.browser import Dom, assert_drawn, render, served
from tests.support.tables import Tables

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
    with served(
        api.build_service(ApiSettings(table_name=tables.table, ledger_table_name=tables.ledger), session)
    ) as local:
        yield local


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


def test_the_page_opens_a_days_hours_with_its_counts_and_zone_and_says_a_silence_as_the_command_line_does(
    ddb: Any, tables: Tables, tmp_path: Path
) -> None:
    # Given, at 23:30 in Paris on 2024-05-03 (the silence check's clock): sensor 9 (a hostile name) of
    # Paris, threshold 1 hour, whose last reports were in hour 19 that day; sensor 10, registered
    # 2024-05-02 09:12 UTC and never reported since; and sensor 11, whose profile is from before
    # registration times were kept, never reported (thresholds of 6 hours)
    now = datetime(2024, 5, 3, 21, 30, tzinfo=UTC)
    registry = Registry(
        table_name=tables.table,
        ledger_table_name=tables.ledger,
        client=ddb,
        clock=lambda: datetime(2024, 5, 2, 9, 12, 30, tzinfo=UTC),
    )
    registry.register(SensorProfile(sensor_id=9, name=HOSTILE, serial="S-9", timezone="Europe/Paris", silence_hours=1))
    registry.register(SensorProfile(sensor_id=10, name="cellar", serial="S-10", silence_hours=6))
    ddb.put_item(TableName=tables.table, Item=SensorProfile(11, "attic", "S-11", silence_hours=6).item())
    hours = {"07": 2, "19": 3}
    ddb.put_item(TableName=tables.table, Item=schema.day_item(9, "2024-05-03", 5, hours))
    ddb.put_item(TableName=tables.table, Item=schema.summary_item(9, "2024-05", {"2024-05-03": 5}))
    check = SilenceCheck(
        table_name=tables.table, client=ddb, default_hours=None, default_zone=ZoneInfo("UTC"), clock=lambda: now
    )
    service = api.ApiService(table_name=tables.table, client=ddb, silence=check)
    with served(service) as local:
        # When Chromium opens the page with that day's hours open (as a click on its cell leaves the
        # URL) and sensor 9's months
        query = "from=2024-05-01&to=2024-05-03&hsensor=9&hday=2024-05-03&sensor=9&mfrom=2024-05&mto=2024-05"
        dom = Dom(render(f"{local.url}/?{query}", tmp_path / "profile"))

    # Then the day's 24 hours are drawn, each count written in its hour, under the sensor's zone
    assert_drawn(dom)
    cells = [e for e in dom.elements if e["tag"] == "td" and "data-hour" in e["attrs"]]
    assert [c["text"] for c in cells] == [str(hours.get(f"{h:02d}", 0)) for h in range(24)]
    assert [th["text"] for th in dom.find("th", **{"class": "zone"})] == ["Europe/Paris"]
    [line] = dom.find("p", id="hours-title-line")
    assert line["text"] == (
        "Sensor 9, 2024-05-03, hours of its day in Europe/Paris: 5 report(s), last in hour 19:00\u201320:00."
    )
    # And the months row's cells are labelled: a column head per day of the month, a label per cell
    assert month_heads(dom) == ["month", *(f"{d:02d}" for d in range(1, 32)), "total"]
    month_cells = [e for e in dom.elements if e["tag"] == "td" and e["attrs"].get("data-day", "").startswith("2024-05")]
    assert {c["attrs"]["aria-label"] for c in month_cells} >= {"2024-05-03: 5", "2024-05-31: 0"}
    # And each silent sensor is marked in the words of the command line, its figure from the end of
    # its last hour (20:00 + 3 h = 23:00, before 23:30), its name still text
    entries = [s.as_json() for s in check.run().silent]
    said = [wording(e) for e in entries]
    assert said == [
        "last report in hour 2024-05-03 19:00\u201320:00 Europe/Paris, silent 3 h, threshold 1 h",
        "never reported, registered 2024-05-02 09:12 UTC, silent 36 h, threshold 6 h",
        "never reported, registered before registration times were kept, threshold 6 h",
    ]
    assert [r["attrs"]["data-sensor"] for r in dom.find("tr") if r["attrs"].get("data-silent") == "1"] == [
        "9",
        "10",
        "11",
    ]
    assert [e["text"] for e in dom.find("span", **{"class": "silence"})] == [f" \u00b7 {w}" for w in said]
    cli = Console(file=io.StringIO(), width=400, markup=False)
    cli.print(cli_render.silent_sensors("silent", entries))
    assert [line.split("\u2502")[2].strip() for line in cli.file.getvalue().splitlines()[4:7]] == said
    assert dom.find("th", **{"class": "sensor-name"})[0]["text"] == f"9 \u00b7 {HOSTILE}"
    assert dom.find("img") == []


def month_heads(dom: Dom) -> list[str]:
    """The head cells of the months table (``#months``), before its first month's row."""
    start = next(i for i, e in enumerate(dom.elements) if e["tag"] == "table" and e["attrs"].get("id") == "months")
    first = next(i for i, e in enumerate(dom.elements) if "data-month" in e["attrs"])
    return [e["text"] for e in dom.elements[start:first] if e["tag"] == "th"]


def test_the_page_says_a_days_hours_hold_only_some_of_its_reports_as_the_api_does(
    ddb: Any, tables: Tables, server: LocalApi, tmp_path: Path
) -> None:
    # Given sensor 7's day whose hours hold 152 of its 173 reports (the rest counted by a release that
    # kept no hours: a rollback)
    ddb.put_item(TableName=tables.table, Item=schema.day_item(7, "2024-05-02", 173, {"09": 150, "10": 2}))

    # When Chromium opens the page with that day's hours open
    query = "from=2024-05-01&to=2024-05-03&hsensor=7&hday=2024-05-02"
    dom = Dom(render(f"{server.url}/?{query}", tmp_path / "profile"))

    # Then the hours are drawn, and the line under them says they are not the whole day
    assert_drawn(dom)
    [line] = dom.find("p", id="hours-title-line")
    assert line["text"] == (
        "Sensor 7, 2024-05-02, hours of its day in UTC: 152 report(s), last in hour 10:00\u201311:00."
        " The hours hold 152 of the day's 173 report(s): some were counted before hours were kept."
    )
