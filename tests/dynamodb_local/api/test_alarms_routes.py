"""The read API's alarm routes on DynamoDB Local (``api/alarms.py``): alarms by state in their listed
order and paginated, a sensor's alarms NORMAL ones included, an alarm's history from the announcer's
log, and the operator's actions with their 400s, 404s and 409s.

Engine: DynamoDB Local (the tables as the stack makes them, the ``Alarms`` index included). Events:
API Gateway HTTP API payload 2.0 as the local server builds them (``event_of``), and over real HTTP
through the ``server`` fixture. Alarms are moved as ingest and operators move them: ``model.evaluate``
of reports written on condition, and ``AlarmOperations.act``.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sensor_digest import api
from sensor_digest.alarms.announce import Announcer
from sensor_digest.alarms.model import LISTED_ORDER, Alarm, Report, State, evaluate
from sensor_digest.alarms.operations import AlarmOperations
from sensor_digest.alarms.rules import AlarmRule, RuleSet
from sensor_digest.alarms.store import AlarmStore, RuleStore
from sensor_digest.config import ApiSettings
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.aws.stream_reader import StreamReader
from sensor_digest_tools.local.api_server import LocalApi, event_of
from sensor_digest_tools.local.event_bus import LocalEventBus
from tests.support.tables import Tables

HOT = {"name": "hot", "reading": "temperature", "sensors": "*", "condition": "above", "threshold": 30, "clear": 28}
STUCK = {**HOT, "name": "stuck", "latch": True}
MICROS = 1_000_000


@pytest.fixture
def service(tables: Tables, session: LocalSession) -> api.ApiService:
    return api.build_service(ApiSettings(table_name=tables.table, ledger_table_name=tables.ledger), session)


@pytest.fixture
def ops(ddb: Any, tables: Tables) -> AlarmOperations:
    return AlarmOperations(
        rules=RuleStore(ledger_table_name=tables.ledger, client=ddb),
        alarms=AlarmStore(table_name=tables.table, client=ddb),
    )


def store_rules(ops: AlarmOperations, *raw: dict[str, Any]) -> RuleSet:
    rules = RuleSet.of(AlarmRule.parse(r) for r in raw)
    return ops.rules.save(rules, expected=ops.rules.version(consistent=True), by="test", now=0)


def call(
    service: api.ApiService, method: str, target: str, body: str | None = None, caller: dict[str, Any] | None = None
) -> tuple[int, Any]:
    """One request as the local server makes it (``caller``: the event's ``requestContext.authorizer``
    instead of the local one); its status and JSON body, numbers read exactly."""
    event = event_of(method, target, {"host": "test"}, "127.0.0.1", (body or "").encode())
    if caller is not None:
        event["requestContext"]["authorizer"] = caller
    answer = service.handle_event(event).response()
    return int(answer["statusCode"]), json.loads(answer["body"], parse_float=Decimal)


def report(ops: AlarmOperations, sensor: int, rule: dict[str, Any], value: str) -> Alarm:
    """One report of ``value`` evaluated and written as ingest does (its time: now)."""
    parsed = AlarmRule.parse(rule)
    alarm = ops.alarms.get(sensor, parsed.name) or Alarm.fresh(sensor, parsed)
    now = int(time.time() * MICROS)
    after = evaluate(alarm, parsed, [Report(now, Decimal(value), f"e-{sensor}-{now}")], now)
    assert after is not alarm, "the report moved nothing"
    time.sleep(0.002)  # the next report or action is later
    return ops.alarms.write(alarm, after)


def announce(ddb: Any, tables: Tables, reader: StreamReader) -> list[dict[str, Any]]:
    """The announcer over what the stream holds since the reader's last poll: the alarm log written."""
    bus = LocalEventBus()
    announcer = Announcer(events=bus, alarms=AlarmStore(table_name=tables.table, client=ddb))  # type: ignore[arg-type]
    assert announcer.handle_event({"Records": reader.poll()}).response() == {"batchItemFailures": []}
    return [e["detail"] for e in bus.events]


