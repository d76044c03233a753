"""``alarms ...``: alarm rules on readings, and the alarms they raise.

The rules (``apply`` a JSON file whole, ``set`` one, ``rules``, ``show-rule``, ``delete``) are one
ledger item applied at once (``alarms/store.py``); the alarms (``list``, ``show``, ``sensor``) and the
operator's actions on them (``acknowledge``, ``snooze``, ``reset``, ``disable``, ``enable``) are the
read API's (``sensor_digest.api.alarms``: the same JSON with ``--json``), read and written on the
target's tables. ``events`` reads the alarm events a local pipeline (``up``) kept. The operator
recorded is ``ops.alarms.operator_name``'s: the OS user locally, the caller's IAM ARN on AWS.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from sensor_digest import names
from sensor_digest.alarms.model import LISTED_ORDER, Alarm, State, Transition, iso
from sensor_digest.alarms.operations import MAX_SNOOZE_SECONDS, BadAlarmId, parse_alarm_id
from sensor_digest.alarms.rules import EVERY_SENSOR, MAX_SENSOR_ID, AlarmRule, InvalidRule, RuleSet
from sensor_digest.api.alarms import alarm_json, transition_json
from sensor_digest_tools.cli import render
from sensor_digest_tools.cli.options import PLAIN, AsJson, DryRun, LedgerOpt, Region, Stack, TableOpt, Yes
from sensor_digest_tools.cli.output import (
    confirm,
    console,
    errors,
    fail,
    note,
    print_exact_json,
    print_json,
    resolve_target,
    say,
)
from sensor_digest_tools.local.event_bus import read_events
from sensor_digest_tools.ops import alarms as ops
from sensor_digest_tools.ops.targets import Target, running_local

RULES_REACH_INGEST = (
    "ingest evaluates the new rules within a minute (each container reads them at most once a minute); "
    "reports counted before then are not evaluated under them"
)

alarms_app = typer.Typer(
    help="Alarm rules on readings, and the alarms they raise: apply rules, list alarms, act on them.",
    no_args_is_help=True,
    **PLAIN,
)

NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
"""A threshold as JSON writes a number (ASCII digits only), read as the exact decimal it is."""
NUMBER_TEXT_MAX = 64
SENSOR_IDS_MAX_TEXT = 2_000
HISTORY_SHOWN = 20
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _alarm_id(value: str) -> str:
    try:
        parse_alarm_id(value)
    except BadAlarmId as bad:
        raise typer.BadParameter(bad.reason) from None
    return value


AlarmId = Annotated[
    str, typer.Argument(callback=_alarm_id, metavar="ALARM_ID", help="<sensor_id>.<rule>, such as 7.hot.")
]
RuleName = Annotated[str, typer.Argument(metavar="NAME", help="The rule's name.")]


def _target(stack: str | None, region: str | None, table: str | None, ledger: str | None) -> Target:
    return resolve_target(stack, region, table=table, ledger=ledger).need("table", "ledger")


def _state_option(value: str | None) -> State | None:
    if value is None:
        return None
    wanted = value.upper()
    if wanted == State.NORMAL.value:
        raise typer.BadParameter("NORMAL alarms are not listed: ask a sensor's, `sensor-digest alarms sensor ID`")
    if wanted not in {s.value for s in LISTED_ORDER}:
        raise typer.BadParameter(f"{value!r} is none of {', '.join(s.value for s in LISTED_ORDER)}")
    return State(wanted)


# -- the rules ---------------------------------------------------------------------------------------


@alarms_app.command("apply")
def alarms_apply(
    file: Annotated[Path, typer.Argument(metavar="FILE", help='A JSON rule file: {"rules": [...]} or a list.')],
    dry_run: DryRun = False,
    as_json: AsJson = False,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """Replace the whole rule set with a file's rules, at once: a file that breaks a rule applies
    nothing. --dry-run says which rules it would add, change and remove. JSON only (YAML: convert it
    with `yq -o json`)."""
    with errors():
        wanted = ops.read_rule_file(file)  # before any table: a bad file needs no pipeline to be refused
        target = _target(stack, region, table, ledger)
        store = ops.operations(target).rules
        if dry_run:
            before = store.load()
            after = before
        else:
            before, after = ops.change_rules(store, lambda _: wanted, by=ops.operator_name(target))
    change = ops.changes(before, wanted)
    if as_json:
        applied = not dry_run and change.any
        print_json({"dry_run": dry_run, "applied": applied, "version": after.version, **change.as_json()})
        return
    if dry_run:
        say(f"would apply {file}: {change.words()}; dry run, nothing applied (rules at version {before.version})")
    elif not change.any:
        say(f"{file}: nothing changes; the rules stay at version {after.version}")
    else:
        say(f"applied {file}: {change.words()}; the rules are at version {after.version}")
        note(RULES_REACH_INGEST)


def _number(text: str, option: str) -> Decimal:
    if len(text) > NUMBER_TEXT_MAX or NUMBER.fullmatch(text) is None:
        raise typer.BadParameter(f"{render.data(text[:40]).plain!r} is no number (30, -2.5, 1e3)", param_hint=option)
    return Decimal(text)


def _band(text: str, option: str) -> list[Decimal]:
    low, comma, high = text.partition(",")
    if not comma:
        raise typer.BadParameter(f"{render.data(text[:40]).plain!r} is no LOW,HIGH (10,30)", param_hint=option)
    return [_number(low.strip(), option), _number(high.strip(), option)]


def _sensors(text: str) -> str | list[int]:
    if text.strip() == EVERY_SENSOR:
        return EVERY_SENSOR
    if len(text) > SENSOR_IDS_MAX_TEXT:
        raise typer.BadParameter(f"{len(text):,} characters: too many sensor ids for one rule", param_hint="--sensors")
    ids: list[int] = []
    for given in text.split(","):
        part = given.strip()
        if not part.isascii() or not part.isdigit() or int(part) > MAX_SENSOR_ID:
            raise typer.BadParameter(
                f"{render.data(part[:40]).plain!r} is no sensor id: give '*' (every sensor) or ids such as 7,8",
                param_hint="--sensors",
            )
        ids.append(int(part))
    return ids


def _rule_from_json(text: str) -> Any:
    try:
        return ops.load_json(text)
    except InvalidRule as bad:
        raise typer.BadParameter(bad.reason, param_hint="--rule-json") from None


@alarms_app.command("set")
def alarms_set(
    name: Annotated[str | None, typer.Option(help="The rule's name (a letter, then letters, digits, _ or -).")] = None,
    reading: Annotated[str | None, typer.Option(help="The reading it watches (temperature).")] = None,
    sensors: Annotated[str | None, typer.Option(help="'*' (every sensor) or sensor ids: 7,8.")] = None,
    above: Annotated[str | None, typer.Option(help="Breach above this value.")] = None,
    below: Annotated[str | None, typer.Option(help="Breach below this value.")] = None,
    outside: Annotated[str | None, typer.Option(metavar="LOW,HIGH", help="Breach outside this band.")] = None,
    clear: Annotated[
        str | None, typer.Option(help="Where it clears: a value (--above/--below), LOW,HIGH (--outside).")
    ] = None,
    for_seconds: Annotated[int | None, typer.Option(help="Active once a breach spans this many seconds.")] = None,
    for_reports: Annotated[int | None, typer.Option(help="Active once this many reports in a row breach.")] = None,
    severity: Annotated[int | None, typer.Option(help="1 to 5 (default 3).")] = None,
    latch: Annotated[bool, typer.Option("--latch", help="Stay LATCHED after it clears, until acknowledged.")] = False,
    description: Annotated[str | None, typer.Option(help="Words for people.")] = None,
    rule_json: Annotated[str | None, typer.Option(help="The whole rule as JSON, instead of the options.")] = None,
    as_json: AsJson = False,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """Add one rule, or replace the rule of that name; the other rules stay as they are."""
    given = {
        "--name": name,
        "--reading": reading,
        "--sensors": sensors,
        "--above": above,
        "--below": below,
        "--outside": outside,
        "--clear": clear,
        "--for-seconds": for_seconds,
        "--for-reports": for_reports,
        "--severity": severity,
        "--description": description,
    }
    if rule_json is not None:
        beside = [option for option, value in given.items() if value is not None] + (["--latch"] if latch else [])
        if beside:
            raise typer.BadParameter(f"the rule is the JSON alone: drop {', '.join(beside)}", param_hint="--rule-json")
        raw = _rule_from_json(rule_json)
    else:
        raw = _rule_from_options(given, latch)
    with errors():
        rule = AlarmRule.parse(raw)
        target = _target(stack, region, table, ledger)
        before, after = ops.change_rules(
            ops.operations(target).rules, lambda rules: rules.replaced(rule), by=ops.operator_name(target)
        )
    change = "added" if before.named(rule.name) is None else "unchanged" if before is after else "changed"
    if as_json:
        print_exact_json({"rule": rule.document(), "change": change, "version": after.version})
        return
    say(f"rule {rule.name} {change}; the rules are at version {after.version}")
    note(RULES_REACH_INGEST)


def _rule_from_options(given: dict[str, Any], latch: bool) -> dict[str, Any]:
    for option in ("--name", "--reading", "--sensors"):
        if given[option] is None:
            more = " ('*': every sensor)" if option == "--sensors" else ""
            raise typer.BadParameter(
                f"{option} is required (or the whole rule as --rule-json){more}", param_hint=option
            )
    conditions = [option for option in ("--above", "--below", "--outside") if given[option] is not None]
    if len(conditions) != 1:
        shown = ", ".join(conditions) if conditions else "none"
        raise typer.BadParameter(
            f"give one of --above, --below, --outside (got {shown})", param_hint="--above/--below/--outside"
        )
    if given["--for-seconds"] is not None and given["--for-reports"] is not None:
        raise typer.BadParameter("give --for-seconds or --for-reports, not both", param_hint="--for-seconds")
    condition = conditions[0]
    raw: dict[str, Any] = {
        "name": given["--name"],
        "reading": given["--reading"],
        "sensors": _sensors(given["--sensors"]),
        "condition": condition.removeprefix("--"),
    }
    if condition == "--outside":
        raw["band"] = _band(given["--outside"], "--outside")
        if given["--clear"] is not None:
            raw["clear"] = _band(given["--clear"], "--clear")
    else:
        raw["threshold"] = _number(given[condition], condition)
        if given["--clear"] is not None:
            raw["clear"] = _number(given["--clear"], "--clear")
    for option, field in (
        ("--for-seconds", "for_seconds"),
        ("--for-reports", "for_reports"),
        ("--severity", "severity"),
        ("--description", "description"),
    ):
        if given[option] is not None:
            raw[field] = given[option]
    raw["latch"] = latch
    return raw


def _condition_text(rule: AlarmRule) -> str:
    low, high = rule.band
    if rule.condition == "outside":
        return f"outside {low}..{high}"
    return f"{rule.condition} {low}"


def _clear_text(rule: AlarmRule) -> str:
    low, high = rule.clear
    return f"{low}..{high}" if rule.condition == "outside" else str(low)


def _lasting(rule: AlarmRule) -> str:
    if rule.for_seconds:
        return f"{rule.for_seconds} s"
    return f"{rule.for_reports} reports" if rule.for_reports > 1 else "first report"


def _rules_table(rules: RuleSet) -> Table:
    out = render.titled(f"{len(rules.rules)} alarm rule(s), version {rules.version}")
    for column in ("name", "reading", "sensors", "condition", "clear", "for", "severity", "latch"):
        out.add_column(column)
    for r in rules.rules:
        sensors = "every sensor" if r.sensors is None else ",".join(map(str, r.sensors))
        cells = (r.name, r.reading, sensors, _condition_text(r), _clear_text(r), _lasting(r), r.severity, r.latch)
        out.add_row(*(render.data(c) for c in cells))
    return out


@alarms_app.command("rules")
def alarms_rules(
    as_json: AsJson = False,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """Every alarm rule, and the rule set's version."""
    with errors():
        rules = ops.operations(_target(stack, region, table, ledger)).rules.load()
    if as_json:
        print_exact_json({"version": rules.version, **rules.document()})
        return
    if not rules.rules:
        note("no alarm rules: apply a file of them with `sensor-digest alarms apply rules.json`")
        return
    console.print(_rules_table(rules))


