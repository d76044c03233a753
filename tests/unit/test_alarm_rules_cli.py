"""``sensor-digest alarms`` refusing what it cannot apply, without an engine: a rule file that is YAML,
not JSON, or breaks a rule is refused in one line before any table is looked for (no pipeline runs
here: a command that went on to the target would fail with "no pipeline to act on" instead); options
that are no rule are usage errors; what applying a rule set would change; who the operator is."""

from __future__ import annotations

import getpass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sensor_digest.alarms.rules import AlarmRule, RuleSet
from sensor_digest_tools.cli.app import app
from sensor_digest_tools.ops import alarms as ops
from sensor_digest_tools.ops.targets import Target

runner = CliRunner()
HOT = '{"name": "hot", "reading": "temperature", "sensors": "*", "condition": "above", "threshold": 30}'


def invoke(*args: str) -> object:
    return runner.invoke(app, ["alarms", *args], catch_exceptions=False)


@pytest.mark.parametrize(
    ("name", "text", "error"),
    [
        (
            "rules.yaml",
            "rules:\n  - name: hot\n",
            "rules.yaml is YAML, which is not read: convert it to JSON first (`yq -o json rules.yaml > rules.json`)",
        ),
        ("rules.YML", "rules: []\n", "rules.YML is YAML, which is not read: convert it to JSON first"),
        ("rules.json", "{rules: []}", "rules.json: not JSON: Expecting property name enclosed in double quotes"),
        ("rules.json", '{"rules": "hot"}', 'rules.json: a rule file holds a list of rules, or {"rules": [...]}'),
        (
            "rules.json",
            f'[{HOT}, {{"name": "cold", "reading": "temperature", "sensors": "*", "condition": "below"}}]',
            "rules.json: rule cold: condition below needs a threshold",
        ),
        ("rules.json", f"[{HOT}, {HOT}]", "rules.json: rule hot is given twice"),
        (
            "rules.json",
            HOT.replace('"threshold": 30', '"threshold": 30, "threshold": 31'),
            "field 'threshold' is given twice",
        ),
        ("rules.json", HOT.replace("30", "NaN"), "rules.json: NaN is no JSON number"),
        ("rules.json", "[" * 100_000, "rules.json: not JSON rules: nested too deep"),
        ("rules.json", b"\xff\xfe[]", "rules.json is not UTF-8 text"),
    ],
)
def test_a_rule_file_that_cannot_be_applied_is_refused_in_one_line_before_any_table(
    tmp_path: Path, name: str, text: str | bytes, error: str
) -> None:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)

    result = invoke("apply", str(path))

    assert result.exit_code == 1 and result.stdout == ""  # type: ignore[attr-defined]
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1  # type: ignore[attr-defined]
    assert error in result.stderr  # type: ignore[attr-defined]
    assert "no pipeline to act on" not in result.stderr  # type: ignore[attr-defined]


def test_a_rule_file_that_is_not_there_is_said_so(tmp_path: Path) -> None:
    result = invoke("apply", str(tmp_path / "none.json"))
    assert result.exit_code == 1  # type: ignore[attr-defined]
    assert result.stderr == f"error: {tmp_path / 'none.json'} cannot be read: No such file or directory\n"  # type: ignore[attr-defined]


