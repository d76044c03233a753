"""Running a strategy as the stack deploys it: engines, fresh tables, one run, the summary path.

Every strategy is a Lambda handler run as the SQS event source runs it with the stack's settings
(batch size, maximum concurrency, worker threads, timeout) on a backlog, against a DynamoDB Local
of its own with DynamoDB's transaction conflicts emulated, metered, raw or under the latency model
of a networked DynamoDB (``sensor_digest_tools.instruments.latency``).
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from bench.esm import Drained, drain, drain_fifo, fifo_records
from bench.meter import PeakRss
from bench.plan import Plan
from bench.strategies import FIFO_STRATEGIES, STRATEGIES
from bench.workloads import QUICK_MESSAGES, Workload, realtime, seed_history, seed_summaries, warm_up
from sensor_digest import summary
from sensor_digest.alarms.store import RuleStore, is_alarm_item
from sensor_digest.config import SummarySettings
from sensor_digest.store import schema
from sensor_digest.store.reads import by_sensor, day_counts, scan_all, summaries
from sensor_digest.store.sizes import item_bytes
from sensor_digest.stream_filter import matches_filter
from sensor_digest_cdk.shape import PipelineShape
from sensor_digest_tools import instruments
from sensor_digest_tools.aws.dynamodb_local import JIT_OPTION, create_tables, running_engine
from sensor_digest_tools.aws.session import LocalSession
from sensor_digest_tools.aws.sqs_broker import FIRST_SEQUENCE_NUMBER
from sensor_digest_tools.aws.stream_reader import StreamReader
from sensor_digest_tools.instruments.conflicts import ConflictEmulator
from sensor_digest_tools.instruments.latency import LatencyModel
from sensor_digest_tools.instruments.metering import RequestMeter
from sensor_digest_tools.lambda_runtime.events import FakeContext, QueuedMessage, sqs_record, stream_event
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler


@dataclass
class Engine:
    session: LocalSession
    endpoint: str
    meter: RequestMeter
    conflicts: ConflictEmulator
    latency: LatencyModel | None

    @property
    def client(self) -> Any:
        return self.session.client("dynamodb")


@contextmanager
def engine(*, modeled: bool, java_options: tuple[str, ...] = (JIT_OPTION,)) -> Iterator[Engine]:
    """A DynamoDB Local of its own for each run (the engine slows down as its in-memory database
    grows, which would penalise whichever run came later), metered, with DynamoDB's transaction
    conflicts, and the latency model when ``modeled``."""
    with running_engine(None, java_options) as local:
        session = LocalSession({"dynamodb": local.endpoint})
        meter, conflicts = RequestMeter(), ConflictEmulator()
        latency = LatencyModel() if modeled else None
        instruments.install(session, meter=meter, conflicts=conflicts, latency=latency)
        yield Engine(session, local.endpoint, meter, conflicts, latency)


def fresh_tables(client: Any, strategy: str) -> dict[str, str]:
    suffix = uuid.uuid4().hex[:6]
    names = {"table": f"Bench-{suffix}", "ledger": f"BenchLedger-{suffix}", "idempotency": f"BenchIdem-{suffix}"}
    create_tables(client, names["table"], names["ledger"])
    if strategy == "b":
        client.create_table(
            TableName=names["idempotency"],
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        )
    return names


def run(
    key: str,
    workload: Workload,
    settings: PipelineShape,
    *,
    modeled: bool = False,
    history: bool = False,
    history_days: int = 365,
    under_way: bool = False,
    summary_batches: tuple[int, ...] = (),
    rules: Any = None,
) -> dict[str, Any]:
    """One strategy on one workload at ``settings``: ingest through the event source, then (for
    ``summary_batches``) the summary path on the stream the run produced. ``history``: each sensor
    has ``history_days`` of day items and their month items before the workload's day. ``rules``: an
    alarm ``RuleSet`` stored before the handler starts (bench/alarms.py)."""
    label, make = STRATEGIES[key]
    with engine(modeled=modeled) as e:
        tables = fresh_tables(e.client, key)
        if rules is not None:
            RuleStore(ledger_table_name=tables["ledger"], client=e.client).save(rules, expected=0, by="bench", now=0)
        baseline: Counter[tuple[int, str]] = Counter()
        reader = StreamReader(e.endpoint, tables["table"], client=e.client) if summary_batches else None
        handler = make(e.session, tables, settings)
        fifo = key in FIFO_STRATEGIES
        fifo_settings = replace(settings, queue_type="fifo") if fifo else settings
        batch_size, concurrency = fifo_settings.event_batch_size, fifo_settings.event_max_concurrency
        feed = _feeder(handler, fifo, batch_size, concurrency, settings.ingest_timeout_seconds)
        if history:
            baseline = seed_history(e.client, tables["table"], workload.sensors, days=history_days)
        if under_way:  # each sensor-day's first report counted by this very strategy, not metered
            warm, baseline = warm_up(set(workload.truth))
            feed(warm, set())
            seed_summaries(e.client, tables["table"], baseline)
        if reader:
            reader.poll()  # the history's own records are not the workload's
        requests0, units0 = e.meter.snapshot()
        reads0 = e.meter.read_units
        cancelled0, added0 = Counter(e.meter.cancelled_units), e.latency.added_seconds if e.latency else 0.0
        with PeakRss() as memory:
            # FIFO: the workload's repeated deliveries become lost deletes (SQS FIFO repeats in order)
            drained = feed(workload.messages if fifo else workload.deliveries, workload.repeated_ids)
        requests, units = (a - b for a, b in zip(e.meter.snapshot(), (requests0, units0), strict=True))
        reads = e.meter.read_units - reads0
        alarm_writes = sum(int(i[schema.VERSION]["N"]) for i in scan_all(e.client, tables["table"]) if is_alarm_item(i))
        cancelled = Counter(e.meter.cancelled_units)
        cancelled.subtract(cancelled0)
        counts = Counter(day_counts(e.client, tables["table"]))
        counts.subtract(baseline)
        n = len(workload.messages)
        result: dict[str, Any] = {
            "workload": workload.name,
            "strategy": key,
            "label": label,
            "mode": "model" if modeled else "raw",
            "history": history,
            "batch_size": batch_size,
            "concurrency": concurrency,
            "messages": n,
            "deliveries": len(workload.deliveries),
            "seconds": drained.seconds,
            "messages_per_s": n / drained.seconds,
            "requests_per_message": requests / n,
            "write_units_per_message": units / n,
            "read_units_per_message": reads / n,
            "cancelled_units_per_message": {cause: units / n for cause, units in cancelled.items() if units},
            "invocations": drained.invocations,
            "slowest_invocation_s": drained.slowest_invocation,
            "listed": drained.listed,
            "alarm_writes": alarm_writes,
            "conflicts": e.conflicts.conflicts,
            "overcount": sum(max(0, c - workload.truth.get(k, 0)) for k, c in counts.items()),
            "undercount": sum(max(0, t - counts.get(k, 0)) for k, t in workload.truth.items()),
            "peak_rss_mb": memory.peak / 2**20,
            "largest_item_bytes": max(
                (item_bytes(i) for name in ("table", "ledger") for i in scan_all(e.client, tables[name])), default=0
            ),
        }
        if e.latency:  # the modeled delays alone, as many in flight as the handler keeps: no CPU at all
            # (a), (b): one write at a time; (c), (d): the workers; (e): a FIFO batch is mostly one
            # sensor-day, one write (a bound from below on its in-flight writes, so an upper estimate)
            in_flight = concurrency * (settings.ingest_max_workers if key in "cdfg" else 1)
            result["latency_bound_msg_per_s"] = n / ((e.latency.added_seconds - added0) / in_flight)
        if reader:
            clear = not (history or under_way)  # seeded summary items stay: they are the history
            result["summary"] = summary_path(e, reader, tables["table"], settings, summary_batches, n, clear)
        return result


def _feeder(
    handler: Any, fifo: bool, batch_size: int, concurrency: int, timeout_s: int
) -> Callable[[list[QueuedMessage], set[str]], Drained]:
    """How messages reach ``handler``: the SQS event source on a backlog (``esm.drain``), or on a
    FIFO queue (``esm.drain_fifo``, with ``lost`` the message ids whose delete is lost once)."""

    sent = 0  # messages this queue numbered so far: a FIFO queue's sequence numbers only grow

    def feed(messages: list[QueuedMessage], lost: set[str]) -> Drained:
        nonlocal sent
        if fifo:
            first, sent = FIRST_SEQUENCE_NUMBER + sent, sent + len(messages)
            return drain_fifo(
                handler,
                fifo_records(messages, first=first),
                lost_deletes=lost,
                batch_size=batch_size,
                concurrency=concurrency,
                timeout_s=timeout_s,
            )
        records = [sqs_record(m) for m in messages]
        return drain(handler, records, batch_size=batch_size, concurrency=concurrency, timeout_s=timeout_s)

    return feed


def summary_path(
    e: Engine, reader: StreamReader, table: str, settings: PipelineShape, batches: tuple[int, ...], n: int, clear: bool
) -> list[dict[str, Any]]:
    """The summary handler on the stream the ingest run produced, in stream batches of each size
    (the stream read as one shard, in order: the least coalescing a batch can see). ``clear``
    deletes the summary items between sizes, so each size starts from the same table."""
    records = [r for r in reader.poll() if matches_filter(r)]
    handler = lambda_handler(summary.build_service(SummarySettings(table_name=table), e.session))
    out = []
    for size in batches:
        if clear:
            for item in scan_all(e.client, table):
                if schema.is_summary(item):
                    e.client.delete_item(TableName=table, Key={k: item[k] for k in (schema.SENSOR_ID, schema.DATE)})
        requests0, units0 = e.meter.snapshot()
        started, failures = time.perf_counter(), 0
        for start in range(0, len(records), size):
            event = stream_event(records[start : start + size], reader.stream_arn)
            response = handler(event, FakeContext(timeout_ms=settings.summary_timeout_seconds * 1000))
            failures += len(response["batchItemFailures"])
        seconds = time.perf_counter() - started
        requests, units = (a - b for a, b in zip(e.meter.snapshot(), (requests0, units0), strict=True))
        days = by_sensor(day_counts(e.client, table))
        out.append(
            {
                "batch_size": size,
                "records": len(records),
                "records_per_s": len(records) / seconds,
                "writes_per_record": requests / len(records),
                "write_units_per_message": units / n,
                "failures": failures,
                "exact": summaries(e.client, table) == days,
            }
        )
    return out


def run_planned(plan: Plan, name: str, workload: Workload) -> list[dict[str, Any]]:
    """Every run the plan makes of workload ``name``, in the plan's order."""
    return [
        run(r.strategy, workload, plan.settings, modeled=r.modeled, summary_batches=r.summary_batches)
        for r in plan.runs(name)
    ]


