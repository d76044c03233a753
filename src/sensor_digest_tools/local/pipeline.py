"""The whole pipeline on this machine: DynamoDB Local, a local SQS, both handlers' services, and
(``api=True``, as ``up`` runs it) the read API on a loopback port.

``LocalPipeline`` starts (or joins) the engine, an SQS endpoint, the tables and queues, builds the
two services with ``build_service(settings, session)`` (the handlers' own wiring) on a boto3
session of its own (the fault layer, the conflict emulator and the request meter are on it), and
runs the two emulated event sources in background threads, as Lambda would run the two functions
side by side. What talks to it from outside (a producer, an operator, the demo's own set-up and
checks: ``sqs()``, ``dynamodb()``) has a second session, without them: only the pipeline under
test meets the injected faults. Nothing is read from or written to the process
environment, so two pipelines can run in one process. ``PipelineOptions`` holds the deployed shape
(``PipelineShape``: the ingest function's environment, the event sources, the queues, with durations
scaled down) and the ports of the engine and of moto's SQS server (each a free one unless given; a
given one that is taken is ``PortInUse``). On an engine it joins (``engine_endpoint``) its tables
carry a suffix of their own, and it deletes them when it stops; the engine stays.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter

from sensor_digest import api, ingest, summary
from sensor_digest.alarms.announce import Announcer
from sensor_digest.alarms.store import AlarmStore
from sensor_digest.config import (
    ApiSettings,
    DeliveryMode,
    IngestSettings,
    QueueType,
    SilenceSettings,
    SummarySettings,
)
from sensor_digest.logs import LOG
from sensor_digest.silence.check import SilencePage
from sensor_digest.store.dynamo import make_client
from sensor_digest.stream_filter import ALARM_FILTER
from sensor_digest_cdk.shape import PipelineShape
from sensor_digest_tools import instruments
from sensor_digest_tools.aws.dynamodb_local import (
    LocalEngine,
    check_port_free,
    create_tables,
    drop_tables,
    running_engine,
    start_engine,
)
from sensor_digest_tools.aws.session import LOCAL_REGION, LocalSession
from sensor_digest_tools.aws.sqs_broker import ENDPOINT as BROKER_ENDPOINT
from sensor_digest_tools.aws.sqs_broker import LocalSqsBroker
from sensor_digest_tools.aws.sqs_server import LocalSqs, QueuePair
from sensor_digest_tools.aws.stream_reader import StreamReader
from sensor_digest_tools.instruments.conflicts import ConflictEmulator
from sensor_digest_tools.instruments.faults import FaultInjector
from sensor_digest_tools.instruments.metering import RequestMeter
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from sensor_digest_tools.lambda_runtime.sqs_event_source import SqsEventSource
from sensor_digest_tools.lambda_runtime.stream_event_source import StreamEventSource
from sensor_digest_tools.local.api_server import LocalApi
from sensor_digest_tools.local.event_bus import LocalEventBus
from sensor_digest_tools.local.silence_watch import watch_silence
from sensor_digest_tools.ops.dlq import queue_depth
from sensor_digest_tools.ops.targets import Target

LOCAL_TIME_SCALE = 0.01
"""Local seconds per deployed second, for the shape's durations: the visibility timeout (200 s as
deployed, 2 s here) and the batching window (20 s, 0.2 s here)."""


@dataclass(frozen=True)
class PipelineOptions:
    """A local pipeline: the deployed ``PipelineShape`` (the same one the construct reads, so the
    event sources, queues and the ingest's environment are the deployed ones by construction), its
    durations scaled by ``time_scale``, and what only a local run has (injected duplicates and faults,
    ports, the kind of SQS)."""

    shape: PipelineShape = field(default_factory=PipelineShape)
    time_scale: float = LOCAL_TIME_SCALE
    duplicate_rate: float = 0.0
    fault_rate: float = 0.0
    seed: int = 7
    verbose: bool = False
    sqs: str = "in-process"  # or "server": moto's SQS server, reachable by other processes (`up`)
    dynamodb_port: int = 0  # the engine this pipeline starts (none with an endpoint given); 0: a free one
    sqs_port: int = 0  # moto's SQS server (sqs="server"); 0: a free one
    api: bool = False  # serve the read API (and its page) on a loopback port
    api_port: int = 0  # its port; 0: a free one
    silence_every: float = 0.0  # run the silence check every so many seconds (`up`); 0: never
    events_file: str | None = None  # keep the announced alarm events in this JSON-lines file too (`up`)

    @property
    def delivery_mode(self) -> DeliveryMode:
        return DeliveryMode(self.shape.delivery_mode)

    @property
    def queue_type(self) -> QueueType:
        return QueueType(self.shape.queue_type)

    @property
    def fifo(self) -> bool:
        return self.shape.fifo

    @property
    def event_batch_size(self) -> int:
        return self.shape.event_batch_size

    @property
    def event_batching_window(self) -> float:
        return self.shape.event_batching_window_seconds * self.time_scale

    @property
    def visibility_timeout(self) -> int:
        """Whole seconds (moto's server takes no fraction), at least 1."""
        return max(1, round(self.shape.visibility_timeout_seconds * self.time_scale))


def route_service_logs(verbose: bool) -> None:
    """The core's loggers (Powertools child loggers) have no Lambda logger above them here: show
    their lines on stderr when ``verbose`` (rejections with their reasons, failed groups), else
    only errors."""
    target = logging.getLogger(LOG.name)
    target.setLevel(logging.INFO if verbose else logging.ERROR)
    if verbose and not target.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(LambdaPowertoolsFormatter())  # JSON, with every keyword field
        target.addHandler(handler)


class LocalPipeline:
    def __init__(
        self, options: PipelineOptions, engine_endpoint: str | None = None, faults: FaultInjector | None = None
    ) -> None:
        """``faults``: the fault layer on the pipeline's session (default: throttling at ``options.fault_rate``)."""
        self.options = options
        self._engine_endpoint = engine_endpoint
        self._stack = ExitStack()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.meter = RequestMeter()
        self.faults = faults or FaultInjector(rate=options.fault_rate, seed=options.seed)
        self.conflicts = ConflictEmulator()
        self.errors: list[BaseException] = []
        self.broker: LocalSqsBroker | None = None
        self.on_silence: Callable[[SilencePage], None] | None = None  # hears each silence check's answer
        events = options.events_file
        self.events = LocalEventBus(None if events is None else Path(events))  # the default bus, kept

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> Target:
        """Start everything; whatever fails (or Ctrl-C) on the way stops what was started already,
        the engine first among it."""
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> Target:
        self._check_ports()
        engine = self._start_engine()
        own_engine = self._engine_endpoint is None
        suffix = "" if own_engine else f"-{uuid.uuid4().hex[:8]}"
        table, ledger = f"SensorDigest{suffix}", f"SensorDigestLedger{suffix}"
        queues, sqs_endpoint = self._start_sqs(f"SensorDigestQueue{suffix}")
        # The services' clients come from a session of this pipeline: meter it and inject faults there.
        self.session = LocalSession({"dynamodb": engine.endpoint, "sqs": sqs_endpoint})
        instruments.install(
            self.session, meter=self.meter, conflicts=self.conflicts, faults=self.faults, sqs=self.broker
        )
        # What is not the pipeline under test (producers, operators, the demo's own set-up and checks)
        # has a session of its own: no instrument on it, only the in-process SQS (``sqs()``, ``dynamodb()``).
        self.outside = LocalSession({"dynamodb": engine.endpoint, "sqs": sqs_endpoint})
        instruments.install(self.outside, sqs=self.broker)
        if not own_engine:  # the engine stays: this pipeline's tables go with the pipeline
            self._stack.callback(drop_tables, engine.endpoint, [table, ledger])
        create_tables(engine.client(), table, ledger)
        route_service_logs(self.options.verbose)
        # the ingest function's own environment, as the construct sets it, read as the function reads it
        environment = self.options.shape.ingest_environment(table=table, ledger=ledger, dlq_url=queues.dlq_url)
        self.ingest_service = ingest.build_service(IngestSettings.from_env(environment), self.session)
        self.summary_service = summary.build_service(SummarySettings(table_name=table), self.session)
        ingest_handler, summary_handler = lambda_handler(self.ingest_service), lambda_handler(self.summary_service)
        api_url = self._start_api(table, ledger) if self.options.api else None
        self.target = Target(
            queue_url=queues.queue_url,
            dlq_url=queues.dlq_url,
            table=table,
            ledger=ledger,
            dynamodb_endpoint=engine.endpoint,
            sqs_endpoint=sqs_endpoint,
            region=LOCAL_REGION,
            origin="local pipeline",
            engine_pid=engine.pid,
            api_url=api_url,
            unknown_sensors=self.options.shape.unknown_sensors,
            timezone=self.options.shape.digest_timezone,
            events_file=self.options.events_file,
        )
        self.sqs_source = SqsEventSource(
            sqs=self.session.client("sqs"),
            queue_url=queues.queue_url,
            handler=ingest_handler,
            batch_size=self.options.event_batch_size,
            batching_window=self.options.event_batching_window,
            duplicate_rate=self.options.duplicate_rate,
            seed=self.options.seed,
        )
        self.stream_source = StreamEventSource(
            reader=StreamReader(engine.endpoint, table),
            handler=summary_handler,
            batch_size=self.options.shape.summary_batch_size,
        )
        # the announcer, as the stack wires it: its own reader of the stream, its own filter
        self.announcer = Announcer(
            events=self.events,  # type: ignore[arg-type]
            alarms=AlarmStore(table_name=table, client=make_client(self.session, max_pool_connections=4)),
        )
        self.alarm_source = StreamEventSource(
            reader=StreamReader(engine.endpoint, table),
            handler=lambda_handler(self.announcer),
            batch_size=self.options.shape.summary_batch_size,
            pattern=ALARM_FILTER,
        )
        sources = (("ingest", self.sqs_source), ("summary", self.stream_source), ("alarms", self.alarm_source))
        for name, source in sources:
            thread = threading.Thread(target=self._loop, args=(source,), name=f"sensor-digest-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)
        if self.options.silence_every > 0:  # the stack's hourly check, on a short period
            watch = partial(
                watch_silence,
                SilenceSettings.from_env(self.options.shape.silence_environment(table=table)),
                self.session,
                every=self.options.silence_every,
                stop=self._stop,
                errors=self.errors,
                heard=lambda: self.on_silence,
            )
            thread = threading.Thread(target=watch, name="sensor-digest-silence", daemon=True)
            thread.start()
            self._threads.append(thread)
        return self.target

    def _check_ports(self) -> None:
        """The ports asked for, before anything starts: ``PortInUse`` names a taken one."""
        if self.options.dynamodb_port and self._engine_endpoint:
            raise ValueError("an engine endpoint to use and a port to start an engine on: give one of them")
        if self.options.dynamodb_port:
            check_port_free(self.options.dynamodb_port, "DynamoDB Local")
        if self.options.sqs_port and self.options.sqs == "server":
            check_port_free(self.options.sqs_port, "SQS")
        if self.options.api and self.options.api_port:
            check_port_free(self.options.api_port, "the read API")

    def _start_api(self, table: str, ledger: str) -> str:
        """The read API's service, as its handler builds it, served on loopback: its URL."""
        self.api_service = api.build_service(self._api_settings(table, ledger), self.session)
        server = LocalApi(lambda_handler(self.api_service), port=self.options.api_port)
        self._stack.callback(server.stop)
        return server.start()

    def _api_settings(self, table: str, ledger: str) -> ApiSettings:
        """The read API's settings read from the environment the construct gives it
        (``PipelineShape.api_environment``), as its function reads them."""
        return ApiSettings.from_env(self.options.shape.api_environment(table=table, ledger=ledger))

    def _start_engine(self) -> LocalEngine:
        """The engine at the endpoint given, else one of this pipeline's own (stopped with it)."""
        if not self.options.dynamodb_port:
            return self._stack.enter_context(running_engine(self._engine_endpoint))
        engine = start_engine(port=self.options.dynamodb_port)
        self._stack.callback(engine.stop)
        return engine

    def sqs(self) -> Any:
        """An SQS client of this pipeline's queues from outside it (the in-process SQS answers only the
        clients of the sessions it is installed on): a producer's, an operator's, the demo's."""
        return self.outside.client("sqs")

    def dynamodb(self) -> Any:
        """A client of this pipeline's tables from outside it: the faults, conflicts and meter of the
        pipeline's own session are not on it, so the demo's set-up and checks never meet them."""
        return self.outside.client("dynamodb")

    def in_queue(self) -> int:
        """The ingest queue's messages, visible or in flight, read from outside (``sqs()``); -1 if SQS does not say."""
        depth = queue_depth(self.sqs(), str(self.target.queue_url))
        return -1 if depth is None else depth

    def _start_sqs(self, name: str) -> tuple[QueuePair, str]:
        if self.options.sqs == "server":
            if self.options.fifo:  # moto numbers FIFO messages at random; ordered mode needs growing numbers
                raise ValueError("a FIFO pipeline runs on the in-process SQS only: moto's sequence numbers do not grow")
            server = LocalSqs(port=self.options.sqs_port)
            self._stack.callback(server.stop)
            pair = server.create_queues(
                name,
                visibility_timeout=self.options.visibility_timeout,
                max_receive_count=self.options.shape.max_receive_count,
            )
            return pair, server.endpoint
        self.broker = LocalSqsBroker()
        fifo, suffix = self.options.fifo, ".fifo" if self.options.fifo else ""
        shape = self.options.shape
        dlq_url = self.broker.create_queue(
            f"{name}DLQ{suffix}", max_message_bytes=shape.dead_letter_max_message_bytes, fifo=fifo
        )
        queue_url = self.broker.create_queue(
            f"{name}{suffix}",
            visibility_timeout=shape.visibility_timeout_seconds * self.options.time_scale,
            dead_letter_url=dlq_url,
            max_receive_count=shape.max_receive_count,
            max_message_bytes=shape.ingest_max_message_bytes,
            fifo=fifo,
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
        if self.in_queue() != 0:
            return False
        streams = (self.stream_source, self.alarm_source)
        before = [len(source.stats.cycles) for source in streams]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(
            len(source.stats.cycles) < cycles + 2 for source, cycles in zip(streams, before, strict=True)
        ):
            time.sleep(0.02)  # two full cycles of each stream reader after the queue emptied: every record was read
        return all(source.pending == 0 for source in streams) and self.in_queue() == 0

    def wait_until_drained(self, timeout: float = 600, tick: Any = None) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if tick is not None:
                tick()
            if self.drained():
                return True
            time.sleep(0.1)
        return False
