"""The page of ``sensor-digest up`` on what a table really holds: a row the API cannot answer, a day
it cannot read and a profile it leaves out each cost the page that part alone; a first view with
nothing to show says what to do; and the docs' example address opens straight onto its data.

Engine: DynamoDB Local behind the API; browser: ``chromium --headless --dump-dom``
(``tests/support/browser.py``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sensor_digest.registry import Registry, SensorProfile
from sensor_digest.store import schema
from sensor_digest_tools.local.api_server import LocalApi
from tests.support.browser import Dom, render
from tests.support.tables import Tables

ROOT = Path(__file__).resolve().parents[3]
DOCS_EXAMPLE = re.compile(r'"\$SENSOR_DIGEST_API_URL(/\?[^"]+)"')


def rows(dom: Dom) -> dict[str, dict[str, Any]]:
    return {row["attrs"]["data-sensor"]: row for row in dom.find("tr") if "data-sensor" in row["attrs"]}


def counted(dom: Dom) -> list[tuple[str, str]]:
    return sorted(
        (e["attrs"]["data-day"], e["attrs"]["data-count"])
        for e in dom.elements
        if e["tag"] == "td" and e["attrs"].get("data-count", "0") != "0"
    )


def test_a_row_the_api_refuses_a_day_it_cannot_read_and_a_profile_it_leaves_out_cost_only_themselves(
    ddb: Any, tables: Tables, server: LocalApi, tmp_path: Path
) -> None:
    # Given sensor 7's counts, sensor 8's day written by hand as text beside a healthy one, a profile
    # of an id no route takes, and an id typed in the form that the API refuses (past 2^53 - 1)
    registry = Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb)
    for sensor in (7, 8):
        registry.register(SensorProfile(sensor_id=sensor, name=f"s{sensor}", serial=f"S-{sensor}"))
    ddb.put_item(TableName=tables.table, Item=schema.day_item(7, "2024-05-01", 3))
    ddb.put_item(TableName=tables.table, Item=schema.day_item(8, "2024-05-01", 2))
    ddb.put_item(TableName=tables.table, Item={**schema.day_key(8, "2024-05-02"), schema.DATA_COUNT: {"S": "x"}})
    odd = SensorProfile(sensor_id=1, name="odd", serial="S-odd").item()
    odd[schema.SENSOR_ID] = {"N": str(2**53)}
    ddb.put_item(TableName=tables.table, Item=odd)

    # When the page opens on May's first three days with that id added
    query = "from=2024-05-01&to=2024-05-03&sensors=9007199254740993&sensor=&mfrom=2024-05&mto=2024-05"
    dom = Dom(render(f"{server.url}/?{query}", tmp_path / "profile"))

    # Then the healthy rows and days are drawn, the refused row says why, the unreadable day is marked
    # with its repair, and the profile left out is named
    assert dom.find("body")[0]["attrs"].get("data-state") == "ready", dom.find("p", id="status")
    drawn = rows(dom)
    assert set(drawn) == {"7", "8", "9007199254740992"}  # JavaScript's nearest number to the id typed
    assert counted(dom) == [("2024-05-01", "2"), ("2024-05-01", "3")]
    [failed] = [e for e in dom.elements if e["tag"] == "td" and e["attrs"].get("class") == "failed"]
    assert failed["text"].startswith("could not be read: sensor id must be an integer from 0 to 9007199254740991")
    assert drawn["9007199254740992"]["attrs"].get("data-failed") == "1"
    [marked] = [e for e in dom.elements if e["attrs"].get("data-malformed") == "1" and e["tag"] == "td"]
    assert (
        marked["attrs"]["data-day"] == "2024-05-02"
        and "set its DataCount to the day's count" in marked["attrs"]["title"]
    )
    assert drawn["8"]["attrs"].get("data-malformed") == "1"
    texts = [p["text"] for p in dom.find("p")]
    assert any(
        t.startswith("A profile left out of the list (item SensorId '9007199254740992', Date 'PROFILE'") for t in texts
    )
    assert "1 sensor(s) could not be read: their rows say why." in texts


def test_the_first_view_says_what_to_do_and_the_docs_example_opens_onto_its_data(
    ddb: Any, tables: Tables, server: LocalApi, tmp_path: Path
) -> None:
    # Given what the docs' example leaves in the table: one report of sensor 7 (not registered) on
    # 2024-05-01, and its month's summary
    ddb.put_item(TableName=tables.table, Item=schema.day_item(7, "2024-05-01", 1))
    ddb.put_item(TableName=tables.table, Item=schema.summary_item(7, "2024-05", {"2024-05-01": 1}))
    example = DOCS_EXAMPLE.findall((ROOT / "docs" / "read-api-calling.md").read_text(encoding="utf-8"))

    # When the page opens as a newcomer first opens it, and then at the address the docs give
    first = Dom(render(f"{server.url}/", tmp_path / "first"))
    address, _ = example  # the other: readings (test_page_readings_in_browser.py)
    docs = Dom(render(f"{server.url}{address}", tmp_path / "docs"))

    # Then the first view is empty and says what to do, and the docs' address shows the report
    assert first.find("body")[0]["attrs"].get("data-state") == "empty"
    [told] = [p["text"] for p in first.find("p") if p["text"].startswith("No sensors to show")]
    assert 'Type the ids of the sensors that reported under "More sensors"' in told and "/?sensors=7" in told
    assert docs.find("body")[0]["attrs"].get("data-state") == "ready", docs.find("p", id="status")
    assert set(rows(docs)) == {"7"}
    assert counted(docs) == [("2024-05-01", "1"), ("2024-05-01", "1")]  # its day, and its month's day
    assert [row["attrs"]["data-month"] for row in docs.find("tr") if "data-month" in row["attrs"]] == ["2024-05"]


def test_a_range_chosen_without_reports_says_where_the_reports_are_and_offers_to_go_there(
    ddb: Any, tables: Tables, server: LocalApi, tmp_path: Path
) -> None:
    # Given sensor 7's one report, on 2024-05-01, and its month's summary
    Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb).register(
        SensorProfile(sensor_id=7, name="roof", serial="S-7")
    )
    ddb.put_item(TableName=tables.table, Item=schema.day_item(7, "2024-05-01", 1))
    ddb.put_item(TableName=tables.table, Item=schema.summary_item(7, "2024-05", {"2024-05-01": 1}))

    # When the page opens on June, a range chosen in the address, with sensor 7's readings
    dom = Dom(render(f"{server.url}/?from=2024-06-01&to=2024-06-30&rsensor=7", tmp_path / "profile"))

    # Then it stays on June, says where the reports are, and offers the 30 days to them, above the
    # heatmap and in the readings' line
    assert dom.find("body")[0]["attrs"].get("data-state") == "ready"
    assert dom.find("p", id="status")[0]["text"] == "1 sensor(s), 2024-06-01 to 2024-06-30."
    [said] = [p for p in dom.find("p") if p["text"].startswith("No reports from")]
    assert said["text"] == (
        "No reports from 2024-06-01 to 2024-06-30 for these sensors. Their latest reports are on 2024-05-01: "
    )
    [line] = dom.find("p", id="readings-title-line")
    assert line["text"] == "Sensor 7: no readings from 2024-06-01 to 2024-06-30. Its latest reports are on 2024-05-01: "
    buttons = dom.find("button", **{"class": "go-to-range"})
    assert [(b["text"], b["attrs"]["data-from"], b["attrs"]["data-to"]) for b in buttons] == 2 * [
        ("Show 2024-04-02 to 2024-05-01", "2024-04-02", "2024-05-01")
    ]
    # And the legend counts in the singular where it should
    assert dom.find("p", id="legend")[0]["text"].strip().endswith("1 report a day")