def states_fleet(ops: AlarmOperations) -> dict[str, State]:
    """Alarms in every listed state (and one NORMAL after a breach), on sensors chosen so that sensor
    order and state order disagree."""
    store_rules(ops, HOT, STUCK)
    report(ops, 30, HOT, "31")  # ACTIVE
    report(ops, 10, HOT, "35")  # ACTIVE
    report(ops, 20, STUCK, "31")
    report(ops, 20, STUCK, "20")  # LATCHED
    report(ops, 5, HOT, "31")
    ops.act("5.hot", "acknowledge", by="test")  # ACKNOWLEDGED
    ops.act("40.hot", "snooze", by="test", minutes=60)  # SNOOZED, never written before
    ops.act("1.hot", "disable", by="test")  # DISABLED
    ops.act("2.hot", "disable", by="test")
    report(ops, 3, HOT, "31")
    report(ops, 3, HOT, "20")  # back to NORMAL: stored, not listed
    return {
        "10.hot": State.ACTIVE,
        "30.hot": State.ACTIVE,
        "20.stuck": State.LATCHED,
        "5.hot": State.ACKNOWLEDGED,
        "40.hot": State.SNOOZED,
        "1.hot": State.DISABLED,
        "2.hot": State.DISABLED,
    }


def test_alarms_are_listed_active_first_then_latched_acknowledged_snoozed_disabled(
    service: api.ApiService, ops: AlarmOperations
) -> None:
    expected = states_fleet(ops)

    status, body = call(service, "GET", "/alarms")
    snoozed_status, snoozed = call(service, "GET", "/alarms?state=SNOOZED")

    assert status == 200 and "next_token" not in body
    assert [a["alarm_id"] for a in body["alarms"]] == list(expected)  # by state, then by sensor within one
    assert [a["state"] for a in body["alarms"]] == [s.value for s in expected.values()]
    assert [s.value for s in LISTED_ORDER] == ["ACTIVE", "LATCHED", "ACKNOWLEDGED", "SNOOZED", "DISABLED"]
    assert (snoozed_status, [a["alarm_id"] for a in snoozed["alarms"]]) == (200, ["40.hot"])
    first = body["alarms"][0]
    assert set(first) == {
        "alarm_id",
        "sensor_id",
        "rule",
        "reading",
        "state",
        "severity",
        "since",
        "snoozed_until",
        "version",
    }
    assert (first["sensor_id"], first["rule"], first["reading"], first["severity"]) == (10, "hot", "temperature", 3)
    assert first["since"].endswith("Z") and first["snoozed_until"] is None and first["version"] == 1
    assert snoozed["alarms"][0]["snoozed_until"].endswith("Z")


@pytest.mark.parametrize("limit", [1, 2, 3, 7])
def test_the_listing_pages_through_every_state_once(service: api.ApiService, ops: AlarmOperations, limit: int) -> None:
    expected = states_fleet(ops)
    seen: list[str] = []
    token: str | None = None
    for _ in range(20):
        status, body = call(service, "GET", f"/alarms?limit={limit}" + (f"&token={token}" if token else ""))
        assert status == 200 and len(body["alarms"]) <= limit
        seen += [a["alarm_id"] for a in body["alarms"]]
        token = body.get("next_token")
        if token is None:
            break
    assert seen == list(expected)


def test_a_listing_token_is_bound_to_its_state_and_refused_when_edited(
    service: api.ApiService, ops: AlarmOperations
) -> None:
    states_fleet(ops)
    _, page = call(service, "GET", "/alarms?state=DISABLED&limit=1")
    token = page["next_token"]

    assert call(service, "GET", f"/alarms?state=DISABLED&limit=1&token={token}")[1]["alarms"][0]["alarm_id"] == "2.hot"
    for target in (f"/alarms?state=ACTIVE&token={token}", f"/alarms?token={token}", "/alarms?token=bm9wZQ"):
        status, body = call(service, "GET", target)
        assert (status, body) == (
            400,
            {"error": "token is not one this API gave for this request; start again without it"},
        )


@pytest.mark.parametrize(
    ("query", "error"),
    [
        ("state=NORMAL", "NORMAL alarms are not listed: ask a sensor's alarms, GET /sensors/{sensor_id}/alarms"),
        ("state=active", "state must be one of ACTIVE, LATCHED, ACKNOWLEDGED, SNOOZED, DISABLED, got 'active'"),
        ("limit=0", "limit must be an integer from 1 to 100, got '0'"),
        ("limit=101", "limit must be an integer from 1 to 100, got '101'"),
    ],
)
def test_a_bad_listing_request_is_a_400_saying_why(service: api.ApiService, query: str, error: str) -> None:
    assert call(service, "GET", f"/alarms?{query}") == (400, {"error": error})


