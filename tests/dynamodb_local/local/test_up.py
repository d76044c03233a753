"""`sensor-digest up` as a process: one per state file, stopped cleanly by signals, never orphaned;
its ports pinned (on 127.0.0.1 alone, the engine's too) or refused when taken, the ingest's settings
from options or the environment, and only the client's settings on stdout.

Engine: DynamoDB Local, started by the `up` process itself (so that the test can see it stop), or
the session's engine where `up` is given one (AWS_ENDPOINT_URL_DYNAMODB); SQS: moto's server, as
`up` runs it.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from typer.testing import CliRunner

from sensor_digest.store import schema, tables
from sensor_digest_tools.aws.dynamodb_local import EngineError, free_port, start_engine
from sensor_digest_tools.aws.session import local_client
from sensor_digest_tools.cli.app import app
from sensor_digest_tools.cli.local import CLIENT_NOTE
from tests.support.ports import reaches

runner = CliRunner()


def answers(endpoint: str) -> bool:
    url = urlparse(endpoint)
    try:
        with socket.create_connection((url.hostname, url.port), timeout=1):
            return True
    except OSError:
        return False


def start_up(
    state: Path,
    *args: str,
    env: dict[str, str] | None = None,
    own_engine: bool = True,
    stdout: Any = subprocess.DEVNULL,
    stderr: Any = subprocess.DEVNULL,
) -> subprocess.Popen[bytes]:
    env = {**os.environ, **(env or {}), "SENSOR_DIGEST_STATE": str(state)}
    if own_engine:
        env.pop("AWS_ENDPOINT_URL_DYNAMODB", None)  # its own engine, whose end the test checks
    command = [str(Path(sys.executable).with_name("sensor-digest")), "up", *args]
    process = subprocess.Popen(command, env=env, stdout=stdout, stderr=stderr)
    deadline = time.monotonic() + 90
    while not state.is_file():
        assert process.poll() is None, "up exited before it was up"
        assert time.monotonic() < deadline, "up did not come up"
        time.sleep(0.2)
    return process


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_up_refuses_a_second_pipeline_and_a_signal_stops_it_with_its_engine_and_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stop: signal.Signals
) -> None:
    state = tmp_path / "local-pipeline.json"
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(state))
    process = start_up(state)
    try:
        saved = json.loads(state.read_text())
        second = runner.invoke(app, ["up", "--duration", "1"], catch_exceptions=False)

        assert saved["pid"] == process.pid and answers(saved["dynamodb_endpoint"])
        # the alarm events its bus keeps, beside the state file (`sensor-digest alarms events` reads them)
        assert saved["events_file"] == str(tmp_path / "local-pipeline.events.jsonl")
        assert Path(saved["events_file"]).read_text() == ""
        assert second.exit_code == 1
        assert f"a local pipeline is already running (process {process.pid}" in second.output
        assert json.loads(state.read_text()) == saved  # the second left the first's state alone

        process.send_signal(stop)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()

    assert process.returncode == 0
    assert not state.exists()
    assert not answers(saved["dynamodb_endpoint"])  # the engine went with it: no orphan


def test_a_state_file_left_by_a_killed_up_is_told_stale_and_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    state = tmp_path / "local-pipeline.json"
    state.write_text(json.dumps({"queue_url": "http://127.0.0.1:1/q", "table": "SensorDigest", "pid": gone.pid}))
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(state))

    result = runner.invoke(app, ["counts", "--sensor", "1", "--from", "2024-05-01", "--to", "2024-05-01"])

    assert result.exit_code == 1
    assert f"the local pipeline of process {gone.pid} is gone" in result.output
    assert not state.exists()


PRODUCER = """
import json, os, time
import boto3

sqs, ddb = boto3.client("sqs"), boto3.client("dynamodb")
DAY = "2024-05-01T10:00:00Z"
for i in range(0, 20, 10):
    sqs.send_message_batch(
        QueueUrl=os.environ["SENSOR_DIGEST_QUEUE_URL"],
        Entries=[
            {"Id": str(n), "MessageBody": json.dumps({"sensor_id": 77, "event_id": f"own-{n}", "timestamp": DAY})}
            for n in range(i, i + 10)
        ],
    )
key = {"SensorId": {"N": "77"}, "Date": {"S": "2024-05-01"}}
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    item = ddb.get_item(TableName=os.environ["SENSOR_DIGEST_TABLE"], Key=key).get("Item")
    if item and item.get("DataCount", {}).get("N") == "20":  # a day item without DataCount is no day yet
        print("counted 20")
        break
    time.sleep(0.2)
