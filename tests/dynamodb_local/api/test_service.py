"""The read API's service on DynamoDB Local: days, months and registered sensors as the contract says,
one ``Query`` a request and never a ``Scan``, page tokens bound to their request, the 400s, 404s and
405s as JSON, and the ``Profiles`` index's backfill (``Registry.list_unlisted``).

Engine: DynamoDB Local (its tables made as the stack makes them, the ``Profiles`` index included).
Events: API Gateway HTTP API payload 2.0, built as the local server builds them (``event_of``).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from typer.testing import CliRunner

from api import handler as api_module
from sensor_digest import api
from sensor_digest.api import tokens
from sensor_digest.config import ApiSettings
from sensor_digest.registry import Registry, SensorProfile
from sensor_digest.store import schema
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.cli.app import app
from sensor_digest_tools.lambda_runtime.events import FakeContext
from sensor_digest_tools.local.api_server import event_of
from tests.support.cli import invoke
from tests.support.read_api import follow, get, put_days, put_month
from tests.support.tables import Tables


class Calls:
    """The DynamoDB operations a client made (botocore's ``before-call`` event), by name."""

    def __init__(self, client: Any) -> None:
        self.names: list[str] = []
        client.meta.events.register("before-call.dynamodb.*", self._record)

    def _record(self, model: Any, **_: Any) -> None:
        self.names.append(model.name)


@pytest.fixture
def service(tables: Tables, session: LocalSession) -> api.ApiService:
    return api.build_service(ApiSettings(table_name=tables.table, ledger_table_name=tables.ledger), session)


@pytest.fixture
def registry(ddb: Any, tables: Tables) -> Registry:
    return Registry(table_name=tables.table, ledger_table_name=tables.ledger, client=ddb)


def put_unlisted_profile(ddb: Any, tables: Tables, profile: SensorProfile) -> None:
    """A profile as versions before the read API wrote it: without ``ProfileList``."""
    item = profile.item()
    del item[schema.PROFILE_LIST]
    ddb.put_item(TableName=tables.table, Item=item)


def test_days_answers_the_day_counts_in_the_range_and_leaves_out_days_without_reports(
    ddb: Any, tables: Tables, service: api.ApiService
) -> None:
    put_days(ddb, tables, 7, {"2024-04-30": 9, "2024-05-01": 3, "2024-05-03": 1, "2024-05-04": 8})
    put_days(ddb, tables, 8, {"2024-05-02": 5})  # another sensor's partition
    put_month(ddb, tables, 7, "2024-05", {"2024-05-01": 3})  # a summary item sorts outside a day range

    status, body, headers = get(service, "/sensors/7/days?from=2024-05-01&to=2024-05-03")

    assert status == 200
    assert headers["Content-Type"] == "application/json"
    assert body == {"sensor_id": 7, "days": {"2024-05-01": 3, "2024-05-03": 1}}


def test_months_answers_the_summary_items_of_the_range_by_month(
    ddb: Any, tables: Tables, service: api.ApiService
) -> None:
    put_month(ddb, tables, 7, "2024-04", {"2024-04-30": 9})
    put_month(ddb, tables, 7, "2024-05", {"2024-05-01": 3, "2024-05-03": 1})
    put_month(ddb, tables, 7, "2024-07", {"2024-07-01": 2})
    put_days(ddb, tables, 7, {"2024-05-01": 3})

    status, body, _ = get(service, "/sensors/7/months?from=2024-05&to=2024-07")

    assert status == 200
    assert body == {
        "sensor_id": 7,
        "months": {"2024-05": {"2024-05-01": 3, "2024-05-03": 1}, "2024-07": {"2024-07-01": 2}},
    }


def test_each_request_is_one_query_and_never_a_scan(
    ddb: Any, tables: Tables, registry: Registry, session: LocalSession
) -> None:
    # Given a service whose client records what it calls
    service = api.build_service(ApiSettings(table_name=tables.table, ledger_table_name=tables.ledger), session)
    calls = Calls(service._client)
    registry.register(SensorProfile(sensor_id=7, name="roof", serial="S-7"))
    put_days(ddb, tables, 7, {"2024-05-01": 3})

    # When each route is asked once
    for target in (
        "/sensors/7/days?from=2024-05-01&to=2024-05-31",
        "/sensors/7/months?from=2024-01&to=2024-12",
        "/sensors",
    ):
        assert get(service, target)[0] == 200

    # Then each was one Query
    assert calls.names == ["Query", "Query", "Query"]


def test_sensors_lists_registered_profiles_by_id_with_name_and_time_zone(
    ddb: Any, tables: Tables, registry: Registry, service: api.ApiService
) -> None:
    registry.register(SensorProfile(sensor_id=12, name="cellar", serial="S-12", timezone="Europe/Paris"))
    registry.register(SensorProfile(sensor_id=7, name="roof", serial="S-7"))
    put_days(ddb, tables, 99, {"2024-05-01": 1})  # data without a profile is no registered sensor

    status, body, _ = get(service, "/sensors")

    assert status == 200
    assert body == {
        "sensors": [
            {"sensor_id": 7, "name": "roof", "timezone": "UTC"},
            {"sensor_id": 12, "name": "cellar", "timezone": "Europe/Paris"},
        ]
    }


def test_days_paginate_with_a_token_and_the_pages_add_up_to_the_range(
    ddb: Any, tables: Tables, service: api.ApiService
) -> None:
    counts = {f"2024-05-{d:02d}": d for d in range(1, 8)}
    put_days(ddb, tables, 7, counts)

    pages = list(follow(service, "/sensors/7/days?from=2024-05-01&to=2024-05-31&limit=3", "days"))

    assert [len(p["days"]) for p in pages][:3] == [3, 3, 1]
    merged: dict[str, int] = {}
    for page in pages:
        merged.update(page["days"])
    assert merged == counts


def test_sensors_paginate_with_a_token(registry: Registry, service: api.ApiService) -> None:
    for sensor in (3, 1, 2):
        registry.register(SensorProfile(sensor_id=sensor, name=f"s{sensor}", serial=f"S-{sensor}"))

    pages = list(follow(service, "/sensors?limit=2", "sensors"))

    assert [s["sensor_id"] for p in pages for s in p["sensors"]] == [1, 2, 3]
    assert len(pages[0]["sensors"]) == 2


@pytest.mark.parametrize(
    "target",
    [
        "/sensors/-1/days?from=2024-05-01&to=2024-05-02",
        "/sensors/abc/days?from=2024-05-01&to=2024-05-02",
        "/sensors/7.5/months?from=2024-05&to=2024-06",
        "/sensors/%EF%BC%97/days?from=2024-05-01&to=2024-05-02",  # a full-width digit seven
        "/sensors/9007199254740992/days?from=2024-05-01&to=2024-05-02",  # 2^53
        "/sensors/7/days?from=2024-02-30&to=2024-03-01",
        "/sensors/7/days?from=2024-05-02&to=2024-05-01",
        "/sensors/7/days?from=2024-01-01&to=2025-01-01",  # 367 days
        "/sensors/7/days?to=2024-05-01",
        "/sensors/7/months?from=2024-13&to=2025-01",
        "/sensors/7/months?from=2022-01&to=2024-01",  # 25 months
        "/sensors/7/days?from=2024-05-01&to=2024-05-02&limit=0",
        "/sensors?limit=101",
        "/sensors?token=not-a-token",
    ],
)
def test_bad_input_gets_a_400_with_a_json_error(service: api.ApiService, target: str) -> None:
    status, body, headers = get(service, target)

    assert status == 400
    assert headers["Content-Type"] == "application/json"
    assert set(body) == {"error"} and body["error"]


def test_a_token_of_another_sensor_or_range_is_refused(ddb: Any, tables: Tables, service: api.ApiService) -> None:
    # Given a real token of sensor 7's May
    put_days(ddb, tables, 7, {"2024-05-01": 1, "2024-05-02": 2})
    _, first, _ = get(service, "/sensors/7/days?from=2024-05-01&to=2024-05-31&limit=1")
    token = first["next_token"]

    # When it is replayed on another sensor, another range, or another route
    replays = [
        f"/sensors/8/days?from=2024-05-01&to=2024-05-31&token={token}",
        f"/sensors/7/days?from=2024-06-01&to=2024-06-30&token={token}",
        f"/sensors/7/months?from=2024-05&to=2024-05&token={token}",
    ]

    # Then each is a 400, never a read
    assert [get(service, target)[0] for target in replays] == [400, 400, 400]
    assert get(service, f"/sensors/7/days?from=2024-05-01&to=2024-05-31&limit=1&token={token}")[1]["days"] == {
        "2024-05-02": 2
    }


@pytest.mark.parametrize(
    ("target", "after"),
    [
        ("/sensors/7/days?from=2024-05-01&to=2024-05-01", "2024-05-01"),
        ("/sensors/7/days?from=2024-05-01&to=2024-05-31", "2024-05-31"),
        ("/sensors/7/months?from=2024-01&to=2024-12", "SUMMARY#2024-12"),
    ],
)
def test_a_token_forged_to_start_at_the_ranges_last_key_is_a_400_never_try_again(
    ddb: Any, tables: Tables, service: api.ApiService, target: str, after: str
) -> None:
    # Given a token made (not given) for the request, at the range's upper bound
    put_days(ddb, tables, 7, {"2024-05-01": 1})
    route, query = target.split("?")
    first, last = (part.split("=")[1] for part in query.split("&"))
    token = tokens.encode(tokens.request_digest(route.rsplit("/", 1)[1], 7, first, last), after)

    status, body, _ = get(service, f"{target}&token={token}")

    # Then it is refused as a bad token: DynamoDB would refuse the Query that starts there
    assert status == 400 and "token is not one this API gave" in body["error"]


def test_a_query_dynamodb_refuses_as_invalid_is_a_500_never_try_again(
    ddb: Any, tables: Tables, service: api.ApiService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a Query DynamoDB refuses (ValidationException): one that starts at its range's upper bound
    put_days(ddb, tables, 7, {"2024-05-01": 1})
    monkeypatch.setattr(tokens, "after_sort_key", lambda token, digest, low, high: high)

    status, body, _ = get(service, "/sensors/7/days?from=2024-05-01&to=2024-05-01&token=x")

    # Then the answer says DynamoDB refused it; retrying cannot help, so it never says try again
    assert status == 500 and "refused" in body["error"] and "try again" not in body["error"]


@pytest.mark.parametrize(
    ("method", "target", "status"),
    [
        ("GET", "/", 404),
        ("GET", "/sensors/7", 404),
        ("GET", "/sensors/7/../../etc/passwd", 404),
        ("GET", "/sensors/7/years", 404),
        ("POST", "/sensors", 405),
        ("DELETE", "/sensors/7/days", 405),
    ],
)
def test_unknown_routes_get_a_404_and_other_methods_a_405_as_json(
    service: api.ApiService, method: str, target: str, status: int
) -> None:
    answer, body, headers = get(service, target, method)

    assert answer == status
    assert headers["Content-Type"] == "application/json"
    assert set(body) == {"error"}


def test_the_lambda_entry_point_answers_from_the_table_of_its_environment(
    ddb: Any, tables: Tables, engine_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the handler configured as Lambda configures it: by environment
    monkeypatch.setenv("TABLE_NAME", tables.table)
    monkeypatch.setenv("LEDGER_TABLE_NAME", tables.ledger)
    put_days(ddb, tables, 7, {"2024-05-01": 3})
    event = event_of("GET", "/sensors/7/days?from=2024-05-01&to=2024-05-01", {"host": "test"}, "127.0.0.1")

    answer = api_module.handler(event, FakeContext())

    assert answer["statusCode"] == 200
    assert json.loads(answer["body"]) == {"sensor_id": 7, "days": {"2024-05-01": 3}}


def test_list_unlisted_puts_profiles_written_before_the_index_into_it(
    ddb: Any, tables: Tables, registry: Registry, service: api.ApiService
) -> None:
    # Given a profile as earlier versions wrote it (no ProfileList) and one written today
    put_unlisted_profile(ddb, tables, SensorProfile(sensor_id=5, name="old", serial="S-5"))
    registry.register(SensorProfile(sensor_id=6, name="new", serial="S-6"))
    assert [s["sensor_id"] for s in get(service, "/sensors")[1]["sensors"]] == [6]

    # When the backfill runs, twice
    first, second = registry.list_unlisted(), registry.list_unlisted()

    # Then the old profile is listed, once, and nothing else changed
    assert (first, second) == (1, 0)
    assert get(service, "/sensors")[1]["sensors"] == [
        {"sensor_id": 5, "name": "old", "timezone": "UTC"},
        {"sensor_id": 6, "name": "new", "timezone": "UTC"},
    ]
    assert registry.get(5) == SensorProfile(sensor_id=5, name="old", serial="S-5")


def test_a_profile_update_lists_a_profile_written_before_the_index(
    ddb: Any, tables: Tables, registry: Registry, service: api.ApiService
) -> None:
    put_unlisted_profile(ddb, tables, SensorProfile(sensor_id=5, name="old", serial="S-5"))

    registry.update(5, lambda p: replace(p, name="renamed"))

    assert get(service, "/sensors")[1]["sensors"] == [{"sensor_id": 5, "name": "renamed", "timezone": "UTC"}]


def test_sensors_reindex_lists_old_profiles_and_says_how_many(
    ddb: Any, tables: Tables, service: api.ApiService, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a profile as earlier versions wrote it, and no local pipeline running
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(tmp_path / "local-pipeline.json"))
    put_unlisted_profile(ddb, tables, SensorProfile(sensor_id=5, name="old", serial="S-5"))
    where = ["--table", tables.table, "--ledger", tables.ledger]

    first = CliRunner().invoke(app, ["sensors", "reindex", *where], catch_exceptions=False)
    again = CliRunner().invoke(app, ["sensors", "reindex", *where], catch_exceptions=False)

    assert (first.exit_code, again.exit_code) == (0, 0), first.output
    assert "1 profile(s) added" in first.output and "0 profile(s) added" in again.output
    assert [s["sensor_id"] for s in get(service, "/sensors")[1]["sensors"]] == [5]


def test_day_items_without_a_count_are_no_days_to_any_reader(
    ddb: Any, tables: Tables, registry: Registry, service: api.ApiService
) -> None:
    # Given sensor 7 (its own threshold: an hour), whose last report was in hour 09 of 2024-05-01, then
    # eight days of empty day items (no DataCount: a resent report's identity, an hours map, or keys
    # alone; or a DataCount of 0, written by hand), and an item whose sort key is no day among them
    registry.register(SensorProfile(sensor_id=7, name="roof", serial="S-7", silence_hours=1))
    ddb.put_item(TableName=tables.table, Item=schema.day_item(7, "2024-05-01", 3, {"09": 3}))
    shapes: list[dict[str, Any]] = [
        {schema.ID_PAGE: {"N": "0"}, schema.IDS: {"BS": [b"\x02" * 12]}},
        {schema.HOUR_COUNTS: {"M": {"10": {"N": "2"}}}},
        {},
        {  # with a reading's statistics, written by hand too
            schema.DATA_COUNT: {"N": "0"},
            schema.READINGS: {"M": {"t": {"M": {"q": {"N": "441"}, "09": {"N": "21"}}}}},
            schema.READINGS_COVER: {"N": "0"},
        },
    ]
    for day in range(2, 10):
        item = {**schema.day_key(7, f"2024-05-{day:02d}"), **shapes[day % 4]}
        ddb.put_item(TableName=tables.table, Item=item)
    ddb.put_item(TableName=tables.table, Item={**schema.day_key(7, "2024-05-04x"), schema.DATA_COUNT: {"N": "5"}})
    where = ("--table", tables.table)

    # When every reader asks
    days = [page["days"] for page in follow(service, "/sensors/7/days?from=2024-05-01&to=2024-05-31&limit=2", "days")]
    hours = get(service, "/sensors/7/hours?day=2024-05-05")[1]
    readings = get(service, "/sensors/7/readings?from=2024-05-01&to=2024-05-31")[1]
    reading_hours = get(service, "/sensors/7/readings/hours?day=2024-05-03")[1]
    silence = get(service, "/silence")[1]
    counts = json.loads(
        _cli("counts", "--sensor", "7", "--from", "2024-05-01", "--to", "2024-05-31", "--hourly", "--json", *where)
    )
    silent = json.loads(_cli("silence", "--json", *where))
    cli_readings = json.loads(
        _cli("readings", "--sensor", "7", "--from", "2024-05-01", "--to", "2024-05-31", "--json", *where)
    )
    cli_hours = json.loads(_cli("readings", "--sensor", "7", "--hourly", "--day", "2024-05-03", "--json", *where))

    # Then each sees the one day with reports, and the silence check finds its last hour
    assert {d: n for page in days for d, n in page.items()} == {"2024-05-01": 3}
    assert hours["hours"] == {}
    assert (readings["days"], reading_hours["hours"]) == ({}, {})
    assert (cli_readings["days"], cli_hours["hours"]) == ({}, {})
    assert [(s["sensor_id"], s["last_report_hour"]) for s in silence["sensors"]] == [(7, "2024-05-01T09")]
    assert (counts["days"], counts["hours"]) == ({"2024-05-01": 3}, {"2024-05-01": {"09": 3}})
    assert [(s["sensor_id"], s["last_report_hour"]) for s in silent["sensors"]] == [(7, "2024-05-01T09")]


def _cli(*args: str) -> str:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return str(result.stdout)