def test_a_sensors_alarms_hold_normal_ones_and_those_of_deleted_rules(
    service: api.ApiService, ops: AlarmOperations
) -> None:
    store_rules(
        ops, HOT, {"name": "damp", "reading": "humidity", "sensors": [7], "condition": "above", "threshold": 90}
    )
    report(ops, 7, HOT, "31")
    ops.act("7.hot", "acknowledge", by="test")
    report(ops, 9, {**HOT, "name": "gone"}, "99")  # an alarm of a rule no longer in the set

    status, body = call(service, "GET", "/sensors/7/alarms")
    other = call(service, "GET", "/sensors/8/alarms")
    gone = call(service, "GET", "/sensors/9/alarms")

    assert status == 200 and body["sensor_id"] == 7
    assert [(a["alarm_id"], a["state"], a["version"]) for a in body["alarms"]] == [
        ("7.damp", "NORMAL", 0),  # never written: NORMAL under the rule that watches it
        ("7.hot", "ACKNOWLEDGED", 2),
    ]
    assert body["alarms"][0]["since"] is None and body["alarms"][0]["reading"] == "humidity"
    assert other[0] == 200 and [a["alarm_id"] for a in other[1]["alarms"]] == ["8.hot"]  # damp names sensor 7 only
    assert [(a["alarm_id"], a["state"]) for a in gone[1]["alarms"]] == [("9.hot", "NORMAL"), ("9.gone", "ACTIVE")]
    assert call(service, "GET", "/sensors/x/alarms")[0] == 400


def test_a_second_acknowledgement_is_a_409_and_the_first_names_the_caller(
    service: api.ApiService, ops: AlarmOperations
) -> None:
    store_rules(ops, HOT)
    report(ops, 7, HOT, "31")
    report(ops, 8, HOT, "31")
    report(ops, 9, HOT, "31")
    arn = "arn:aws:iam::123456789012:user/operator"

    first = call(service, "POST", "/alarms/7.hot/acknowledge")
    second = call(service, "POST", "/alarms/7.hot/acknowledge")
    call(service, "POST", "/alarms/8.hot/acknowledge", caller={"iam": {"userArn": arn}})
    unsigned = call(service, "POST", "/alarms/9.hot/acknowledge", body="{}", caller={})

    assert first[0] == 200 and (first[1]["alarm_id"], first[1]["state"], first[1]["version"]) == (
        "7.hot",
        "ACKNOWLEDGED",
        2,
    )
    assert second == (409, {"error": "alarm 7.hot is ACKNOWLEDGED: acknowledge applies to ACTIVE, LATCHED"})
    assert [t.by for t in ops.alarms.get(7, "hot").made] == ["local"]  # type: ignore[union-attr]
    assert [t.by for t in ops.alarms.get(8, "hot").made] == [arn]  # type: ignore[union-attr]
    assert unsigned[0] == 200 and [t.by for t in ops.alarms.get(9, "hot").made] == ["unknown"]  # type: ignore[union-attr]
    assert ops.alarms.get(7, "hot").version == 2  # type: ignore[union-attr]  # the refusal wrote nothing


def test_each_action_answers_the_new_state_and_refuses_what_the_state_does_not_allow(
    service: api.ApiService, ops: AlarmOperations
) -> None:
    store_rules(ops, HOT)
    report(ops, 7, HOT, "31")

    steps = [
        (action, call(service, "POST", f"/alarms/7.hot/{action}"))
        for action in ("reset", "reset", "disable", "acknowledge", "enable", "enable")
    ]

    assert [(action, status, body.get("state") or body["error"]) for action, (status, body) in steps] == [
        ("reset", 200, "NORMAL"),
        ("reset", 409, "alarm 7.hot is NORMAL: reset applies to ACTIVE, ACKNOWLEDGED, LATCHED, SNOOZED"),
        ("disable", 200, "DISABLED"),
        ("acknowledge", 409, "alarm 7.hot is DISABLED: acknowledge applies to ACTIVE, LATCHED"),
        ("enable", 200, "NORMAL"),
        ("enable", 409, "alarm 7.hot is NORMAL: enable applies to DISABLED"),
    ]


