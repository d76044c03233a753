"""``sensor-digest demo``: synthetic traffic through the whole local pipeline, checked against the truth."""

from __future__ import annotations

import random
import statistics
import threading
import time
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sensor_digest.config import DeliveryMode, QueueType
from sensor_digest.store.reads import by_sensor, day_counts, summaries
from sensor_digest_cdk.shape import FIFO_MAX_BATCH, PipelineShape
from sensor_digest_tools.instruments.faults import FaultInjector
from sensor_digest_tools.local.alarm_demo import AlarmCheck, run_alarm_scenario, set_alarm_rule
from sensor_digest_tools.local.pipeline import LocalPipeline, PipelineOptions
from sensor_digest_tools.local.quiet import QUIET_SENSOR, fall_silent, registered_silence
from sensor_digest_tools.local.readings_check import readings_differences
from sensor_digest_tools.local.traffic import DEMO_READINGS, Traffic, generate
from sensor_digest_tools.ops.dlq import DeadLetter, drain_dead_letters, redrive
from sensor_digest_tools.ops.producer import batch_entry, is_fifo


@dataclass(frozen=True)
class DemoOptions:
    """What the demo sends and how the local AWS treats it (``sensor-digest demo --help``)."""

    messages: int = 5000  # reports sent, poison included
    sensors: int = 20
    days: int = 3
    duplicate_rate: float = 0.1  # deliveries SQS repeats (lost deletes); on FIFO also producer retries
    poison_rate: float = 0.01  # reports that break the schema
    fault_rate: float = 0.01  # the pipeline's DynamoDB writes throttled (never the demo's own calls)
    seed: int = 7
    delivery_mode: DeliveryMode = DeliveryMode.EXACTLY_ONCE
    queue_type: QueueType = QueueType.STANDARD
    batch_size: int = 100  # on FIFO at most 10 (Lambda's limit), with no window
    engine_endpoint: str | None = None
    verbose: bool = False

    @property
    def shape(self) -> PipelineShape:
        """The deployed shape with this demo's delivery mode, queue type and batch size (on FIFO at
        most 10): ``ShapeError`` for what a deployment would refuse (FIFO with at-least-once)."""
        return PipelineShape(
            delivery_mode=self.delivery_mode.value,  # type: ignore[arg-type]
            queue_type=self.queue_type.value,  # type: ignore[arg-type]
            ingest_batch_size=self.batch_size,
            fifo_batch_size=min(self.batch_size, FIFO_MAX_BATCH),
        )


@dataclass(frozen=True)
class DemoStats:
    """What happened on the way: deliveries, duplicates, faults, retries."""

    messages: int
    valid: int
    poison: int
    deliveries: int
    redeliveries: int
    duplicates_injected: int
    faults_injected: int
    failures_listed: int
    ingest_batches: int
    stream_records: int
    stream_filtered_out: int
    stream_batches: int
    stream_retries: int
    stream_given_up: int
    redriven: int
    producer_retries: int = 0  # FIFO: reports sent twice with one deduplication id (SQS keeps one)


@dataclass(frozen=True)
class DemoFigures:
    """What it measured."""

    elapsed_s: float
    messages_per_s: float
    ingest_requests_per_message: float
    summary_requests_per_message: float
    lag_p50_s: float
    lag_p95_s: float
    lag_max_s: float


@dataclass
class DemoResult:
    options: DemoOptions
    traffic: Traffic
    counts: dict[tuple[int, str], int]
    summaries: dict[int, dict[str, int]]
    dead_letters: list[DeadLetter]
    poison_ids: set[str]
    figures: DemoFigures
    stats: DemoStats
    errors: list[str] = field(default_factory=list)
    silent: list[dict[str, Any]] = field(default_factory=list)  # the check's answer (quiet.py)
    quiet_day: str | None = None  # the day the quiet sensor fell silent at noon
    reading_differences: list[str] = field(default_factory=list)  # statistics read back against the truth
    alarms: AlarmCheck | None = None  # the alarm scenario (alarm_demo.py)

    @property
    def readings_exact(self) -> bool:
        return not self.reading_differences

    @property
    def silence_found(self) -> bool:
        """The silence check found the quiet sensor, and only it (the one sensor registered)."""
        return self.quiet_day is None or [s["sensor_id"] for s in self.silent] == [QUIET_SENSOR]

    @property
    def counts_exact(self) -> bool:
        return self.counts == dict(self.traffic.truth)

    @property
    def day_item_summaries(self) -> dict[int, dict[str, int]]:
        """What each sensor's summary must equal: its day items' counts (whatever they are: in
        at-least-once mode they may exceed the traffic, and the summary follows them)."""
        return by_sensor(self.counts)

    @property
    def summaries_exact(self) -> bool:
        return self.summaries == self.day_item_summaries

    @property
    def poison_kept(self) -> bool:
        rejected = {d.source_message_id for d in self.dead_letters if d.error}
        return rejected == self.poison_ids and all(d.error for d in self.dead_letters)

    @property
    def batch_size(self) -> int:
        """The batch size the event source used (a FIFO queue's is at most 10)."""
        return self.options.shape.event_batch_size

    @property
    def ok(self) -> bool:
        return (
            self.counts_exact
            and self.summaries_exact
            and self.readings_exact
            and self.poison_kept
            and self.silence_found
            and (self.alarms is None or self.alarms.ok)
            and not self.errors
        )


