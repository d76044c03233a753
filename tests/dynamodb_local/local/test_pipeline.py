"""The local pipeline as a library: two pipelines in one process stay apart, and neither reads
nor writes the process environment; the demo's own steps never meet the faults injected into the
pipeline (DynamoDB Local, the session's engine; SQS: in-process brokers)."""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse

from sensor_digest.config import QueueType
from sensor_digest.store.reads import day_counts, summaries
from sensor_digest_cdk.shape import PipelineShape
from sensor_digest_tools.instruments.faults import THROTTLED, FaultInjector, error_response
from sensor_digest_tools.local.demo import SENDER_THREAD, DemoOptions, run_demo, send_traffic
from sensor_digest_tools.local.pipeline import LocalPipeline, PipelineOptions
from sensor_digest_tools.local.quiet import QUIET_SENSOR
from sensor_digest_tools.local.traffic import generate
from sensor_digest_tools.ops.dlq import drain_dead_letters


def test_two_pipelines_in_one_process_count_their_own_traffic(ddb_endpoint: str) -> None:
    # Given two pipelines side by side, one exactly-once with throttling injected, one at-least-once
    environment = dict(os.environ)
    first = LocalPipeline(PipelineOptions(fault_rate=0.05, seed=1), engine_endpoint=ddb_endpoint)
    second = LocalPipeline(
        PipelineOptions(shape=PipelineShape(delivery_mode="at-least-once"), seed=2), engine_endpoint=ddb_endpoint
    )
    traffic = {
        first: generate(messages=300, sensors=5, days=2, poison_rate=0.02, seed=1),
        second: generate(messages=200, sensors=3, days=1, poison_rate=0.0, seed=2),
    }
    with first, second:
        # When each gets its own traffic, at the same time
        for pipeline, sent in traffic.items():
            send_traffic(pipeline.sqs(), str(pipeline.target.queue_url), sent)
        assert first.wait_until_drained(timeout=120) and second.wait_until_drained(timeout=120)

        # Then each table holds exactly its own traffic, summaries included, and the poison of the
        # first is in the first's dead-letter queue only
        for pipeline, sent in traffic.items():
            table = str(pipeline.target.table)
            assert day_counts(pipeline.dynamodb(), table) == dict(sent.truth)
            assert summaries(pipeline.dynamodb(), table) == sent.summaries()
        kept = drain_dead_letters(first.sqs(), str(first.target.dlq_url))
        assert len(kept) == len(traffic[first].poison) > 0
        assert drain_dead_letters(second.sqs(), str(second.target.dlq_url)) == []
        assert first.faults.injected > 0
        assert first.errors == second.errors == []
    assert dict(os.environ) == environment  # nothing set, nothing left behind


def test_a_verbose_pipeline_logs_each_rejection_with_its_reason(
    ddb_endpoint: str, capfd: pytest.CaptureFixture[str]
) -> None:
    # Without POWERTOOLS_SERVICE_NAME (no Lambda here), as `sensor-digest up --verbose` runs it
    assert "POWERTOOLS_SERVICE_NAME" not in os.environ
    with LocalPipeline(PipelineOptions(verbose=True), engine_endpoint=ddb_endpoint) as pipeline:
        pipeline.sqs().send_message(QueueUrl=str(pipeline.target.queue_url), MessageBody='{"sensor_id": "x"}')
        assert pipeline.wait_until_drained(timeout=60)

    logged = capfd.readouterr().err
    assert '"message":"message rejected"' in logged
    assert '"reason":"sensor_id must be an integer, got string \\"x\\""' in logged


def test_the_fifo_demo_is_exact_through_lost_deletes_faults_and_producer_retries(ddb_endpoint: str) -> None:
    # `sensor-digest demo --queue fifo`, smaller: ordered mode end to end on the in-process FIFO queue
    result = run_demo(
        DemoOptions(
            messages=600, sensors=6, days=2, queue_type=QueueType.FIFO, fault_rate=0.05, engine_endpoint=ddb_endpoint
        )
    )

    assert result.ok, result.errors
    assert result.alarms is not None and result.alarms.ok and len(result.alarms.events) == 6
    assert result.batch_size == 10
    stats = result.stats
    assert stats.producer_retries > 0 and stats.duplicates_injected > 0 and stats.failures_listed > 0
    assert stats.deliveries <= stats.ingest_batches * 10


class DemoCallsThrottled(FaultInjector):
    """The pipeline's fault layer (throttling its writes at ``rate``) that also throttles every DynamoDB and
    SQS call the demo itself makes on the pipeline's session: each call from the thread that made this layer
    (the one that runs the demo: its waits, the redrive, registration, the silence check, reading counts,
    summaries and dead letters) or from the demo's sender, whatever the operation. ``throttled`` counts them."""

    def __init__(self, rate: float, seed: int) -> None:
        super().__init__(rate=rate, seed=seed)
        self.demo_thread = threading.current_thread()
        self.throttled: Counter[str] = Counter()

    def install(self, session: Any) -> None:
        super().install(session)
        for service in ("dynamodb", "sqs"):  # first: ahead of the conflict emulator and the in-process SQS
            session.events.register_first(f"before-call.{service}", self._demo_call)

    def _demo_call(self, model: Any = None, **_: Any) -> tuple[AWSResponse, dict[str, Any]] | None:
        thread = threading.current_thread()
        if thread is not self.demo_thread and thread.name != SENDER_THREAD:
            return None  # the pipeline's own threads: only the random throttling of writes
        if _starting_the_pipeline():
            return None  # the pipeline's own start on the demo's thread (its event source reads its queue)
        self.throttled[f"{model.service_model.service_name}.{model.name}"] += 1
        return error_response(*THROTTLED)


def _starting_the_pipeline() -> bool:
    frame = sys._getframe()
    while frame is not None and frame.f_code is not LocalPipeline._start.__code__:
        frame = frame.f_back  # type: ignore[assignment]
    return frame is not None


def test_the_demo_s_own_steps_never_meet_the_faults_injected_into_the_pipeline(ddb_endpoint: str) -> None:
    # Given a fault layer on the pipeline's session that throttles a share of the pipeline's writes and
    # every call the demo's own steps would make there (sending, watching the queue, the redrive,
    # registering the quiet sensor, the silence check, reading counts, summaries and dead letters)
    faults = DemoCallsThrottled(rate=0.05, seed=3)
    options = DemoOptions(messages=400, sensors=5, days=2, poison_rate=0.02, engine_endpoint=ddb_endpoint)

    # When the demo runs
    result = run_demo(options, faults=faults)

    # Then none of the demo's calls went through the faulted session, the pipeline met its faults, and
    # the demo is exact: counts, summaries, dead letters, and the silence check found the quiet sensor
    assert faults.throttled == Counter()
    assert result.stats.faults_injected > 0 and result.stats.failures_listed > 0
    assert result.counts_exact and result.summaries_exact and result.poison_kept and result.dead_letters
    assert result.quiet_day is not None and [s["sensor_id"] for s in result.silent] == [QUIET_SENSOR]
    assert result.alarms is not None and len(result.alarms.events) == len(result.alarms.expected) == 6
    assert result.ok, result.errors