@pytest.mark.parametrize(
    ("method", "target", "status", "error"),
    [
        ("POST", "/alarms/7.nosuch/acknowledge", 404, "no rule named nosuch watches sensor 7"),
        ("GET", "/alarms/7.nosuch/history", 404, "no rule named nosuch watches sensor 7"),
        ("POST", "/alarms/8.hot/acknowledge", 404, "no rule named hot watches sensor 8"),
        ("POST", "/alarms/hot/acknowledge", 400, "an alarm id is <sensor_id>.<rule name>, such as 7.hot; got 'hot'"),
        ("GET", "/alarms/7.9hot/history", 400, "an alarm id is <sensor_id>.<rule name>, such as 7.hot; got '7.9hot'"),
        ("POST", "/alarms/7.hot/explode", 404, None),
        ("GET", "/alarms/7.hot/acknowledge", 405, "GET is not allowed here: only POST"),
        ("POST", "/alarms", 405, "POST is not allowed here: only GET"),
        ("DELETE", "/alarms/7.hot/history", 405, "DELETE is not allowed here: only GET"),
    ],
)
def test_unknown_alarms_bad_ids_and_wrong_methods_are_answered_in_json(
    service: api.ApiService, ops: AlarmOperations, method: str, target: str, status: int, error: str | None
) -> None:
    store_rules(ops, {**HOT, "sensors": [7]})
    got_status, body = call(service, method, target)
    assert got_status == status and set(body) == {"error"}
    if error is not None:
        assert body["error"] == error
    else:
        assert body["error"].startswith("no such route: ") and "POST /alarms/{id}/acknowledge|snooze" in body["error"]


def test_a_snooze_takes_minutes_or_an_instant_with_an_offset(service: api.ApiService, ops: AlarmOperations) -> None:
    store_rules(ops, HOT)
    report(ops, 7, HOT, "31")
    before = datetime.now(UTC)
    by_minutes = call(service, "POST", "/alarms/7.hot/snooze", json.dumps({"minutes": 30}))
    after = datetime.now(UTC)
    moment = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=250_000)
    paris = moment.astimezone(ZoneInfo("Europe/Paris")).isoformat()  # 2026-...T...+01:00 (or +02:00)
    by_instant = call(service, "POST", "/alarms/8.hot/snooze", json.dumps({"until": paris}))

    assert by_minutes[0] == 200 and by_minutes[1]["state"] == "SNOOZED"
    until = datetime.fromisoformat(by_minutes[1]["snoozed_until"])
    assert before + timedelta(minutes=30) - timedelta(milliseconds=1) <= until <= after + timedelta(minutes=30)
    assert by_instant[0] == 200 and by_instant[1]["state"] == "SNOOZED"
    assert by_instant[1]["snoozed_until"] == moment.strftime("%Y-%m-%dT%H:%M:%S.250000Z")  # the instant, in UTC
    assert ops.alarms.get(8, "hot").snoozed_until == int(moment.timestamp()) * MICROS + 250_000  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (None, 'snooze takes "until" (an ISO-8601 time with an offset) or "minutes", one of them'),
        ("{}", 'snooze takes "until" (an ISO-8601 time with an offset) or "minutes", one of them'),
        (
            '{"minutes": 5, "until": "2099-01-01T00:00:00Z"}',
            'snooze takes "until" (an ISO-8601 time with an offset) or "minutes", one of them',
        ),
        ('{"minutes": 0}', "minutes must be a whole number from 1 to 43200, got 0"),
        ('{"minutes": 43201}', "minutes must be a whole number from 1 to 43200, got 43201"),
        ('{"minutes": true}', "minutes must be a whole number from 1 to 43200, got true"),
        ('{"minutes": "5"}', 'minutes must be a whole number from 1 to 43200, got "5"'),
        ('{"minutes": 1.5}', "minutes must be a whole number from 1 to 43200, got 1.5"),
        (
            '{"until": "2099-01-01T00:00:00"}',
            'until must be an ISO-8601 time with an offset (2024-05-01T12:00:00Z), got "2099-01-01T00:00:00"',
        ),
        (
            '{"until": "tomorrow"}',
            'until must be an ISO-8601 time with an offset (2024-05-01T12:00:00Z), got "tomorrow"',
        ),
        ('{"until": "2020-01-01T00:00:00Z"}', "until must be in the future, within 30 days, got 2020-01-01T00:00:00Z"),
        ('{"until": "2099-01-01T00:00:00Z"}', "until must be in the future, within 30 days, got 2099-01-01T00:00:00Z"),
        ('{"for": 5}', 'snooze takes "until" or "minutes", not \'for\''),
        ("[30]", 'snooze takes a JSON object: {"until": "2024-05-01T12:00:00Z"} or {"minutes": 30}'),
        ("{minutes: 5}", "the body must be JSON"),
    ],
)
def test_a_bad_snooze_body_is_a_400_and_moves_nothing(
    service: api.ApiService, ops: AlarmOperations, body: str | None, error: str
) -> None:
    store_rules(ops, HOT)
    report(ops, 7, HOT, "31")
    assert call(service, "POST", "/alarms/7.hot/snooze", body) == (400, {"error": error})
    assert ops.alarms.get(7, "hot").state is State.ACTIVE  # type: ignore[union-attr]