"""


def test_a_plain_boto3_producer_in_its_own_process_works_with_the_settings_up_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "local-pipeline.json"
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(state))
    process = start_up(state)
    try:
        printed = runner.invoke(app, ["env"], catch_exceptions=False)
        exports = dict(
            line.removeprefix("export ").split("=", 1)
            for line in printed.output.splitlines()
            if line.startswith("export ")
        )
        # a user's own environment: nothing of this test's, only what `sensor-digest env` printed
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "SENSOR_DIGEST_"))}
        producer = subprocess.run(
            [sys.executable, "-c", PRODUCER],
            check=False,
            env={**clean, **exports, "HOME": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)

    assert printed.exit_code == 0
    assert {"AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_DYNAMODB"} <= set(exports)
    assert printed.stderr.strip() == CLIENT_NOTE  # what the AWS CLI needs beyond the exports, beside them
    assert producer.stdout.strip() == "counted 20", producer.stderr


def engine_processes(port: int | None = None) -> list[int]:
    """The DynamoDB Local processes on this machine (on ``port``, when given), by their command line."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        # on its class path (beside its launcher), as ``up``'s clean-up knows it (``ops/targets.py``)
        is_engine = any(b"DynamoDBLocal.jar" in part for part in command)
        if is_engine and (port is None or str(port).encode() in command):
            found.append(int(entry.name))
    return found


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists() or b"zombie" in Path(f"/proc/{pid}/status").read_bytes().lower():
            return True
        time.sleep(0.2)
    return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")
def test_up_killed_outright_takes_its_engine_with_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # SIGKILL leaves `up` no clean-up of its own: the engine was started tied to it
    state = tmp_path / "local-pipeline.json"
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(state))
    process = start_up(state)
    engine = json.loads(state.read_text())["engine_pid"]
    assert engine in engine_processes()

    process.kill()
    process.wait(timeout=60)

    assert gone_within(engine, 60), "the engine outlived its `up`"
    stale = runner.invoke(app, ["env"])
    assert stale.exit_code == 1 and "is gone (its state file was stale and is now removed" in stale.output


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")
def test_an_engine_left_by_a_killed_up_is_stopped_by_the_next_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an engine not tied to its starter (started from a worker thread: no death signal, as on
    # a system without setpriv) and the state file of an `up` that is gone
    started: list[Any] = []
    worker = threading.Thread(target=lambda: started.append(start_engine()))
    worker.start()
    worker.join()
    [engine] = started
    try:
        gone = subprocess.Popen([sys.executable, "-c", "pass"])
        gone.wait()
        state = tmp_path / "local-pipeline.json"
        state.write_text(json.dumps({"table": "SensorDigest", "pid": gone.pid, "engine_pid": engine.pid}))
        monkeypatch.setenv("SENSOR_DIGEST_STATE", str(state))

        # When the next command finds the state stale
        result = runner.invoke(app, ["env"])

        # Then it says so, and the engine is stopped
        assert result.exit_code == 1 and "its DynamoDB Local, left running, is stopped" in result.output
        assert gone_within(engine.pid, 60)
    finally:
        engine.stop()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")
def test_a_start_that_fails_leaves_no_engine_behind() -> None:
    port = free_port()

    with pytest.raises(EngineError, match="DynamoDB Local did not answer"):
        start_engine(port=port, timeout=0)  # the JVM cannot answer before its first probe

    assert engine_processes(port) == []


def wait_for(check: Callable[[], Any], seconds: float = 30) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.2)
    raise AssertionError("timed out")


def test_up_pins_its_ports_on_loopback_alone_reads_unknown_sensors_and_prints_only_the_client_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `UNKNOWN_SENSORS=reject LEDGER_MODE=per-message sensor-digest up`: the variables the ingest
    # function reads are read here too
    state = tmp_path / "local-pipeline.json"
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(state))
    engine_port, sqs_port = free_port(), free_port()
    while sqs_port == engine_port:
        sqs_port = free_port()
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = start_up(
            state,
            "--dynamodb-port",
            str(engine_port),
            "--sqs-port",
            str(sqs_port),
            env={"UNKNOWN_SENSORS": "reject", "LEDGER_MODE": "per-message"},
            stdout=stdout,
            stderr=stderr,
        )
    try:
        saved = json.loads(state.read_text())
        refused = runner.invoke(app, ["send", "--sensor", "5", "--timestamp", "2024-05-01T10:00:00Z"])
        # a producer of its own, which nothing checks first: the ingest rejects it
        body = json.dumps({"sensor_id": 5, "timestamp": "2024-05-01T10:00:00Z"})
        local_client(saved["sqs_endpoint"], "sqs").send_message(QueueUrl=saved["queue_url"], MessageBody=body)
        letters = wait_for(lambda: json.loads(runner.invoke(app, ["dlq", "list", "--json"]).stdout))
        # every port it opens (the engine's, the queue's, the read API's) listens on 127.0.0.1 alone:
        # not on another address of this machine (Linux answers all of 127.0.0.0/8 on loopback)
        ports = [urlparse(saved[key]).port or 0 for key in ("dynamodb_endpoint", "sqs_endpoint", "api_url")]
        listening = {port: (reaches("127.0.0.1", port), reaches("127.0.0.2", port)) for port in ports}
        # and its queue refuses a request a page sends through a DNS name rebound to 127.0.0.1
        connection = http.client.HTTPConnection("127.0.0.1", sqs_port, timeout=30)
        connection.request("POST", "/", body="{}", headers={"Host": f"evil.example:{sqs_port}"})
        rebound = connection.getresponse().status
        connection.close()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)

    assert saved["dynamodb_endpoint"] == f"http://127.0.0.1:{engine_port}"
    assert saved["sqs_endpoint"] == f"http://127.0.0.1:{sqs_port}"
    assert listening == dict.fromkeys(ports, (True, False))
    assert rebound == 421
    assert saved["unknown_sensors"] == "reject"
    assert refused.exit_code == 1  # send checks the registry against the setting `up` runs with
    assert "the ingest would reject this report: sensor 5 is not registered (UNKNOWN_SENSORS=reject)" in refused.stderr
    assert [letter["error"] for letter in letters] == ["sensor 5 is not registered (UNKNOWN_SENSORS=reject)"]
    assert all(line.startswith("export ") for line in out.read_text().splitlines())
    assert f"export AWS_ENDPOINT_URL_SQS=http://127.0.0.1:{sqs_port}" in out.read_text().splitlines()
    assert "ingest: exactly-once (per-message ledger), reports of unregistered sensors rejected" in err.read_text()
    # and on stop it said what the pipeline held, all of which lives in memory
    assert "stopping drops 0 report(s) accepted but not yet counted and 1 dead letter(s)" in err.read_text()


