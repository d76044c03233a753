"""``sensor-digest up``'s options refused as usage errors before anything starts.

Engine: none (the command line's parsing only: a refused option never reaches an engine or a queue).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from sensor_digest_tools.cli.app import app

runner = CliRunner()


@pytest.mark.parametrize("duration", ["-1", "-0.5"])
def test_up_refuses_a_negative_duration_as_a_usage_error(
    duration: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given no pipeline of this test's (a state file of its own), and an engine endpoint where
    # nothing answers, not waited for: were the option taken, `up` would end at once, not run forever
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(tmp_path / "local-pipeline.json"))
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:1")
    monkeypatch.setenv("SENSOR_DIGEST_ENGINE_WAIT", "0")

    # When `up` is asked to stop after a negative number of seconds
    result = runner.invoke(app, ["up", "--duration", duration])

    # Then it is refused as a usage error naming the option, and nothing started
    assert result.exit_code == 2
    assert "Invalid value for '--duration'" in result.stderr and "greater than or equal to 0" in result.stderr
    assert result.stdout == ""
    assert not (tmp_path / "local-pipeline.json").exists()
