"""The whole pipeline on this machine: DynamoDB Local, a local SQS, both real handlers.

``LocalPipeline`` starts (or joins) the engine, an SQS endpoint, the tables and queues, points
the handlers' environment at them, and runs the two emulated event sources in background
threads, as Lambda would run the two functions side by side.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import boto3

from sensor_digest.dead_letters import SQS_MAX_MESSAGE_BYTES, source_queue_max_bytes
from sensor_digest_local.broker import ENDPOINT as BROKER_ENDPOINT
from sensor_digest_local.broker import LocalSqsBroker
from sensor_digest_local.engine import LOCAL_CREDENTIALS, LOCAL_REGION, REPO_ROOT, create_tables, running_engine
from sensor_digest_local.faults import FaultInjector
from sensor_digest_local.metering import RequestMeter
from sensor_digest_local.sqs_server import LocalSqs, QueuePair
from sensor_digest_local.sqs_source import SqsEventSource
from sensor_digest_local.stream_source import StreamEventSource
from sensor_digest_local.streams import StreamReader
from sensor_digest_local.targets import Target

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


@dataclass(frozen=True)
class PipelineOptions:
    delivery_mode: str = "exactly-once"
    batch_size: int = 100
    batching_window: float = 0.1
    visibility_timeout: int = 2
    max_receive_count: int = 5
    duplicate_rate: float = 0.0
    fault_rate: float = 0.0
    stream_batch_size: int = 100
    seed: int = 7
    verbose: bool = False
    sqs: str = "in-process"  # or "server": moto's SQS server, reachable by other processes (`up`)


def load_handlers() -> tuple[Handler, Handler]:
    """The real Lambda entry points, imported from the asset root ``functions/``."""
    functions = str(REPO_ROOT / "functions")
    if functions not in sys.path:
        sys.path.insert(0, functions)
    modules = [importlib.import_module("ingest.handler"), importlib.import_module("summary.handler")]
    for module in modules:
        module.service.cache_clear()
    ingest, summary = (_invoker(m) for m in modules)
    return ingest, summary


def _invoker(module: Any) -> Handler:
    """Calls the handler as Lambda would; with metrics disabled, Powertools' flush keeps the metric
    set (it clears only after printing), so it is cleared here after each invocation."""

    def invoke(event: dict[str, Any], context: Any) -> dict[str, Any]:
        try:
            return dict(module.handler(event, context))
        finally:
            if os.environ.get("POWERTOOLS_METRICS_DISABLED") == "true":
                module.metrics.clear_metrics()

    return invoke


class LocalPipeline:
    def __init__(self, options: PipelineOptions, engine_endpoint: str | None = None) -> None:
        self.options = options
        self._engine_endpoint = engine_endpoint
        self._stack = ExitStack()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._saved_env: dict[str, str | None] = {}
        self.meter = RequestMeter()
        self.faults = FaultInjector(rate=options.fault_rate, seed=options.seed)
        self.errors: list[BaseException] = []
        self.broker: LocalSqsBroker | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> Target:
        engine = self._stack.enter_context(running_engine(self._engine_endpoint))
        own_engine = self._engine_endpoint is None
        suffix = "" if own_engine else f"-{uuid.uuid4().hex[:8]}"
        table, ledger = f"SensorDigest{suffix}", f"SensorDigestLedger{suffix}"
        queues, sqs_endpoint = self._start_sqs(f"SensorDigestQueue{suffix}")
        self._set_env(
            {
                "AWS_ACCESS_KEY_ID": LOCAL_CREDENTIALS["aws_access_key_id"],
                "AWS_SECRET_ACCESS_KEY": LOCAL_CREDENTIALS["aws_secret_access_key"],
                "AWS_DEFAULT_REGION": LOCAL_REGION,
                "AWS_ENDPOINT_URL_DYNAMODB": engine.endpoint,
                "AWS_ENDPOINT_URL_SQS": sqs_endpoint,
                "TABLE_NAME": table,
                "LEDGER_TABLE_NAME": ledger,
                "DLQ_URL": queues.dlq_url,
                "DELIVERY_MODE": self.options.delivery_mode,
                "POWERTOOLS_METRICS_DISABLED": "true",
                "POWERTOOLS_TRACE_DISABLED": "true",
                "POWERTOOLS_LOG_LEVEL": "INFO" if self.options.verbose else "ERROR",
            }
        )
        self._stack.callback(self._restore_env)
        # The handlers build their clients from the default session: meter it and inject faults there.
        boto3.setup_default_session(region_name=LOCAL_REGION, **LOCAL_CREDENTIALS)
        self.meter.install(boto3.DEFAULT_SESSION)
        self.faults.install(boto3.DEFAULT_SESSION)
        if self.broker is not None:
            self.broker.install(boto3.DEFAULT_SESSION)
        self._stack.callback(boto3.setup_default_session)
        create_tables(engine.client(), table, ledger)
        ingest, summary = load_handlers()
        self.target = Target(
            queue_url=queues.queue_url,
            dlq_url=queues.dlq_url,
            table=table,
            ledger=ledger,
            dynamodb_endpoint=engine.endpoint,
            sqs_endpoint=sqs_endpoint,
            region=LOCAL_REGION,
            origin="local pipeline",
        )
        self.sqs_source = SqsEventSource(
            sqs=self.target.sqs(),
            queue_url=queues.queue_url,
            handler=ingest,
            batch_size=self.options.batch_size,
            batching_window=self.options.batching_window,
            duplicate_rate=self.options.duplicate_rate,
            seed=self.options.seed,
        )
        self.stream_source = StreamEventSource(
            reader=StreamReader(engine.endpoint, table),
            handler=summary,
            batch_size=self.options.stream_batch_size,
        )
        for name, source in (("ingest", self.sqs_source), ("summary", self.stream_source)):
            thread = threading.Thread(target=self._loop, args=(source,), name=f"sensor-digest-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)
        return self.target

    def _start_sqs(self, name: str) -> tuple[QueuePair, str]:
        if self.options.sqs == "server":
            server = LocalSqs()
            self._stack.callback(server.stop)
            pair = server.create_queues(
                name,
                visibility_timeout=self.options.visibility_timeout,
                max_receive_count=self.options.max_receive_count,
            )
            return pair, server.endpoint
        self.broker = LocalSqsBroker()
        dlq_url = self.broker.create_queue(f"{name}DLQ", max_message_bytes=SQS_MAX_MESSAGE_BYTES)
        queue_url = self.broker.create_queue(
            name,
            visibility_timeout=self.options.visibility_timeout,
            dead_letter_url=dlq_url,
            max_receive_count=self.options.max_receive_count,
            max_message_bytes=source_queue_max_bytes(SQS_MAX_MESSAGE_BYTES),
        )
        return QueuePair(queue_url=queue_url, dlq_url=dlq_url), BROKER_ENDPOINT

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)
        self._stack.close()

    def __enter__(self) -> LocalPipeline:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- running --------------------------------------------------------------------------

    def _loop(self, source: Any) -> None:
        while not self._stop.is_set():
            try:
                if source.poll_once() == 0:
                    time.sleep(0.02)
            except Exception as exc:  # keep the emulator alive; the error is reported at the end
                self.errors.append(exc)
                time.sleep(0.2)

    def drained(self) -> bool:
        """Nothing left in the queue (visible or in flight) and the stream side caught up."""
        if self.sqs_source.in_queue() != 0:
            return False
        cycles_before = len(self.stream_source.stats.cycles)
        deadline = time.monotonic() + 10
        while len(self.stream_source.stats.cycles) < cycles_before + 2 and time.monotonic() < deadline:
            time.sleep(0.02)  # two full stream cycles after the queue emptied: every record was read
        return self.stream_source.pending == 0 and self.sqs_source.in_queue() == 0

    def wait_until_drained(self, timeout: float = 600, tick: Any = None) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if tick is not None:
                tick()
            if self.drained():
                return True
            time.sleep(0.1)
        return False

    # -- environment ----------------------------------------------------------------------

    def _set_env(self, values: dict[str, str]) -> None:
        for key, value in values.items():
            self._saved_env.setdefault(key, os.environ.get(key))
            os.environ[key] = value

    def _restore_env(self) -> None:
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