def test_up_counts_the_days_of_unregistered_sensors_in_the_timezone_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ddb_endpoint: str
) -> None:
    state = tmp_path / "local-pipeline.json"
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(state))
    process = start_up(state, "--timezone", "Asia/Tokyo", own_engine=False)  # the session's engine
    days = ["--sensor", "6", "--from", "2024-05-01", "--to", "2024-05-02", "--json"]
    try:
        # 20:00 UTC is 05:00 the next morning in Tokyo
        sent = runner.invoke(app, ["send", "--sensor", "6", "--timestamp", "2024-05-01T20:00:00Z"])
        counted = wait_for(lambda: json.loads(runner.invoke(app, ["counts", *days]).stdout)["days"])
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)

    assert sent.exit_code == 0, sent.output
    assert counted == {"2024-05-02": 1}


def test_up_refuses_a_port_in_use_in_one_line_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(tmp_path / "local-pipeline.json"))
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)  # up would start its own engine
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        engine = runner.invoke(app, ["up", "--duration", "1", "--dynamodb-port", str(port)])
        queue = runner.invoke(app, ["up", "--duration", "1", "--sqs-port", str(port)])

    for result, what in ((engine, "DynamoDB Local"), (queue, "SQS")):
        assert (result.exit_code, result.stdout) == (1, "")
        assert result.stderr.startswith(f"error: port {port} ({what}) is in use") and result.stderr.count("\n") == 1
    assert not (tmp_path / "local-pipeline.json").exists()


@pytest.mark.parametrize("command", [["up", "--duration", "1"], ["demo", "--messages", "10"]], ids=["up", "demo"])
def test_up_and_demo_told_an_engine_where_nothing_listens_say_so_at_once_in_one_line(
    tmp_path: Path, command: list[str]
) -> None:
    # Given AWS_ENDPOINT_URL_DYNAMODB left pointing at an engine that is gone, and the default wait
    # for a starting engine (minutes)
    endpoint = f"http://127.0.0.1:{free_port()}"
    env = {k: v for k, v in os.environ.items() if k != "SENSOR_DIGEST_ENGINE_WAIT"}
    env.update({"AWS_ENDPOINT_URL_DYNAMODB": endpoint, "SENSOR_DIGEST_STATE": str(tmp_path / "state.json")})

    # When `up` or `demo` runs (bounded: the whole wait would be minutes)
    done = subprocess.run(
        [str(Path(sys.executable).with_name("sensor-digest")), *command],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    # Then it ends with one line naming the endpoint and the variable to unset
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"error: nothing answers at {endpoint} (AWS_ENDPOINT_URL_DYNAMODB): unset it to let sensor-digest start "
        "DynamoDB Local, or start that engine\n"
    )


def table_names(ddb: Any) -> set[str]:
    return {name for page in ddb.get_paginator("list_tables").paginate() for name in page["TableNames"]}


def test_up_on_an_engine_it_did_not_start_deletes_its_own_tables_when_it_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ddb_endpoint: str
) -> None:
    # Given `up` on the session's engine (AWS_ENDPOINT_URL_DYNAMODB given), beside a table of another's
    state = tmp_path / "local-pipeline.json"
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(state))
    ddb = local_client(ddb_endpoint)
    other = f"NotUps{uuid.uuid4().hex[:8]}"
    ddb.create_table(**tables.create_table_params(other, schema.LEDGER_KEY_SCHEMA))
    process = start_up(state, own_engine=False)
    try:
        saved = json.loads(state.read_text())
        during = table_names(ddb)
    finally:
        # When it stops
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)

    # Then the tables it created are gone, the other's stays, and the engine still answers
    after = table_names(ddb)
    assert {saved["table"], saved["ledger"]} <= during
    assert saved["table"] not in after and saved["ledger"] not in after
    assert other in after
    ddb.delete_table(TableName=other)
