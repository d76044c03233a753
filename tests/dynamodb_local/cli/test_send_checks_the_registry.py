"""``send`` checks what can be checked before anything goes out: where it knows the pipeline's table,
the sensor's registration (refused where the pipeline rejects unregistered sensors, a note where it
cannot know the pipeline's setting) and the day in the sensor's own zone; and ``sensors update
--timezone`` says when ingest sees the new zone and what stays where it is.

Engines: a local pipeline as ``sensor-digest up`` runs it (moto's SQS server, DynamoDB Local), found
by its state file, or named explicitly.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sensor_digest.registry import Registry, SensorProfile
from sensor_digest.store import reads
from sensor_digest_cdk.shape import PipelineShape
from sensor_digest_tools.cli.app import app
from sensor_digest_tools.local.pipeline import LocalPipeline, PipelineOptions
from sensor_digest_tools.ops.dlq import queue_depth
from sensor_digest_tools.ops.targets import save_local


@pytest.fixture
def rejecting(ddb_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalPipeline]:
    """A local pipeline that rejects reports of unregistered sensors, as `up --unknown-sensors reject` runs it."""
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(tmp_path / "local-pipeline.json"))
    options = PipelineOptions(shape=PipelineShape(unknown_sensors="reject"), sqs="server", time_scale=0.005)
    pipeline = LocalPipeline(options, engine_endpoint=ddb_endpoint)
    save_local(pipeline.start())
    yield pipeline
    pipeline.stop()


def registry(pipeline: LocalPipeline) -> Registry:
    target = pipeline.target
    return Registry(table_name=str(target.table), ledger_table_name=str(target.ledger), client=pipeline.dynamodb())


def test_send_refuses_what_the_pipeline_would_reject_for_the_registry_and_dates_by_the_sensors_zone(
    rejecting: LocalPipeline, ddb: Any
) -> None:
    # Given a pipeline that rejects unregistered sensors, and sensor 5 not registered
    # When a report of sensor 5 is sent
    refused = CliRunner().invoke(app, ["send", "--sensor", "5", "--timestamp", "2024-05-01T20:00:00Z"])

    # Then it is refused with the ingest's reason and the way to go on, and nothing went out
    assert (refused.exit_code, refused.stdout) == (1, "")
    assert refused.stderr == (
        "error: the ingest would reject this report: sensor 5 is not registered (UNKNOWN_SENSORS=reject); register "
        "it first: sensor-digest sensors register --sensor 5 --name ... --serial ...\n"
    )
    assert queue_depth(rejecting.sqs(), str(rejecting.target.queue_url)) == 0

    # When sensor 5 is registered in Tokyo, the same report goes out and counts on its local day
    registry(rejecting).register(SensorProfile(sensor_id=5, name="roof", serial="S-5", timezone="Asia/Tokyo"))
    sent = CliRunner().invoke(app, ["send", "--sensor", "5", "--timestamp", "2024-05-01T20:00:00Z"])
    assert (sent.exit_code, sent.stderr) == (0, ""), sent.output
    deadline = time.monotonic() + 60
    while reads.day_counts(ddb, str(rejecting.target.table)) != {(5, "2024-05-02"): 1}:
        assert time.monotonic() < deadline, reads.day_counts(ddb, str(rejecting.target.table))
        time.sleep(0.2)


def test_send_to_a_pipeline_whose_setting_it_cannot_know_notes_an_unregistered_sensor(
    rejecting: LocalPipeline, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the pipeline named by its queue and table alone (no state file says its setting)
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(tmp_path / "none.json"))
    monkeypatch.setenv("AWS_ENDPOINT_URL_SQS", str(rejecting.target.sqs_endpoint))
    where = ["--queue-url", str(rejecting.target.queue_url), "--table", str(rejecting.target.table)]

    sent = CliRunner().invoke(app, ["send", "--sensor", "6", *where])

    # Then it goes out, with a note that names what the pipeline may do with it
    assert sent.exit_code == 0, sent.output
    assert sent.stderr == (
        "sensor 6 is not registered: a pipeline with UNKNOWN_SENSORS=reject puts its reports in the dead-letter "
        "queue (explicit target does not say which it is); register it first: sensor-digest sensors register "
        "--sensor 6 --name ... --serial ...\n"
    )


def test_a_new_time_zone_says_when_ingest_sees_it_and_that_earlier_counts_stay(
    rejecting: LocalPipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry(rejecting).register(SensorProfile(sensor_id=8, name="cellar", serial="S-8"))

    moved = CliRunner().invoke(app, ["sensors", "update", "--sensor", "8", "--timezone", "Asia/Tokyo"])
    renamed = CliRunner().invoke(app, ["sensors", "update", "--sensor", "8", "--name", "basement"])
    same = CliRunner().invoke(app, ["sensors", "update", "--sensor", "8", "--timezone", "Asia/Tokyo"])

    assert (moved.exit_code, renamed.exit_code, same.exit_code) == (0, 0, 0)
    assert moved.stderr == (
        "sensor 8's days are counted in Asia/Tokyo (not UTC) for the reports ingest reads once its profile cache "
        "lets the old profile go: up to PROFILE_CACHE_SECONDS (the stack's profileCacheSeconds, 60 s by default) "
        "after this update, per function container; reports counted before stay on the days they were counted on "
        "(a count never moves to another day)\n"
    )
    assert renamed.stderr == "" and same.stderr == ""  # nothing of the zone changed
    assert json.loads(CliRunner().invoke(app, ["sensors", "show", "--sensor", "8", "--json"]).stdout)["timezone"] == (
        "Asia/Tokyo"
    )