@dataclass
class Sent:
    """What the sender did: when each message was sent, the poison's ids, producer retries."""

    at: dict[str, float] = field(default_factory=dict)
    poison_ids: set[str] = field(default_factory=set)
    producer_retries: int = 0


def send_traffic(
    sqs: Any,
    queue_url: str,
    traffic: Traffic,
    backlog: Callable[[], int] | None = None,
    max_backlog: int = 400,
    retry_rate: float = 0.0,
    seed: int = 0,
) -> Sent:
    """Send every body (SendMessageBatch, ten at a time).

    Sensors report in real time, so the sender keeps at most ``max_backlog`` messages waiting
    (moto's SQS also scans its whole queue on every call, which a deep backlog makes slow). On a
    FIFO queue each report goes in its sensor's group with its event id as deduplication id, and a
    share ``retry_rate`` of them is sent a second time at once, as a producer that missed the
    answer would: SQS drops the repeat (the five-minute deduplication window).
    """
    sent = Sent()
    fifo, rng = is_fifo(queue_url), random.Random(seed)
    for start in range(0, len(traffic.bodies), 10):
        while backlog is not None and start % 100 == 0 and backlog() > max_backlog:
            time.sleep(0.02)
        entries = [
            batch_entry(str(i), traffic.bodies[i], fifo=fifo, fallback_id=f"m-{i}")
            for i in range(start, min(start + 10, len(traffic.bodies)))
        ]
        response = sqs.send_message_batch(QueueUrl=queue_url, Entries=entries)
        if response.get("Failed"):
            raise RuntimeError(f"SQS refused messages: {response['Failed']}")
        retried = [e for e in entries if fifo and rng.random() < retry_rate]
        if retried:
            again = sqs.send_message_batch(QueueUrl=queue_url, Entries=retried)
            if again.get("Failed"):
                raise RuntimeError(f"SQS refused messages: {again['Failed']}")
            sent.producer_retries += len(retried)
        now = time.monotonic()
        for ok in response["Successful"]:
            sent.at[ok["MessageId"]] = now
            if int(ok["Id"]) in traffic.poison:
                sent.poison_ids.add(ok["MessageId"])
    return sent


def lags(
    sent_at: dict[str, float], done_at: dict[str, float], cycles: list[tuple[float, float]], skip: set[str]
) -> list[float]:
    """Send -> summary for each counted message: the end of the first stream cycle that began after
    the message's batch was done (that cycle read the message's stream record and summarised it)."""
    starts = [c[0] for c in cycles]
    out = []
    for message_id, sent in sent_at.items():
        done = done_at.get(message_id)
        if message_id in skip or done is None:
            continue
        index = bisect_left(starts, done)
        if index < len(cycles):
            out.append(cycles[index][1] - sent)
    return out


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


REDRIVE_ROUNDS = 5
SENDER_THREAD = "sensor-digest-sender"  # the demo's producer: a thread of the demo's own, outside the pipeline


