"""The command line's fixtures: a state file of the test's own (never a developer's running pipeline),
and a local pipeline as ``sensor-digest up`` runs it, one per module: ``test_output.py``'s deployed-stack test
ends with ``mock_aws``, which resets moto's backends, the running pipeline's SQS server among them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sensor_digest_tools.local.pipeline import LocalPipeline, PipelineOptions


@pytest.fixture(autouse=True)
def state_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never touch a developer's running pipeline: the state file lives in the test's tmp dir."""
    path = tmp_path / "local-pipeline.json"
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(path))
    monkeypatch.setenv("COLUMNS", "200")  # tables unwrapped, so that assertions read whole cells
    return path


@pytest.fixture(scope="module")
def running(ddb_endpoint: str) -> Iterator[LocalPipeline]:
    """A local pipeline as `sensor-digest up` runs it: moto's SQS server, the session's DynamoDB Local."""
    # time_scale 0.005: the deployed visibility timeout of 200 s becomes 1 s
    pipeline = LocalPipeline(PipelineOptions(sqs="server", time_scale=0.005), engine_endpoint=ddb_endpoint)
    pipeline.start()
    yield pipeline
    pipeline.stop()
