"""The Lambda entry both handlers share (no engine: a fake service)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import pytest

from sensor_digest.entry import LambdaEntry
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
    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> Report:
        return Report()


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
