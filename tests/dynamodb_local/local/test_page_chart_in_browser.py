"""The page's readings chart as a person reads it, in a real browser: headless Chromium (Debian's
``chromium``) lays the page out 1280 pixels wide, and the labels it drew are read back with where they
are drawn (``tests/support/browser.py``'s ``evaluate``): the value axis labelled at round steps, a
negative value with its sign and a billion with every digit, inside the chart (not cut off at its left);
dates along the day axis; the reading's name on its axis; two sensors in one chart, each named in the
legend; the chart as wide as the page. And a page opened without a range, on a history that holds no
report in the last 30 days, opens on the 30 days to the latest reports and says so; a range chosen
stays, and the button it offers goes there. And the page shows a mean by the command line's rule
(``tests/support/shown_numbers.py``'s cases). One browser start for all of it.

Engine: DynamoDB Local behind the API, the statistics written by the ingest's own counting.
"""

from __future__ import annotations

import json
import re
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
from tests.support.browser import evaluate
from tests.support.counting import ingest
from tests.support.shown_numbers import CASES
from tests.support.tables import Tables

# two cities' temperatures over ten days of an imported history, long before the last 30 days
CITIES = {21: "Oslo", 22: "Lisbon"}
DAYS = [f"2023-03-{d:02d}" for d in range(1, 11)]
TEMPERATURES = {21: ("-20.833333", "-3.5"), 22: ("11.25", "19.75")}  # each day's two values
EXTREMES = ("-999999999.999999", "999999999.999999")  # sensor 23's, on 2023-03-05

DRAWN_LABELS = """
(() => {
  const chart = document.querySelector("#readings-chart svg");
  const box = chart.getBoundingClientRect();
  const drawn = (e) => {
    const r = e.getBoundingClientRect();
    return { text: e.textContent, left: r.left - box.left, right: r.right - box.left, top: r.top - box.top };
  };
  return {
    chart: { left: box.left, right: box.right, width: box.width, page: document.documentElement.clientWidth },
    values: [...chart.querySelectorAll("text.tick.value")].map(drawn),
    days: [...chart.querySelectorAll("text.tick.day")].map(drawn),
    titles: [...chart.querySelectorAll("text.axis-title")].map((e) => e.textContent),
    gridlines: chart.querySelectorAll(".grid line").length,
    marked: [...chart.querySelectorAll("g[data-sensor]")].map((g) => g.dataset.sensor),
    legend: [...document.querySelectorAll("#readings-legend li")].map((li) => li.textContent),
  };
})()
""".strip()


@pytest.fixture
def server(ddb: Any, tables: Tables, session: LocalSession) -> Iterator[LocalApi]:
    # Given two registered cities with temperatures on ten days of 2023 (as an import leaves them: day
    # items and their month's summary), and sensor 23's extremes on one of those days
    registry = Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb)
    for sensor, city in CITIES.items():
        registry.register(SensorProfile(sensor_id=sensor, name=city, serial=f"S-{sensor}"))
    bodies = [
        f'{{"sensor_id": {sensor}, "timestamp": "{day}T{9 + i:02d}:00:00Z", "event_id": "{sensor}-{day}-{i}", '
        f'"readings": {{"temperature": {value}}}}}'
        for sensor, values in TEMPERATURES.items()
        for day in DAYS
        for i, value in enumerate(values)
    ]
    bodies += [
        f'{{"sensor_id": 23, "timestamp": "2023-03-05T1{i}:00:00Z", "readings": {{"pressure": {value}}}}}'
        for i, value in enumerate(EXTREMES)
    ]
    ingest(ddb, tables, bodies)
    for sensor in CITIES:
        ddb.put_item(TableName=tables.table, Item=schema.summary_item(sensor, "2023-03", dict.fromkeys(DAYS, 2)))
    local = LocalApi(
        lambda_handler(
            api.build_service(ApiSettings(table_name=tables.table, ledger_table_name=tables.ledger), session)
        )
    )
    local.start()
    yield local
    local.stop()


def number(label: str) -> float:
    return float(label.replace(",", ""))


def assert_inside(labels: list[dict[str, Any]], width: float) -> None:
    """Every label drawn whole inside the chart (an SVG cuts off what is drawn past its edges)."""
    for label in labels:
        assert label["left"] >= 0 and label["right"] <= width, label


