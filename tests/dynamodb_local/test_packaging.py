"""The `sensor-digest` command from an installed wheel, outside any checkout (a fresh virtualenv,
packages from the index; DynamoDB Local found in the user's cache)."""

from __future__ import annotations

import os
import subprocess
import zipfile
from pathlib import Path

from sensor_digest_tools.aws.dynamodb_local import engine_dir
from sensor_digest_tools.aws.sqs_server import LOCAL_EXTRA_HINT
from tests.support.wheel import BuiltWheel, fresh_virtualenv, pip_install

ROOT = Path(__file__).resolve().parents[2]


def run(*command: str | Path, cwd: Path, env: dict[str, str], timeout: float = 600, code: int = 0) -> str:
    done = subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == code, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def test_the_command_works_from_an_installed_wheel_in_another_directory(
    tmp_path: Path, built_wheel: BuiltWheel
) -> None:
    # Given a wheel of the project (the session's one build of it), installed with its dependencies
    # into a fresh virtualenv
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DYNAMODB_LOCAL", "AWS_ENDPOINT", "PYTHON"))}
    wheel = built_wheel.path
    names = zipfile.ZipFile(wheel).namelist()
    assert "sensor_digest/store/schema.py" in names and "sensor_digest_tools/cli/app.py" in names
    assert not [n for n in names if n.startswith(("ingest/", "summary/", "api/", "tests/", "infra/", "bench/"))]
    page = ("index.html", "heatmap.js", "chart.js", "readings.js", "heatmap.css")
    assert {f"sensor_digest_tools/local/page/{f}" for f in page} <= set(names)
    venv = tmp_path / "venv"
    python = fresh_virtualenv(venv, env)
    pip_install(python, wheel, env=env)
    # and DynamoDB Local in the user's cache (where a first run would fetch it with npm)
    cache = tmp_path / "xdg-cache"
    (cache / "sensor-digest").mkdir(parents=True)
    (cache / "sensor-digest" / "dynamodb-local").symlink_to(engine_dir())
    env["XDG_CACHE_HOME"] = str(cache)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    # When the installed command runs the demo from a directory that is no checkout
    out = run(venv / "bin" / "sensor-digest", "demo", "--messages", "100", cwd=elsewhere, env=env)

    # Then the whole pipeline ran and every count was exact
    assert "PASS every day count equals the truth" in out
    assert "\nexact" in out

    # and `up`, which serves SQS to other processes with moto's server, names the extra it needs
    env["SENSOR_DIGEST_STATE"] = str(tmp_path / "state.json")
    refused = run(venv / "bin" / "sensor-digest", "up", "--duration", "1", cwd=elsewhere, env=env, code=1)
    assert refused.strip().splitlines() == [f"error: {LOCAL_EXTRA_HINT}"]
    # which, installed, makes it start (and stop after its duration, its engine with it)
    pip_install(python, f"{wheel}[local]", env=env)
    started = run(venv / "bin" / "sensor-digest", "up", "--duration", "2", cwd=elsewhere, env=env)
    assert "local pipeline up" in started
