"""The page of ``sensor-digest up`` at the limits it documents: 5,000 sensors over 30 days (150,000
cells) are drawn whole; over a leap year the 409 sensors that fit (149,694 cells) are drawn whole
and the 410th is left out with a word.

Engine: none. The API behind the local server is a stand-in handler that answers as the read API
does (the same JSON shapes, ``/sensors`` paginated by 100 with ``next_token``), so that the test
measures the page, not DynamoDB Local; browser: ``chromium --headless --dump-dom``
(``tests/support/browser.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from sensor_digest_tools.local.api_server import LocalApi
from tests.support.browser import Dom, render


def count_of(sensor: int, day: str) -> int:
    """The stand-in's count of a sensor's day: 1 to 7 on nearly every day (a page's worst case: as many
    counts as cells), and 0 (no report) now and then."""
    ordinal = date.fromisoformat(day).toordinal()
    return 0 if (sensor + ordinal) % 97 == 0 else (sensor * 3 + ordinal) % 7 + 1


class StandIn:
    """A read API of ``sensors`` registered sensors, each with a count on most days."""

    def __init__(self, sensors: int) -> None:
        self.sensors = sensors

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        path, query = event["rawPath"], event.get("queryStringParameters") or {}
        if path == "/sensors":
            start = int(query.get("token", "0"))
            listed = [
                {"sensor_id": s, "name": f"s{s}", "timezone": "UTC"}
                for s in range(start, min(start + 100, self.sensors))
            ]
            body: dict[str, Any] = {"sensors": listed}
            if start + 100 < self.sensors:
                body["next_token"] = str(start + 100)
        elif path.endswith("/days"):
            sensor = int(path.split("/")[2])
            first, last = date.fromisoformat(query["from"]), date.fromisoformat(query["to"])
            days = [(first + timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]
            body = {"sensor_id": sensor, "days": {d: c for d in days if (c := count_of(sensor, d))}}
        else:
            body = {"sensor_id": int(path.split("/")[2]), "months": {}}
        return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": json.dumps(body)}


@pytest.fixture
def served() -> Iterator[Any]:
    servers: list[LocalApi] = []

    def serve(sensors: int) -> LocalApi:
        local = LocalApi(StandIn(sensors))
        local.start()
        servers.append(local)
        return local

    yield serve
    for local in servers:
        local.stop()


def assert_drawn_whole(dom: Dom, sensors: int, days: int) -> None:
    """Every row and cell drawn, each count where the API put it, the scale from the largest."""
    assert dom.find("body")[0]["attrs"].get("data-state") == "ready", dom.find("p", id="status")
    rows = [row for row in dom.find("tr") if "data-sensor" in row["attrs"]]
    assert [int(row["attrs"]["data-sensor"]) for row in rows] == list(range(sensors))
    cells = [e for e in dom.elements if e["tag"] == "td" and "data-day" in e["attrs"]]
    assert len(cells) == sensors * days
    per_row = [cells[i * days : (i + 1) * days] for i in (0, sensors // 2, sensors - 1)]
    for sensor, row in zip((0, sensors // 2, sensors - 1), per_row, strict=True):
        assert [int(c["attrs"]["data-count"]) for c in row] == [count_of(sensor, c["attrs"]["data-day"]) for c in row]
    assert dom.find("p", id="legend")[0]["text"].strip().endswith("7 reports a day")


def test_the_page_draws_5000_sensors_over_30_days_whole(served: Any, tmp_path: Path) -> None:
    # Given as many registered sensors as the page's documented limit holds over 30 days
    server = served(5000)

    # When Chromium opens the page on those 30 days
    dom = Dom(render(f"{server.url}/?from=2024-05-01&to=2024-05-30&sensors=&sensor=", tmp_path / "profile"))

    # Then every row and cell is drawn (150,000), and nothing is said to be left out
    assert_drawn_whole(dom, 5000, 30)
    assert not [p for p in dom.find("p") if "Showing the first" in p["text"]]


def test_past_its_limit_the_page_draws_the_sensors_that_fit_whole_and_says_how_many_it_left_out(
    served: Any, tmp_path: Path
) -> None:
    # Given one sensor more than fit over a leap year (150,000 cells / 366 days: 409 sensors; a
    # year, not 30 days, so that 410 sensors' requests stand for 5,001)
    server = served(410)

    # When Chromium opens the page on that year
    dom = Dom(render(f"{server.url}/?from=2024-01-01&to=2024-12-31&sensors=&sensor=", tmp_path / "profile"))

    # Then it draws the first 409 whole, a year at the limit (149,694 cells), and says how many it left out
    assert_drawn_whole(dom, 409, 366)
    notes = [p["text"] for p in dom.find("p") if p["text"].startswith("Showing the first")]
    assert notes == [
        "Showing the first 409 of 410 sensors: the page draws at most 150,000 cells (sensors x days). "
        "Narrow the range, or name the sensors."
    ]
