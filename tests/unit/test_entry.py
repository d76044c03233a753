"""The Lambda entry both handlers share (no engine: a fake service)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import pytest

from sensor_digest.entry import LambdaEntry, from_environment
from sensor_digest.errors import ConfigurationError
from sensor_digest_tools.lambda_runtime.events import FakeContext

COUNTED = [3.0]  # EMF keeps a metric's values as a list


class Report:
    def response(self) -> dict[str, Any]:
        return {"batchItemFailures": []}

    def metrics(self) -> Mapping[str, int]:
        return {"counted": 3}

    def log_fields(self) -> Mapping[str, Any]:
        return {"counted": 3}


class Service:
    """A fake service: every event answered with a ``report`` (a ``Report`` by default)."""

    def __init__(self, report: type[Report] = Report) -> None:
        self._report = report

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> Report:
        return self._report()


def test_the_metrics_go_to_the_namespace_the_environment_names(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "MyCompany/Sensors")
    entry = LambdaEntry("sensor-digest-test", lambda session: Service(), "batch done")

    response = entry.handler({"Records": []}, FakeContext())

    assert response == {"batchItemFailures": []}
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    namespaces = {m["Namespace"] for e in emitted for m in e["_aws"]["CloudWatchMetrics"]}
    assert namespaces == {"MyCompany/Sensors"}
    assert emitted[0]["counted"] == COUNTED


def test_the_service_is_kept_while_the_environment_stays_and_built_again_when_it_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[str | None] = []

    def build(session: Any) -> Service:
        built.append(os.environ.get("TABLE_NAME"))
        return Service()

    entry = LambdaEntry("sensor-digest-test", build, "batch done")
    monkeypatch.setenv("TABLE_NAME", "First")
    entry.handler({"Records": []}, FakeContext())
    entry.handler({"Records": []}, FakeContext())  # a warm container: the same service
    monkeypatch.setenv("TABLE_NAME", "Second")  # the next test of a user's suite
    entry.handler({"Records": []}, FakeContext())
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "another-mock")  # a fresh moto account
    entry.handler({"Records": []}, FakeContext())
    entry.reset()
    entry.handler({"Records": []}, FakeContext())

    assert built == ["First", "Second", "Second", "Second"]


def test_an_entry_from_the_environment_reads_its_settings_when_it_builds_its_service(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[str | None] = []

    def settings() -> str | None:  # as a settings class's from_env reads the environment
        read.append(os.environ.get("TABLE_NAME"))
        return read[-1]

    def build(table: str | None, session: Any) -> Service:
        assert table == read[-1] and session is not None
        return Service()

    entry = from_environment("sensor-digest-test", build, settings, "batch done")
    assert read == []  # nothing read at import
    monkeypatch.setenv("TABLE_NAME", "First")
    entry.handler({"Records": []}, FakeContext())
    monkeypatch.setenv("TABLE_NAME", "Second")
    entry.handler({"Records": []}, FakeContext())

    assert read == ["First", "Second"]


def emitted_dimensions(out: str) -> list[tuple[list[str], dict[str, str]]]:
    """Each EMF blob's dimension names and their values."""
    blobs = [json.loads(line) for line in out.splitlines() if '"_aws"' in line]
    return [
        (sorted(names), {name: blob[name] for name in names})
        for blob in blobs
        for directive in blob["_aws"]["CloudWatchMetrics"]
        for names in directive["Dimensions"]
    ]


def test_each_invocations_metrics_carry_the_pipeline_the_environment_names(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given two pipelines' functions (one process here; on Lambda, one container each)
    entry = LambdaEntry("sensor-digest-test", lambda session: Service(), "batch done")

    # When each invokes with its own SENSOR_DIGEST_PIPELINE, and once more without one
    monkeypatch.setenv("SENSOR_DIGEST_PIPELINE", "SensorDigest")
    entry.handler({"Records": []}, FakeContext())
    monkeypatch.setenv("SENSOR_DIGEST_PIPELINE", "SensorDigestStaging")
    entry.handler({"Records": []}, FakeContext())
    monkeypatch.delenv("SENSOR_DIGEST_PIPELINE")
    entry.handler({"Records": []}, FakeContext())

    # Then each publishes under its own pipeline, never into the other's series
    assert emitted_dimensions(capsys.readouterr().out) == [
        (["pipeline", "service"], {"service": "sensor-digest-test", "pipeline": "SensorDigest"}),
        (["pipeline", "service"], {"service": "sensor-digest-test", "pipeline": "SensorDigestStaging"}),
        (["service"], {"service": "sensor-digest-test"}),
    ]


@pytest.mark.filterwarnings("ignore:No application metrics to publish")
@pytest.mark.parametrize("value", ["   ", "Stäging", "x" * 256])
def test_a_pipeline_name_cloudwatch_cannot_take_fails_the_cold_start_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("SENSOR_DIGEST_PIPELINE", value)
    entry = LambdaEntry("sensor-digest-test", lambda session: Service(), "batch done")
    with pytest.raises(ConfigurationError, match="SENSOR_DIGEST_PIPELINE must be 1 to 255 ASCII characters"):
        entry.handler({"Records": []}, FakeContext())


class NamedReport(Report):
    def log_fields(self) -> Mapping[str, Any]:  # the import's Finish: the object's name, its figures
        return {"name": "inputs/a.jsonl", "msg": "x", "levelname": "y", "rows": 3}


def test_a_field_named_as_a_log_records_own_attribute_is_logged_at_the_deployed_level(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("POWERTOOLS_LOG_LEVEL", "INFO")  # as the stack deploys the functions
    entry = LambdaEntry("sensor-digest-named", lambda session: Service(NamedReport), "step done")

    response = entry.handler({}, FakeContext())

    assert response == {"batchItemFailures": []}
    logged = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"step done"' in line]
    assert len(logged) == 1
    assert (logged[0]["name_"], logged[0]["msg_"], logged[0]["levelname_"], logged[0]["rows"]) == (
        "inputs/a.jsonl",
        "x",
        "y",
        3,
    )
