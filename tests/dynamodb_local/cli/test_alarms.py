"""``sensor-digest alarms``: rules and alarms from the command line (cli/alarms.py).

Engines: DynamoDB Local. The rule and alarm commands act on a test's own tables (``--table``,
``--ledger``); the whole path (a rule applied, a report sent, the alarm raised by ingest,
acknowledged, its events read back) runs on a local pipeline as ``sensor-digest up`` runs it, with
moto's SQS server and the bus's events file (``alarmed``)."""

from __future__ import annotations

import getpass
import json
import time
from collections.abc import Iterator
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sensor_digest.alarms.model import Alarm, Report, State, evaluate
from sensor_digest.alarms.operations import AlarmOperations
from sensor_digest.alarms.rules import AlarmRule, RuleSet
from sensor_digest.alarms.store import AlarmStore, RuleStore
from sensor_digest.store import schema
from sensor_digest_tools.local.pipeline import LocalPipeline, PipelineOptions
from sensor_digest_tools.ops.targets import save_local
from tests.support.cli import invoke, wait_for
from tests.support.tables import Tables

HOT = {"name": "hot", "reading": "temperature", "sensors": "*", "condition": "above", "threshold": 30, "clear": 28}
COLD = {"name": "cold", "reading": "humidity", "sensors": [7, 8], "condition": "below", "threshold": 0}
MICROS = 1_000_000


@pytest.fixture(scope="module")
def alarmed(ddb_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalPipeline]:
    """A local pipeline as `sensor-digest up` runs it, keeping its alarm events in a file."""
    events = tmp_path_factory.mktemp("alarms") / "local-pipeline.events.jsonl"
    options = PipelineOptions(sqs="server", time_scale=0.005, events_file=str(events))
    pipeline = LocalPipeline(options, engine_endpoint=ddb_endpoint)
    pipeline.start()
    yield pipeline
    pipeline.stop()


@pytest.fixture
def ops(ddb: Any, tables: Tables) -> AlarmOperations:
    return AlarmOperations(
        rules=RuleStore(ledger_table_name=tables.ledger, client=ddb),
        alarms=AlarmStore(table_name=tables.table, client=ddb),
    )


def where(tables: Tables) -> tuple[str, ...]:
    return ("--table", tables.table, "--ledger", tables.ledger)


def rule_file(tmp_path: Path, name: str, content: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(content))
    return path


def breach(ops: AlarmOperations, sensor: int, value: str = "31") -> Alarm:
    """A report of ``value`` for ``hot`` evaluated and written as ingest does."""
    rule = AlarmRule.parse(HOT)
    alarm = ops.alarms.get(sensor, "hot") or Alarm.fresh(sensor, rule)
    now = int(time.time() * MICROS)
    written = ops.alarms.write(alarm, evaluate(alarm, rule, [Report(now, Decimal(value), f"e{sensor}-{now}")], now))
    time.sleep(0.002)
    return written


