"""The construct as a user installs it: ``pip install "<checkout>[cdk]"`` into a fresh virtualenv
(packages from the index, or pip's cache; the wheel pip would build from the checkout, built once a
session by ``built_wheel``), then a CDK app outside the checkout
(docs/examples/cdk_app/app.py) composing two pipelines, one standard and one FIFO, synthesized by
that virtualenv's Python alone. CDK's synthesizer (jsii on Node), no AWS."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import tempfile
import tomllib
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import node
from tests.support.wheel import BuiltWheel, fresh_virtualenv, pip_install

ROOT = Path(__file__).resolve().parents[2]
FOREIGN_APP = ROOT / "docs" / "examples" / "cdk_app" / "app.py"
STACK = "Readings"
PIPELINES = ("Plain", "Ordered")
# what the CDK CLI adds to an app's context (resources' construct paths in their metadata), and a
# topic filter the app's standard pipeline takes
CLI_CONTEXT = {"aws:cdk:enable-path-metadata": True, "iotTopic": "sensors/+/reports"}


def run(*command: str | Path, cwd: Path, env: dict[str, str], timeout: float = 1200) -> str:
    done = subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def test_every_package_folder_is_listed_for_the_wheel() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    found = {
        ".".join(path.parent.relative_to(base).parts)
        for base in (ROOT / "src", ROOT / "infra", ROOT / "functions")
        for path in base.rglob("__init__.py")
    }
    # the handler modules ship inside the construct's package, never as top-level packages
    handlers = ("ingest", "summary", "api", "silence", "history", "announcer")
    found = {f"sensor_digest_cdk.functions.{name}" if name in handlers else name for name in found}
    # and a folder of data (the page) is listed with its files as package data
    data = {
        name
        for name in setuptools["package-data"]
        if not (ROOT / "src" / name.replace(".", "/") / "__init__.py").exists()
    }
    assert data == {"sensor_digest_tools.local.page"}
    assert sorted(setuptools["packages"]) == sorted(found | data)


def requirement_lines(name: str) -> list[str]:
    lines = (ROOT / name).read_text(encoding="utf-8").splitlines()
    return [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()]


def test_the_wheel_builds_without_a_warning_ships_the_page_and_pins_what_the_functions_run_with(
    built_wheel: BuiltWheel,
) -> None:
    built = built_wheel.log  # pip wheel -v's output of the session's one build
    archive = zipfile.ZipFile(built_wheel.path)

    assert "would be ignored" not in built and "BuildBackendWarning" not in built
    assert {"index.html", "heatmap.js", "chart.js", "readings.js", "heatmap.css"} <= {
        name.rsplit("/", 1)[-1] for name in archive.namelist() if name.startswith("sensor_digest_tools/local/page/")
    }
    assert "sensor_digest_tools/aws/LoopbackEngine.java" in archive.namelist()  # binds DynamoDB Local to loopback
    metadata = archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    requires = {
        line.removeprefix("Requires-Dist: ") for line in metadata.splitlines() if line.startswith("Requires-Dist:")
    }
    # the functions' own requirements exactly as requirements.txt pins them: a user's tests of the
    # handlers run the Powertools of the layer the stack deploys (rules.POWERTOOLS_LAYER_VERSION)
    assert set(requirement_lines("requirements.txt")) <= requires
    assert "aws-lambda-powertools[tracer]==3.31.1" in requires
    assert {"typer<1,>=0.29.2", "rich<16,>=15.0.0"} <= requires


@pytest.fixture(scope="module")
def foreign_synth(built_wheel: BuiltWheel) -> Iterator[tuple[Path, str]]:
    """The cloud assembly of the foreign app, and what ``import sensor_digest_cdk`` resolved to.
    A folder of its own (not pytest's numbered ones, which concurrent sessions prune)."""
    with tempfile.TemporaryDirectory(prefix="sensor-digest-foreign-") as folder:
        yield synth_foreign_app(Path(folder), built_wheel.path)


def synth_foreign_app(tmp: Path, wheel: Path) -> tuple[Path, str]:
    """The foreign app synthesized by a fresh virtualenv holding ``<wheel>[cdk]``: what
    ``pip install "<checkout>[cdk]"`` installs, since pip builds that same wheel from the checkout
    (the session's build, shared with the other tests of the wheel)."""
    node.on_path()  # the app's jsii runs on the checkout's Node 22
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "CDK_"))}
    python = fresh_virtualenv(tmp / "venv", env)
    pip_install(python, f"{wheel}[cdk]", env=env)
    app_dir = tmp / "my-app"
    app_dir.mkdir()
    shutil.copy(FOREIGN_APP, app_dir / "app.py")
    env["CDK_OUTDIR"] = str(tmp / "cdk.out")
    env["CDK_CONTEXT_JSON"] = json.dumps(CLI_CONTEXT)  # as `cdk synth -c iotTopic=...` hands it over
    run(python, "app.py", cwd=app_dir, env=env)
    where = run(python, "-c", "import sensor_digest_cdk; print(sensor_digest_cdk.__file__)", cwd=app_dir, env=env)
    top_level = run(
        python,
        "-c",
        "import importlib.util as u; print([n for n in ('ingest', 'summary') if u.find_spec(n)])",
        cwd=app_dir,
        env=env,
    )
    assert top_level.strip() == "[]", "the wheel installed top-level handler packages"
    return tmp / "cdk.out", where.strip()