@alarms_app.command("show-rule")
def alarms_show_rule(
    name: RuleName,
    as_json: AsJson = False,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """One rule, as written (exit code 1 when there is none of that name)."""
    with errors():
        rules = ops.operations(_target(stack, region, table, ledger)).rules.load()
    rule = rules.named(name)
    if rule is None:
        fail(f"no alarm rule named {name}{_known(rules)}")
    if as_json:
        print_exact_json(rule.document())
        return
    out = render.titled(f"alarm rule {rule.name} (rules version {rules.version})")
    out.add_column("field")
    out.add_column("value")
    for key, value in rule.document().items():
        shown = ",".join(map(str, value)) if isinstance(value, list) else value
        out.add_row(render.data(key), render.data(shown))
    console.print(out)


def _known(rules: RuleSet) -> str:
    names = [r.name for r in rules.rules]
    if not names:
        return " (there are no rules)"
    return f" (rules: {', '.join(names[:10])}{', ...' if len(names) > 10 else ''})"


@alarms_app.command("delete")
def alarms_delete(
    name: RuleName,
    yes: Yes = False,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """Delete one rule; asks first unless --yes. Its alarms keep their state (reset one to end it)."""

    def without(rules: RuleSet) -> RuleSet:
        if rules.named(name) is None:
            raise InvalidRule(f"no alarm rule named {name}{_known(rules)}")
        return rules.without(name)

    with errors():
        target = _target(stack, region, table, ledger)
        store = ops.operations(target).rules
        without(store.load())  # a rule that is not there is said before anyone is asked
        confirm(f"delete alarm rule {name}", yes=yes)
        _, after = ops.change_rules(store, without, by=ops.operator_name(target))
    say(
        f"deleted alarm rule {name}; the rules are at version {after.version} (its alarms keep their state: "
        "`sensor-digest alarms reset` ends one)"
    )


# -- the alarms ---------------------------------------------------------------------------------------


def _time(micros: int | None) -> str:
    return "" if micros is None else iso(micros)


def _alarms_table(title: str, alarms: list[Alarm]) -> Table:
    out = render.titled(title)
    for column in ("alarm", "state", "severity", "reading", "since", "snoozed until", "version"):
        out.add_column(column)
    for a in alarms:
        cells = (a.id, a.state.value, a.severity, a.reading, _time(a.since), _time(a.snoozed_until), a.version)
        out.add_row(*(render.data(c) for c in cells))
    return out


@alarms_app.command("list")
def alarms_list(
    state: Annotated[
        str | None,
        typer.Option(help="Only this state: ACTIVE, LATCHED, ACKNOWLEDGED, SNOOZED or DISABLED (default: all)."),
    ] = None,
    as_json: AsJson = False,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """The alarms that are not NORMAL, ACTIVE first (as GET /alarms)."""
    wanted = _state_option(state)
    with errors():
        store = ops.operations(_target(stack, region, table, ledger)).alarms
        found = list(ops.every_alarm(store, LISTED_ORDER if wanted is None else (wanted,)))
    if as_json:
        print_json({"alarms": [alarm_json(a) for a in found]})
        return
    if not found:
        note(f"no alarm is {wanted.value if wanted else 'other than NORMAL'}")
        return
    console.print(_alarms_table(f"{len(found)} alarm(s) {wanted.value if wanted else 'not NORMAL'}", found))


def _history_table(title: str, transitions: list[Transition]) -> Table:
    out = render.titled(title)
    for column in ("at", "from", "to", "value", "report time", "by", "cause"):
        out.add_column(column)
    for t in transitions:
        value = "" if t.value is None else format(t.value, "f")
        cells = (iso(t.at), t.previous.value, t.state.value, value, _time(t.report_time), t.by, t.cause)
        out.add_row(*(render.data(c) for c in cells))
    return out


@alarms_app.command("show")
def alarms_show(
    alarm_id: AlarmId,
    limit: Annotated[int, typer.Option(min=1, max=100, help="Transitions of its history shown, newest first.")] = (
        HISTORY_SHOWN
    ),
    as_json: AsJson = False,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """One alarm: its state, and its history newest first (exit code 1 when no rule watches it)."""
    sensor, rule = parse_alarm_id(alarm_id)
    with errors():
        operations = ops.operations(_target(stack, region, table, ledger))
        alarm = operations.alarm(sensor, rule)
        history, _ = operations.alarms.history(sensor, rule, limit=limit)
    if as_json:
        print_exact_json({"alarm": alarm_json(alarm), "history": [transition_json(t) for t in history]})
        return
    console.print(_alarms_table(f"alarm {alarm.id}", [alarm]))
    if history:
        console.print(_history_table(f"its last {len(history)} transition(s), newest first", history))
    else:
        note(f"alarm {alarm.id} has no transition in its history yet")


@alarms_app.command("sensor")
def alarms_sensor(
    sensor_id: Annotated[int, typer.Argument(min=0, max=MAX_SENSOR_ID, metavar="SENSOR_ID", help="The sensor id.")],
    as_json: AsJson = False,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """Every alarm of a sensor, NORMAL ones included (as GET /sensors/{id}/alarms)."""
    with errors():
        found = ops.operations(_target(stack, region, table, ledger)).of_sensor(sensor_id)
    if as_json:
        print_json({"sensor_id": sensor_id, "alarms": [alarm_json(a) for a in found]})
        return
    if not found:
        note(f"no alarm rule watches sensor {sensor_id}")
        return
    console.print(_alarms_table(f"alarms of sensor {sensor_id}", found))


def _act(
    alarm_id: str,
    action: str,
    where: tuple[str | None, str | None, str | None, str | None],
    *,
    as_json: bool,
    until: int | None = None,
    minutes: int | None = None,
) -> None:
    with errors():
        target = _target(*where)
        alarm = ops.operations(target).act(alarm_id, action, by=ops.operator_name(target), until=until, minutes=minutes)
    if as_json:
        print_json(alarm_json(alarm))
        return
    was = f" (was {alarm.made[-1].previous.value})" if alarm.made else ""
    snoozed = f" until {iso(alarm.snoozed_until)}" if alarm.state is State.SNOOZED and alarm.snoozed_until else ""
    say(f"alarm {alarm.id} is {alarm.state.value}{snoozed}{was}")


def _action(action: str, words: str) -> Callable[..., None]:
    def command(
        alarm_id: AlarmId,
        as_json: AsJson = False,
        stack: Stack = None,
        region: Region = None,
        table: TableOpt = None,
        ledger: LedgerOpt = None,
    ) -> None:
        _act(alarm_id, action, (stack, region, table, ledger), as_json=as_json)

    command.__doc__ = words
    return command


alarms_app.command("acknowledge")(
    _action("acknowledge", "Acknowledge an ACTIVE alarm (ACKNOWLEDGED until it clears) or a LATCHED one (NORMAL).")
)
alarms_app.command("reset")(_action("reset", "Return an alarm to NORMAL, whatever it is but DISABLED."))
alarms_app.command("disable")(_action("disable", "Disable an alarm: no report moves it until it is enabled."))
alarms_app.command("enable")(_action("enable", "Enable a DISABLED alarm again (NORMAL)."))


def _until(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value) if len(value) <= 64 else None
    except ValueError:
        moment = None
    if moment is None or moment.utcoffset() is None:
        raise typer.BadParameter(
            f"{render.data(value[:40]).plain!r} is no ISO-8601 time with an offset (2024-05-01T12:00:00Z)",
            param_hint="--until",
        )
    return (moment - EPOCH) // timedelta(microseconds=1)


@alarms_app.command("snooze")
def alarms_snooze(
    alarm_id: AlarmId,
    minutes: Annotated[
        int | None, typer.Option(min=1, max=MAX_SNOOZE_SECONDS // 60, help="Snooze for this many minutes.")
    ] = None,
    until: Annotated[
        str | None, typer.Option(metavar="TIME", help="Snooze until this ISO-8601 time with an offset (...Z).")
    ] = None,
    as_json: AsJson = False,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """Snooze an alarm (at most 30 days): no report moves it before then; the first one after is
    evaluated as from NORMAL."""
    if (minutes is None) == (until is None):
        raise typer.BadParameter("give --minutes N or --until TIME, one of them", param_hint="--minutes/--until")
    end = _until(until)
    _act(alarm_id, "snooze", (stack, region, table, ledger), as_json=as_json, until=end, minutes=minutes)


@alarms_app.command("events")
def alarms_events(as_json: AsJson = False) -> None:
    """The alarm events the running local pipeline (`sensor-digest up`) put on its bus, oldest first. On
    AWS they go to the account's default event bus (source sensor-digest): an EventBridge rule reads them."""
    with errors():
        target = running_local()  # a stale state file: TargetError, said in one line
        if target is None or not target.local:
            fail(
                "no local pipeline runs: alarm events are kept by `sensor-digest up` only; on AWS they go to the "
                f"default event bus (source {names.ALARM_EVENT_SOURCE})"
            )
        if target.events_file is None:
            fail("the running local pipeline keeps no events file: restart it with this version's `sensor-digest up`")
        events = read_events(Path(target.events_file))
    if as_json:
        print_exact_json(events)
        return
    if not events:
        note("no alarm event yet")
        return
    out = render.titled(f"{len(events)} alarm event(s), oldest first")
    for column in ("time", "alarm", "from", "to", "severity", "value", "report time", "by", "cause"):
        out.add_column(column)
    for e in events:
        d = e.get("detail") or {}
        value = d.get("value")
        cells = (
            e.get("time"),
            d.get("alarm_id"),
            d.get("previous"),
            d.get("state"),
            d.get("severity"),
            "" if value is None else format(value, "f") if isinstance(value, Decimal) else value,
            d.get("report_time") or "",
            d.get("by"),
            d.get("cause"),
        )
        out.add_row(*(render.data(c) for c in cells))
    console.print(out)