def test_apply_replaces_the_rule_set_whole_and_a_dry_run_says_what_would_change(
    tables: Tables, ddb: Any, tmp_path: Path
) -> None:
    first = rule_file(tmp_path, "first.json", {"rules": [HOT, COLD]})
    second = rule_file(
        tmp_path, "second.json", [{**HOT, "threshold": 35}, {**HOT, "name": "warm", "threshold": 25, "clear": 24}]
    )
    broken = rule_file(tmp_path, "broken.json", [HOT, {**COLD, "clear": -5}])
    store = RuleStore(ledger_table_name=tables.ledger, client=ddb)

    applied = invoke("alarms", "apply", str(first), *where(tables))
    dry = invoke("alarms", "apply", str(second), "--dry-run", *where(tables))
    dry_json = invoke("alarms", "apply", str(second), "--dry-run", "--json", *where(tables))
    after_dry = store.load()
    refused = invoke("alarms", "apply", str(broken), *where(tables))
    after_refused = store.load()
    replaced = invoke("alarms", "apply", str(second), *where(tables))
    again = invoke("alarms", "apply", str(second), *where(tables))
    stored = ddb.get_item(TableName=tables.ledger, Key=schema.ledger_key(schema.RULES_KEY))["Item"]

    assert (applied.exit_code, applied.stdout) == (0, f"applied {first}: added cold, hot; the rules are at version 1\n")
    assert dry.stdout == (
        f"would apply {second}: added warm; changed hot; removed cold; dry run, nothing applied (rules at version 1)\n"
    )
    assert json.loads(dry_json.stdout) == {
        "dry_run": True,
        "applied": False,
        "version": 1,
        "added": ["warm"],
        "changed": ["hot"],
        "removed": ["cold"],
        "unchanged": [],
    }
    assert [r.name for r in after_dry.rules] == ["cold", "hot"] and after_dry.version == 1
    assert refused.exit_code == 1 and refused.stderr == (
        f"error: {broken}: rule cold: clear must be at or above the threshold 0, got -5\n"
    )
    assert after_refused == after_dry  # nothing of the file was applied
    assert replaced.stdout == f"applied {second}: added warm; changed hot; removed cold; the rules are at version 2\n"
    assert again.stdout == f"{second}: nothing changes; the rules stay at version 2\n"
    assert [(r.name, r.band[0]) for r in store.load().rules] == [("hot", Decimal(35)), ("warm", Decimal(25))]
    assert stored[schema.CHANGED_BY]["S"] == getpass.getuser()


def test_set_show_rule_rules_and_delete_manage_one_rule_at_a_time(tables: Tables, ddb: Any) -> None:
    options = ("--reading", "temperature", "--sensors", "7, 8", "--outside", "10,30.05", "--clear", "11,29")
    added = invoke(
        "alarms", "set", "--name", "band", *options, "--for-reports", "3", "--severity", "5", "--latch", *where(tables)
    )
    same = invoke(
        "alarms", "set", "--name", "band", *options, "--for-reports", "3", "--severity", "5", "--latch", *where(tables)
    )
    by_json = invoke("alarms", "set", "--rule-json", json.dumps(HOT), "--json", *where(tables))
    changed = invoke("alarms", "set", "--rule-json", json.dumps({**HOT, "for_seconds": 600}), *where(tables))
    shown = invoke("alarms", "show-rule", "band", "--json", *where(tables))
    table = invoke("alarms", "show-rule", "band", *where(tables))
    listed = invoke("alarms", "rules", "--json", *where(tables))
    listed_table = invoke("alarms", "rules", *where(tables))
    missing = invoke("alarms", "show-rule", "nope", *where(tables))
    unconfirmed = invoke("alarms", "delete", "band", *where(tables))
    deleted = invoke("alarms", "delete", "band", "--yes", *where(tables))
    deleted_again = invoke("alarms", "delete", "band", "--yes", *where(tables))

    assert (added.exit_code, added.stdout) == (0, "rule band added; the rules are at version 1\n")
    assert same.stdout == "rule band unchanged; the rules are at version 1\n"
    assert json.loads(by_json.stdout)["change"] == "added" and json.loads(by_json.stdout)["version"] == 2
    assert changed.stdout == "rule hot changed; the rules are at version 3\n"
    assert '"band": [\n    10,\n    30.05\n  ]' in shown.stdout  # exact decimals, as written
    assert json.loads(shown.stdout) == {
        "name": "band",
        "reading": "temperature",
        "sensors": [7, 8],
        "condition": "outside",
        "band": [10, 30.05],
        "clear": [11, 29],
        "for_reports": 3,
        "severity": 5,
        "latch": True,
    }
    assert table.exit_code == 0 and "alarm rule band (rules version 3)" in table.stdout and "7,8" in table.stdout
    assert [r["name"] for r in json.loads(listed.stdout)["rules"]] == ["band", "hot"]
    assert json.loads(listed.stdout)["version"] == 3 and json.loads(listed.stdout)["rules"][1]["for_seconds"] == 600
    assert "outside 10..30.05" in listed_table.stdout and "above 30" in listed_table.stdout
    assert "600 s" in listed_table.stdout and "3 reports" in listed_table.stdout
    assert (missing.exit_code, missing.stderr) == (1, "error: no alarm rule named nope (rules: band, hot)\n")
    assert unconfirmed.exit_code == 1 and "not confirmed: delete alarm rule band" in unconfirmed.stderr
    assert deleted.stdout.startswith("deleted alarm rule band; the rules are at version 4")
    assert (deleted_again.exit_code, deleted_again.stderr) == (1, "error: no alarm rule named band (rules: hot)\n")
    assert [r.name for r in RuleStore(ledger_table_name=tables.ledger, client=ddb).load().rules] == ["hot"]