def run_aged(workload: Workload, settings: PipelineShape, history_days: int = 365) -> dict[str, Any]:
    """(c) on ``workload`` with ``history_days`` of history per sensor (a year by default), and its
    summary path at the stack's stream batch size."""
    return run(
        "c", workload, settings, history=True, history_days=history_days, summary_batches=(settings.summary_batch_size,)
    )


CONCURRENCY_MESSAGES = 8_000
RAISED_CONCURRENCY = 10


def run_concurrency(settings: PipelineShape, *, quick: bool = False) -> list[dict[str, Any]]:
    """(c) on W1 at the stack's ``ingest_max_concurrency`` and at 10 invocations at once (what a user
    who outgrows the default sets), under the latency model: what the raised setting costs."""
    workload = realtime(QUICK_MESSAGES if quick else CONCURRENCY_MESSAGES)
    rows = []
    for concurrency in (settings.ingest_max_concurrency, RAISED_CONCURRENCY):
        result = run("c", workload, replace(settings, ingest_max_concurrency=concurrency), modeled=True)
        rows.append(result)
        print(
            f"  W1, {len(workload.messages):,} messages, {concurrency} invocations at once: "
            f"{result['write_units_per_message']:.3f} WRU/msg, {result['requests_per_message']:.3f} req/msg, "
            f"{result['messages_per_s']:,.0f} msg/s, {result['conflicts']} conflicts, "
            f"{result['overcount']}/{result['undercount']} over/under"
        )
    return rows