def run_demo(
    options: DemoOptions, progress: Callable[[int, int], None] | None = None, faults: FaultInjector | None = None
) -> DemoResult:
    """The demo: the traffic through the pipeline, which meets the injected faults (``faults``: its fault
    layer, by default throttling at ``options.fault_rate``); the demo's own steps (sending, watching the
    queue, the redrive, registering the quiet sensor, the silence check, reading counts, summaries and
    dead letters) use the clients from outside the pipeline (``LocalPipeline.sqs()``, ``dynamodb()``)."""
    traffic = generate(
        messages=options.messages,
        sensors=options.sensors,
        days=options.days,
        poison_rate=options.poison_rate,
        seed=options.seed,
        readings=DEMO_READINGS,
    )
    quiet_day = fall_silent(traffic)
    pipeline = LocalPipeline(
        PipelineOptions(
            shape=options.shape,
            duplicate_rate=options.duplicate_rate,
            fault_rate=options.fault_rate,
            seed=options.seed,
            verbose=options.verbose,
        ),
        engine_endpoint=options.engine_endpoint,
        faults=faults,
    )
    with pipeline:
        target = pipeline.target
        set_alarm_rule(pipeline)
        started = time.monotonic()
        sent = Sent()

        def sender() -> None:
            nonlocal sent
            sent = send_traffic(
                pipeline.sqs(),
                str(target.queue_url),
                traffic,
                backlog=pipeline.in_queue,
                retry_rate=options.duplicate_rate,
                seed=options.seed,
            )

        sending = threading.Thread(target=sender, name=SENDER_THREAD)
        sending.start()

        def tick() -> None:
            if progress is not None:
                progress(len(pipeline.sqs_source.stats.done_at), len(traffic.bodies))

        while sending.is_alive():
            tick()
            time.sleep(0.1)
        sending.join()
        drained = pipeline.wait_until_drained(tick=tick)
        # as an operator would: redrive what SQS moved to the dead-letter queue itself (no reason:
        # it failed maxReceiveCount times), the rejected messages stay where they are; under heavy
        # faults a redriven message can fail its receives again, so a few rounds
        moved_by_sqs = 0
        for _ in range(REDRIVE_ROUNDS):
            moved = redrive(
                pipeline.sqs(), str(target.dlq_url), str(target.queue_url), select=lambda letter: letter.error is None
            ).moved
            if not moved:
                break
            moved_by_sqs += moved
            drained = pipeline.wait_until_drained(tick=tick) and drained
        elapsed = time.monotonic() - started
        tick()
        ddb, sqs = pipeline.dynamodb(), pipeline.sqs()
        sqs_stats, stream_stats = pipeline.sqs_source.stats, pipeline.stream_source.stats
        lag = lags(sent.at, sqs_stats.done_at, stream_stats.cycles, skip=sent.poison_ids)
        valid = traffic.valid
        result = DemoResult(
            options=options,
            traffic=traffic,
            counts=day_counts(ddb, str(target.table)),
            summaries=summaries(ddb, str(target.table)),
            dead_letters=drain_dead_letters(sqs, str(target.dlq_url)),
            poison_ids=sent.poison_ids,
            figures=DemoFigures(
                elapsed_s=elapsed,
                messages_per_s=len(traffic.bodies) / elapsed,
                ingest_requests_per_message=pipeline.meter.counts["ingest"] / max(valid, 1),
                summary_requests_per_message=pipeline.meter.counts["summary"] / max(valid, 1),
                lag_p50_s=percentile(lag, 50),
                lag_p95_s=percentile(lag, 95),
                lag_max_s=max(lag) if lag else float("nan"),
            ),
            stats=DemoStats(
                messages=len(traffic.bodies),
                valid=valid,
                poison=len(traffic.poison),
                deliveries=sqs_stats.deliveries,
                redeliveries=sqs_stats.redeliveries,
                duplicates_injected=sqs_stats.duplicates_injected,
                faults_injected=pipeline.faults.injected,
                failures_listed=sqs_stats.failures_listed,
                ingest_batches=sqs_stats.batches,
                stream_records=stream_stats.records_read,
                stream_filtered_out=stream_stats.records_filtered_out,
                stream_batches=stream_stats.batches,
                stream_retries=stream_stats.retries,
                stream_given_up=stream_stats.sent_to_on_failure,
                redriven=moved_by_sqs,
                producer_retries=sent.producer_retries,
            ),
            errors=[repr(e) for e in pipeline.errors],
        )
        result.reading_differences = readings_differences(ddb, str(target.table), traffic)
        if quiet_day is not None:
            result.quiet_day = quiet_day
            silent = registered_silence(ddb, str(target.table), str(target.ledger), quiet_day)
            result.silent = [s.as_json() for s in silent]
        result.alarms = run_alarm_scenario(pipeline, wait=pipeline.wait_until_drained)
        if not drained:
            result.errors.append("the pipeline did not drain within the time limit")
    return result