def test_list_show_and_sensor_read_the_alarms_as_the_api_answers_them(tables: Tables, ops: AlarmOperations) -> None:
    ops.rules.save(RuleSet.of([AlarmRule.parse(HOT), AlarmRule.parse(COLD)]), expected=0, by="test", now=0)
    breach(ops, 9)
    breach(ops, 7)
    ops.act("7.hot", "acknowledge", by="test")
    ops.act("8.hot", "disable", by="test")

    listed = invoke("alarms", "list", "--json", *where(tables))
    disabled = invoke("alarms", "list", "--state", "disabled", *where(tables))
    none = invoke("alarms", "list", "--state", "LATCHED", *where(tables))
    shown = invoke("alarms", "show", "7.hot", "--json", *where(tables))
    shown_table = invoke("alarms", "show", "7.hot", *where(tables))
    unknown = invoke("alarms", "show", "9.cold", *where(tables))
    sensor = invoke("alarms", "sensor", "7", "--json", *where(tables))
    unwatched = invoke("alarms", "sensor", "5", *where(tables))

    assert [(a["alarm_id"], a["state"]) for a in json.loads(listed.stdout)["alarms"]] == [
        ("9.hot", "ACTIVE"),
        ("7.hot", "ACKNOWLEDGED"),
        ("8.hot", "DISABLED"),
    ]
    assert disabled.exit_code == 0 and "1 alarm(s) DISABLED" in disabled.stdout and "8.hot" in disabled.stdout
    assert "9.hot" not in disabled.stdout
    assert (none.exit_code, none.stdout, none.stderr) == (0, "", "no alarm is LATCHED\n")
    assert json.loads(shown.stdout)["alarm"]["state"] == "ACKNOWLEDGED"
    assert json.loads(shown.stdout)["history"] == []  # the log is the announcer's: none ran here
    assert "alarm 7.hot" in shown_table.stdout and "no transition in its history yet" in shown_table.stderr
    assert (unknown.exit_code, unknown.stderr) == (1, "error: no rule named cold watches sensor 9\n")
    assert [(a["alarm_id"], a["state"], a["version"]) for a in json.loads(sensor.stdout)["alarms"]] == [
        ("7.cold", "NORMAL", 0),
        ("7.hot", "ACKNOWLEDGED", 2),
    ]
    assert unwatched.exit_code == 0 and "5.hot" in unwatched.stdout  # the fleet rule watches every sensor


def test_the_actions_name_the_operator_and_refuse_what_the_state_does_not_allow(
    tables: Tables, ops: AlarmOperations
) -> None:
    ops.rules.save(RuleSet.of([AlarmRule.parse(HOT)]), expected=0, by="test", now=0)
    breach(ops, 7)

    acknowledged = invoke("alarms", "acknowledge", "7.hot", *where(tables))
    twice = invoke("alarms", "acknowledge", "7.hot", *where(tables))
    snoozed = invoke("alarms", "snooze", "7.hot", "--minutes", "10", "--json", *where(tables))
    past = invoke("alarms", "snooze", "7.hot", "--until", "2020-01-01T00:00:00+02:00", *where(tables))
    reset = invoke("alarms", "reset", "7.hot", *where(tables))
    disabled = invoke("alarms", "disable", "7.hot", *where(tables))
    enabled = invoke("alarms", "enable", "7.hot", *where(tables))
    until = invoke("alarms", "snooze", "8.hot", "--until", "2099-01-01T00:00:00Z", *where(tables))
    nobody = invoke("alarms", "reset", "7.nope", *where(tables))
    alarm = ops.alarms.get(7, "hot")

    assert (acknowledged.exit_code, acknowledged.stdout) == (0, "alarm 7.hot is ACKNOWLEDGED (was ACTIVE)\n")
    assert (twice.exit_code, twice.stderr) == (
        1,
        "error: alarm 7.hot is ACKNOWLEDGED: acknowledge applies to ACTIVE, LATCHED\n",
    )
    assert json.loads(snoozed.stdout)["state"] == "SNOOZED" and json.loads(snoozed.stdout)["snoozed_until"]
    assert (past.exit_code, past.stderr) == (1, "error: a snooze must end in the future, within 30 days\n")
    assert reset.stdout == "alarm 7.hot is NORMAL (was SNOOZED)\n"
    assert disabled.stdout == "alarm 7.hot is DISABLED (was NORMAL)\n"
    assert enabled.stdout == "alarm 7.hot is NORMAL (was DISABLED)\n"
    assert (until.exit_code, until.stderr) == (1, "error: a snooze must end in the future, within 30 days\n")
    assert (nobody.exit_code, nobody.stderr) == (1, "error: no rule named nope watches sensor 7\n")
    assert alarm is not None and alarm.state is State.NORMAL and alarm.version == 6
    assert [t.by for t in alarm.made] == [getpass.getuser()]