def test_an_action_without_a_body_refuses_one(service: api.ApiService, ops: AlarmOperations) -> None:
    store_rules(ops, HOT)
    report(ops, 7, HOT, "31")
    assert call(service, "POST", "/alarms/7.hot/acknowledge", '{"minutes": 5}') == (
        400,
        {"error": "acknowledge takes no body (or {})"},
    )
    assert call(service, "POST", "/alarms/7.hot/acknowledge", "{}")[1]["state"] == "ACKNOWLEDGED"


def test_the_history_is_newest_first_exact_paginated_and_bound_to_its_alarm(
    service: api.ApiService, ops: AlarmOperations, ddb: Any, tables: Tables, engine_endpoint: str
) -> None:
    reader = StreamReader(engine_endpoint, tables.table)
    store_rules(ops, HOT)
    exact = "30.000000000000000000000000000000001"  # 35 significant digits: no float holds it
    report(ops, 7, HOT, exact)
    ops.act("7.hot", "acknowledge", by="arn:aws:iam::1:user/a")
    ops.act("7.hot", "reset", by="arn:aws:iam::1:user/b")
    report(ops, 8, HOT, "31")
    announced = announce(ddb, tables, reader)

    status, body = call(service, "GET", "/alarms/7.hot/history")
    pages, token = [], None
    for _ in range(5):
        got = call(service, "GET", "/alarms/7.hot/history?limit=1" + (f"&token={token}" if token else ""))[1]
        pages.append(got["transitions"])
        token = got.get("next_token")
        if token is None:
            break
    _, other = call(service, "GET", "/alarms/8.hot/history?limit=1")
    raw = service.handle_event(event_of("GET", "/alarms/7.hot/history", {"host": "t"}, "127.0.0.1")).response()

    assert len(announced) == 4
    assert status == 200 and body["alarm_id"] == "7.hot" and "next_token" not in body
    history = body["transitions"]
    assert [(t["previous"], t["state"], t["by"]) for t in history] == [
        ("ACKNOWLEDGED", "NORMAL", "arn:aws:iam::1:user/b"),
        ("ACTIVE", "ACKNOWLEDGED", "arn:aws:iam::1:user/a"),
        ("NORMAL", "ACTIVE", "report"),
    ]
    assert set(history[0]) == {
        "transition_id",
        "previous",
        "state",
        "severity",
        "value",
        "report_time",
        "at",
        "by",
        "cause",
    }
    assert (history[0]["value"], history[0]["report_time"], history[0]["cause"]) == (None, None, "reset#3")
    assert history[2]["value"] == Decimal(exact) and f'"value":{exact},' in raw["body"]
    assert history[2]["report_time"].endswith("Z") and history[2]["at"] >= history[2]["report_time"]
    of_seven = [e["transition_id"] for e in announced if e["alarm_id"] == "7.hot"]
    assert [t["transition_id"] for t in history] == of_seven[::-1]
    assert [p for p in pages if p] == [[t] for t in history]
    assert call(service, "GET", f"/alarms/7.hot/history?token={other['next_token']}") == (
        400,
        {"error": "token is not one this API gave for this request; start again without it"},
    )
    assert call(service, "GET", "/alarms/9.hot/history") == (200, {"alarm_id": "9.hot", "transitions": []})


def test_the_local_server_takes_an_actions_body_over_http(server: LocalApi, ddb: Any, tables: Tables) -> None:
    ops = AlarmOperations(
        rules=RuleStore(ledger_table_name=tables.ledger, client=ddb),
        alarms=AlarmStore(table_name=tables.table, client=ddb),
    )
    store_rules(ops, HOT)
    request = urllib.request.Request(
        f"{server.url}/alarms/7.hot/snooze",
        data=b'{"minutes": 15}',
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        snoozed = json.loads(answer.read())
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(urllib.request.Request(f"{server.url}/alarms/7.hot/acknowledge", method="POST"))

    assert (snoozed["alarm_id"], snoozed["state"]) == ("7.hot", "SNOOZED")
    assert refused.value.code == 409
    assert ops.alarms.get(7, "hot").made[-1].by == "local"  # type: ignore[union-attr]
