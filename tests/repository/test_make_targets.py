"""The Makefile's synth, bootstrap, deploy and destroy: context options given as
``CONTEXT="key=value ..."`` reach the CDK CLI as ``-c`` options, and deploy and destroy act on the
stack CONTEXT names. Read from ``make -n`` (no AWS needed), and synth run for real."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.templates import ROOT, deployer_env


def make(*args: str, dry_run: bool = True) -> subprocess.CompletedProcess[str]:
    command = ["make", "--no-print-directory", *(["-n"] if dry_run else []), *args]
    env = deployer_env()
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


def cdk_command(target: str, context: str | None = None) -> list[str]:
    """The CDK CLI command ``make <target>`` runs, split as the shell splits it."""
    result = make(target, *([f"CONTEXT={context}"] if context is not None else []))
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stdout.splitlines() if " cdk " in line]
    words = shlex.split(line)
    return words[words.index("cdk") :]


@pytest.mark.parametrize("target", ["synth", "bootstrap", "deploy", "destroy"])
def test_context_options_reach_the_cdk_cli_as_c_options(target: str) -> None:
    words = cdk_command(target, "queueType=fifo alarmEmail=me@example.com")
    assert words[1] == target
    options = ["-c", "queueType=fifo", "-c", "alarmEmail=me@example.com"]
    if target in ("deploy", "destroy"):
        assert words[-5:] == [*options, "SensorDigest"]
    else:
        assert words[-4:] == options


def test_a_value_with_quotes_or_dollars_reaches_the_cdk_cli_as_given() -> None:
    # Given values the shell would otherwise take apart (the app's checks, not the shell, judge them)
    words = cdk_command("synth", "iotTopic=it's alarmEmail=a$(id)b$$c@example.com")
    assert words[-4:] == ["-c", "iotTopic=it's", "-c", "alarmEmail=a$(id)b$$c@example.com"]


def test_make_runs_nothing_written_into_context() -> None:
    # Given a value holding make's own function syntax
    result = make("synth", "CONTEXT=iotTopic=x$(shell echo RAN >&2)y")
    # Then make does not evaluate it: it reaches the CDK CLI as text (where the app refuses it)
    assert "RAN" not in result.stderr


def test_deploy_and_destroy_act_on_the_stack_the_context_names() -> None:
    context = "stackName=SensorDigestDev removal=destroy"
    assert cdk_command("deploy", context) == [
        "cdk",
        "deploy",
        "-c",
        "stackName=SensorDigestDev",
        "-c",
        "removal=destroy",
        "SensorDigestDev",
    ]
    assert cdk_command("destroy", context)[-1] == "SensorDigestDev"
    assert cdk_command("destroy") == ["cdk", "destroy", "SensorDigest"]  # cdk.json's stack name
    assert cdk_command("deploy") == ["cdk", "deploy", "SensorDigest"]


def test_without_a_stack_name_in_context_they_act_on_the_one_cdk_json_names(tmp_path: Path) -> None:
    for name in ("Makefile", "requirements.txt", "requirements-cli.txt", "requirements-dev.txt", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    cdk_json = json.loads((ROOT / "cdk.json").read_text())
    cdk_json["context"]["stackName"] = "SensorDigestOps"
    (tmp_path / "cdk.json").write_text(json.dumps(cdk_json))
    for target in ("deploy", "destroy"):
        result = subprocess.run(
            ["make", "-n", "--no-print-directory", "-C", str(tmp_path), target],
            env=deployer_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        [line] = [line for line in result.stdout.splitlines() if " cdk " in line]
        assert shlex.split(line)[-1] == "SensorDigestOps"


def test_options_written_as_for_the_cdk_cli_are_taken_too() -> None:
    assert cdk_command("synth", "-c queueType=fifo") == ["cdk", "synth", "--quiet", "-c", "queueType=fifo"]


def test_make_synth_refuses_bad_context_in_one_line_each() -> None:
    result = make("synth", "CONTEXT=ingestBatchSize=abc queuetype=fifo", dry_run=False)
    assert result.returncode == 2  # make's code for a failed recipe (app.py's own is 1), as the deploy guide says
    assert "exits with code 2" in (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert lines == [
        "error: unknown context key 'queuetype': did you mean 'queueType'?",
        "error: context value ingestBatchSize='abc' is not allowed: "
        "ingestBatchSize takes a whole number from 1 to 10000 (Lambda's limit for a standard queue)",
    ]


def test_make_docs_builds_the_site_strictly_and_lint_runs_it() -> None:
    # Given make's plan for docs and for lint (read, not run)
    docs = make("docs")
    lint = make("lint")
    assert docs.returncode == 0, docs.stderr
    # Then docs is a strict MkDocs build, and lint (so CI) includes it
    [build] = [line for line in docs.stdout.splitlines() if "mkdocs " in line]
    words = shlex.split(build)
    assert words[words.index("build") :][:2] == ["build", "--strict"]
    assert "--quiet" not in words  # MkDocs counts no warning it does not log: --strict would pass a broken link
    assert build in lint.stdout.splitlines()


def test_make_docs_serve_serves_the_site_at_the_address_given() -> None:
    result = make("docs-serve", "DOCS_ADDR=127.0.0.1:8123")
    assert result.returncode == 0, result.stderr
    [serve] = [line for line in result.stdout.splitlines() if "mkdocs " in line]
    assert shlex.split(serve)[-3:] == ["serve", "--dev-addr", "127.0.0.1:8123"]