def test_a_good_rule_file_goes_on_to_the_target(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text(f'{{"rules": [{HOT}]}}')
    result = invoke("apply", str(path), "--dry-run")
    assert result.exit_code == 1 and "no pipeline to act on" in result.stderr  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--name", "hot", "--reading", "t", "--sensors", "*", "--above", "abc"], "'abc' is no number"),
        (["--name", "hot", "--reading", "t", "--sensors", "*", "--above", "0x1F"], "'0x1F' is no number"),
        (["--name", "hot", "--reading", "t", "--sensors", "*", "--above", "1", "--below", "0"], "give one of --above"),
        (["--name", "hot", "--reading", "t", "--sensors", "*"], "give one of --above, --below, --outside (got none)"),
        (["--name", "hot", "--reading", "t", "--sensors", "7,x", "--above", "1"], "'x' is no sensor id"),
        (["--name", "hot", "--reading", "t", "--above", "1"], "--sensors is required"),
        (["--name", "hot", "--reading", "t", "--sensors", "*", "--outside", "10"], "'10' is no LOW,HIGH"),
        (
            [
                "--name",
                "h",
                "--reading",
                "t",
                "--sensors",
                "*",
                "--above",
                "1",
                "--for-seconds",
                "5",
                "--for-reports",
                "2",
            ],
            "give --for-seconds or --for-reports, not both",
        ),
        (["--rule-json", HOT, "--name", "hot"], "the rule is the JSON alone: drop --name"),
        (["--rule-json", HOT, "--latch"], "the rule is the JSON alone: drop --latch"),
        (["--rule-json", "{name: 1}"], "not JSON: Expecting property name"),
    ],
)
def test_set_options_that_are_no_rule_are_usage_errors(args: list[str], error: str) -> None:
    result = invoke("set", *args)
    assert result.exit_code == 2 and error in result.stderr  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["--name", "hot", "--reading", "temperature", "--sensors", "*", "--above", "30", "--clear", "31"],
            "error: rule hot: clear must be at or below the threshold 30, got 31\n",
        ),
        (
            ["--name", "hot", "--reading", "temperature", "--sensors", "*", "--outside", "20,10"],
            "error: rule hot: band must have low <= high, got [20, 10]\n",
        ),
        (
            ["--name", "hot", "--reading", "temperature", "--sensors", "*", "--above", "3", "--severity", "9"],
            "error: rule hot: severity must be a whole number from 1 to 5, got 9\n",
        ),
        (
            ["--name", "9lives", "--reading", "temperature", "--sensors", "*", "--above", "3"],
            "error: a rule's name must",
        ),
        (
            ["--rule-json", HOT.replace('"sensors": "*"', '"sensors": "*", "colour": 1')],
            "error: rule hot: unknown field 'colour' (fields: band, clear,",
        ),
    ],
)
def test_a_rule_the_rules_refuse_is_one_line_with_its_reason_before_any_table(args: list[str], error: str) -> None:
    result = invoke("set", *args)
    assert result.exit_code == 1 and result.stdout == ""  # type: ignore[attr-defined]
    assert result.stderr.startswith(error.rstrip("\n")) and result.stderr.count("\n") == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["snooze", "7.hot"], "give --minutes N or --until TIME, one of them"),
        (["snooze", "7.hot", "--minutes", "5", "--until", "2099-01-01T00:00:00Z"], "one of them"),
        (["snooze", "7.hot", "--until", "2099-01-01T00:00:00"], "is no ISO-8601 time with an offset"),
        (["snooze", "7.hot", "--minutes", "0"], "Invalid value for '--minutes'"),
        (["acknowledge", "hot"], "an alarm id is <sensor_id>.<rule name>, such as 7.hot; got 'hot'"),
        (["show", "7.9x"], "an alarm id is <sensor_id>.<rule name>"),
        (["list", "--state", "normal"], "NORMAL alarms are not listed: ask a sensor's"),
        (["list", "--state", "LOUD"], "'LOUD' is none of ACTIVE, LATCHED, ACKNOWLEDGED, SNOOZED, DISABLED"),
    ],
)
def test_alarm_options_are_checked_before_any_table(args: list[str], error: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2 and error in result.stderr  # type: ignore[attr-defined]


def rules(*raw: str) -> RuleSet:
    return ops.parse_rules_text("[" + ", ".join(raw) + "]")


def test_what_applying_a_rule_set_changes_is_named_by_rule() -> None:
    cold = HOT.replace('"hot"', '"cold"').replace('"above"', '"below"')
    warm = HOT.replace('"hot"', '"warm"')
    before = rules(HOT, cold)
    after = rules(HOT.replace("30", "31"), warm)

    change = ops.changes(before, after)

    assert (change.added, change.changed, change.removed, change.unchanged) == (("warm",), ("hot",), ("cold",), ())
    assert change.words() == "added warm; changed hot; removed cold"
    assert ops.changes(before, rules(cold, HOT.replace("30", "30.0"))).words() == "nothing changes"  # same rule
    assert not ops.changes(before, before).any
    assert AlarmRule.parse(ops.load_json(HOT.replace("30", "30.10"))).band[0].as_tuple().digits == (3, 0, 1, 0)


def test_the_operator_is_the_os_user_locally_and_the_callers_arn_on_aws(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    monkeypatch.setattr(getpass, "getuser", lambda: "ada")
    arn = "arn:aws:sts::123456789012:assumed-role/Ops/ada"
    asked: list[Target] = []

    def caller(target: Target) -> str | None:
        asked.append(target)
        return arn

    local = Target(table="T", dynamodb_endpoint="http://127.0.0.1:1")
    aws = Target(table="T", region="eu-west-1", origin="stack 'S'")

    assert ops.operator_name(local, caller_arn=caller) == "ada" and asked == []  # no STS call for a local target
    assert ops.operator_name(aws, caller_arn=caller) == arn and asked == [aws]
    assert ops.operator_name(aws, caller_arn=lambda _: None) == "ada"  # STS unreachable: the user name
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:1")
    assert ops.operator_name(aws, caller_arn=caller) == "ada" and len(asked) == 1
