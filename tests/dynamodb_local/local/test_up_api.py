"""The read API of `sensor-digest up`, end to end: reports sent with `sensor-digest send` come back from
the API on the loopback port `up` serves (`--api-port`, printed by `sensor-digest env` as
SENSOR_DIGEST_API_URL) as the contract says, days and months; a bad sensor id is a 400 in JSON.

Engine: the session's DynamoDB Local (joined by `up`); SQS: moto's server, as `up` runs it.
"""

from __future__ import annotations

import json
import signal
import socket
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sensor_digest_tools.aws.dynamodb_local import free_port
from sensor_digest_tools.cli.app import app
from tests.dynamodb_local.local.test_up import start_up, wait_for

runner = CliRunner()


def fetch(url: str) -> tuple[int, str, Any]:
    """A GET: its status, content type and JSON body (4xx included)."""
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:  # the loopback URL of up
            return answer.status, answer.headers["Content-Type"], json.load(answer)
    except urllib.error.HTTPError as refused:
        return refused.code, refused.headers["Content-Type"], json.load(refused)


def test_reports_sent_to_up_come_back_from_its_api_as_days_and_months(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ddb_endpoint: str
) -> None:
    # Given `up` serving the API on a pinned port
    state = tmp_path / "local-pipeline.json"
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(state))
    api_port = free_port()
    process = start_up(state, "--api-port", str(api_port), own_engine=False)
    base = f"http://127.0.0.1:{api_port}"
    try:
        printed = runner.invoke(app, ["env"], catch_exceptions=False).stdout.splitlines()
        # When three reports are sent for two days of sensor 41
        for timestamp in ("2024-05-01T10:00:00Z", "2024-05-01T11:00:00Z", "2024-05-03T09:00:00Z"):
            sent = runner.invoke(app, ["send", "--sensor", "41", "--timestamp", timestamp])
            assert sent.exit_code == 0, sent.output
        days_url = f"{base}/sensors/41/days?from=2024-05-01&to=2024-05-31"
        days = wait_for(lambda: (a := fetch(days_url))[2]["days"] == {"2024-05-01": 2, "2024-05-03": 1} and a, 60)
        months_url = f"{base}/sensors/41/months?from=2024-05&to=2024-05"
        whole_may = {"2024-05": {"2024-05-01": 2, "2024-05-03": 1}}  # once the summary caught up
        months = wait_for(lambda: (a := fetch(months_url))[2]["months"] == whole_may and a, 60)
        refused = fetch(f"{base}/sensors/forty-one/days?from=2024-05-01&to=2024-05-31")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)

    # Then the API answers as the contract says
    assert f"export SENSOR_DIGEST_API_URL={base}" in printed
    assert days == (200, "application/json", {"sensor_id": 41, "days": {"2024-05-01": 2, "2024-05-03": 1}})
    assert months == (
        200,
        "application/json",
        {"sensor_id": 41, "months": {"2024-05": {"2024-05-01": 2, "2024-05-03": 1}}},
    )
    assert refused[:2] == (400, "application/json") and set(refused[2]) == {"error"}


def test_up_refuses_an_api_port_in_use_or_given_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(tmp_path / "local-pipeline.json"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        in_use = runner.invoke(app, ["up", "--duration", "1", "--api-port", str(port)])
        twice = runner.invoke(app, ["up", "--duration", "1", "--sqs-port", str(port), "--api-port", str(port)])

    assert (in_use.exit_code, in_use.stdout) == (1, "")
    assert in_use.stderr.startswith(f"error: port {port} (the read API) is in use")
    assert twice.exit_code == 2 and f"{port} is --sqs-port too" in twice.stderr
    assert not (tmp_path / "local-pipeline.json").exists()