def test_the_chart_labels_its_axes_and_names_two_sensors_and_the_page_opens_where_the_reports_are(
    server: LocalApi, tmp_path: Path
) -> None:
    # When Chromium opens the page without a range, the two cities' temperature in the chart; then
    # sensor 23's pressure; then a range chosen without reports, and the button it offers is clicked;
    # and the page's rule for a mean is given the cases of the command line's
    cases = json.dumps([written for written, _ in CASES])
    seen = evaluate(
        f"{server.url}/?rsensor=21,22&reading=temperature",
        tmp_path / "profile",
        f"""{{
          opened: {{ from: byId("from").value, to: byId("to").value, notes: byId("notes").textContent }},
          cities: {DRAWN_LABELS},
          extremes: await (async () => {{
            byId("reading-sensor").value = "23";
            await render();
            return {DRAWN_LABELS};
          }})(),
          goneBack: await (async () => {{
            byId("from").value = "2024-06-01";
            byId("to").value = "2024-06-30";
            await render();
            const offer = document.querySelector("#notes .go-to-range");
            const offered = offer.textContent;
            offer.click();
            await new Promise((done) => {{
              const look = () => (document.body.dataset.state === "loading" ? setTimeout(look, 20) : done());
              look();
            }});
            return {{ offered, from: byId("from").value, to: byId("to").value }};
          }})(),
          shown: {cases}.map((written) => shownNumber(JSON.parse(written))),
        }}""",
    )

    # Then the page opened on the 30 days to the latest reports, and said why
    assert (seen["opened"]["from"], seen["opened"]["to"]) == ("2023-02-09", "2023-03-10")
    assert (
        "Their latest reports are on 2023-03-10: the page opened on the 30 days to it, 2023-02-09 to 2023-03-10."
        in seen["opened"]["notes"]
    )
    cities = seen["cities"]
    # And the chart is as wide as the page (its margins aside), and inside it
    assert cities["chart"]["width"] >= 0.9 * cities["chart"]["page"]
    assert cities["chart"]["left"] >= 0 and cities["chart"]["right"] <= cities["chart"]["page"]
    # And the value axis holds the data at round steps, top to bottom, its negative labels signed
    values = [number(v["text"]) for v in sorted(cities["values"], key=lambda v: v["top"])]
    assert len(values) >= 4 and values == sorted(values, reverse=True)
    assert values[-1] <= -20.833333 and values[0] >= 19.75
    assert [v["text"] for v in cities["values"] if number(v["text"]) < 0] and all(
        v["text"].startswith("-") for v in cities["values"] if number(v["text"]) < 0
    )
    assert_inside(cities["values"], cities["chart"]["width"])
    # And dates along the day axis, left to right, inside the chart; the reading's name on its axis
    days = [d["text"] for d in cities["days"]]
    assert len(days) >= 5 and days == sorted(days) and all(re.fullmatch(r"2023-0[23]-\d\d", d) for d in days)
    assert [d["left"] for d in cities["days"]] == sorted(d["left"] for d in cities["days"])
    assert_inside(cities["days"], cities["chart"]["width"])
    assert "temperature" in cities["titles"] and cities["gridlines"] >= len(values) + len(days)
    # And both cities are drawn, ten days each, and named in the legend
    assert sorted(set(cities["marked"])) == ["21", "22"] and len(cities["marked"]) == 20
    assert cities["legend"] == ["sensor 21 \u00b7 Oslo", "sensor 22 \u00b7 Lisbon"]

    # Then a billion's labels keep every digit and their sign, inside the chart
    extremes = seen["extremes"]
    labels = [v["text"] for v in sorted(extremes["values"], key=lambda v: v["top"])]
    assert labels[0] == "1,000,000,000" and labels[-1] == "-1,000,000,000"
    assert_inside(extremes["values"], extremes["chart"]["width"])
    assert extremes["legend"] == ["sensor 23"] and "pressure" in extremes["titles"]

    # Then a range chosen stays, and its button goes to the 30 days to the latest reports
    assert seen["goneBack"] == {"offered": "Show 2023-02-09 to 2023-03-10", "from": "2023-02-09", "to": "2023-03-10"}

    # Then the page shows each mean as the command line does
    assert seen["shown"] == [want for _, want in CASES]