def listed_json(*args: str) -> Any:
    result = invoke("alarms", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout, parse_float=Decimal)


def test_a_rule_applied_raises_an_alarm_from_a_sent_report_and_events_lists_its_transitions(
    alarmed: LocalPipeline, tmp_path: Path
) -> None:
    save_local(alarmed.target)
    rules = rule_file(tmp_path, "rules.json", {"rules": [{**HOT, "sensors": [4242]}]})
    applied = invoke("alarms", "apply", str(rules))  # before any report: ingest reads the rules then
    before = invoke("alarms", "events")

    sent = invoke("send", "--sensor", "4242", "--reading", "temperature=31.5", "--event-id", "cli-alarm-1")
    active = wait_for(lambda: [a for a in listed_json("list")["alarms"] if a["alarm_id"] == "4242.hot"])
    acknowledged = invoke("alarms", "acknowledge", "4242.hot")

    def mine() -> list[dict[str, Any]]:
        found = [e for e in listed_json("events") if e["detail"]["alarm_id"] == "4242.hot"]
        return found if len(found) == 2 else []

    events = wait_for(mine)

    def logged() -> list[dict[str, Any]]:
        found = listed_json("show", "4242.hot")["history"]
        return found if len(found) == 2 else []

    history = wait_for(logged)
    table = invoke("alarms", "events")

    assert applied.exit_code == 0 and sent.exit_code == 0
    assert (before.exit_code, before.stderr) == (0, "no alarm event yet\n")
    assert active[0]["state"] == "ACTIVE"
    assert acknowledged.stdout == "alarm 4242.hot is ACKNOWLEDGED (was ACTIVE)\n"
    assert [(e["source"], e["detail"]["previous"], e["detail"]["state"], e["detail"]["by"]) for e in events] == [
        ("sensor-digest", "NORMAL", "ACTIVE", "report"),
        ("sensor-digest", "ACTIVE", "ACKNOWLEDGED", getpass.getuser()),
    ]
    assert events[0]["detail"]["value"] == Decimal("31.5") and events[1]["detail"]["value"] is None
    assert table.exit_code == 0 and "4242.hot" in table.stdout and "ACKNOWLEDGED" in table.stdout
    assert [t["state"] for t in history] == ["ACKNOWLEDGED", "ACTIVE"]  # the announcer's log, newest first
    assert [t["transition_id"] for t in history] == [e["detail"]["transition_id"] for e in reversed(events)]
    assert Path(str(alarmed.target.events_file)).is_file()


def test_events_are_a_local_pipelines_only(alarmed: LocalPipeline) -> None:
    nothing = invoke("alarms", "events")
    save_local(replace(alarmed.target, events_file=None))
    without_file = invoke("alarms", "events")

    assert (nothing.exit_code, nothing.stderr) == (
        1,
        "error: no local pipeline runs: alarm events are kept by `sensor-digest up` only; on AWS they go to the "
        "default event bus (source sensor-digest)\n",
    )
    assert without_file.exit_code == 1 and "keeps no events file" in without_file.stderr