def per_pipeline(template: dict[str, object]) -> dict[str, Counter[str]]:
    """Resource types per pipeline, by each resource's construct path (``Readings/<pipeline>/...``)."""
    counts: dict[str, Counter[str]] = {name: Counter() for name in PIPELINES}
    for resource in template["Resources"].values():  # type: ignore[attr-defined]
        path = resource.get("Metadata", {}).get("aws:cdk:path", "")
        parts = path.split("/")
        if len(parts) > 1 and parts[1] in counts:
            counts[parts[1]][resource["Type"]] += 1
    return counts


def test_a_users_app_outside_the_checkout_synthesizes_two_pipelines_from_the_installed_package(
    foreign_synth: tuple[Path, str],
) -> None:
    # Given the foreign app's cloud assembly, built from a fresh virtualenv's package
    out, where = foreign_synth
    assert not Path(where).is_relative_to(ROOT), f"sensor_digest_cdk was imported from the checkout: {where}"
    template = json.loads((out / f"{STACK}.template.json").read_text(encoding="utf-8"))

    # When its resources are counted per pipeline
    counts = per_pipeline(template)
    print(json.dumps({name: dict(sorted(c.items())) for name, c in counts.items()}, indent=1))

    # Then each pipeline holds the whole pipeline of its own: tables, queues, functions, alarms, dashboard
    for name in PIPELINES:
        assert counts[name]["AWS::DynamoDB::Table"] == 2
        assert counts[name]["AWS::SQS::Queue"] == 4
        assert counts[name]["AWS::Lambda::Function"] == 4  # ingest, summary, alarm announcer, read API
        assert counts[name]["AWS::CloudWatch::Dashboard"] == 1
        assert counts[name]["AWS::CloudWatch::Alarm"] == 12  # the read API's 5xx alarm among them
        assert counts[name]["AWS::Events::Rule"] == 1  # the alarm events to the pipeline's topic
    # the standard one fed by AWS IoT (the app's iotTopic), the FIFO one not (IoT cannot send to it)
    assert (counts["Plain"]["AWS::IoT::TopicRule"], counts["Ordered"]["AWS::IoT::TopicRule"]) == (1, 0)
    queues = template["Resources"].values()
    assert sum(1 for r in queues if r["Type"] == "AWS::SQS::Queue" and r["Properties"].get("FifoQueue")) == 2
    # and the functions' code is an asset holding the handlers' entry points, built from the package
    assets = json.loads((out / f"{STACK}.assets.json").read_text(encoding="utf-8"))["files"]
    folders = [out / a["source"]["path"] for a in assets.values() if a["source"].get("packaging") == "zip"]
    assert folders and all((f / "ingest" / "handler.py").is_file() for f in folders)
    assert all((f / "summary" / "handler.py").is_file() for f in folders)


def test_cdk_nag_finds_nothing_unsuppressed_in_the_users_app(foreign_synth: tuple[Path, str]) -> None:
    out, _ = foreign_synth
    artifact = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["artifacts"][STACK]
    metadata = artifact.get("metadata", {})
    if "additionalMetadataFile" in artifact:
        metadata |= json.loads((out / artifact["additionalMetadataFile"]).read_text(encoding="utf-8"))
    problems = [entry["data"] for entries in metadata.values() for entry in entries if entry["type"] == "aws:cdk:error"]
    assert problems == []
    report = out / f"AwsSolutions--{STACK}-NagReport.csv"
    if not report.exists():  # cdk-nag 3, a validation plugin: a finding not accepted fails the synthesis itself
        assert "Validations" in FOREIGN_APP.read_text(encoding="utf-8")
        return
    with report.open(encoding="utf-8", newline="") as lines:  # cdk-nag 2 reports every verdict
        verdicts = Counter(row["Compliance"] for row in csv.DictReader(lines))
    assert set(verdicts) == {"Compliant", "Suppressed"}, verdicts


def test_the_wheel_ships_the_handlers_inside_the_constructs_package(built_wheel: BuiltWheel) -> None:
    names = zipfile.ZipFile(built_wheel.path).namelist()
    assert "sensor_digest_cdk/functions/ingest/handler.py" in names
    assert "sensor_digest_cdk/functions/summary/handler.py" in names
    assert not [n for n in names if n.startswith(("ingest/", "summary/"))]
