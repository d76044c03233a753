"""What both Lambda entry points share: Powertools, the service built once per container, the
report published as metrics and one log line, the partial batch response returned.

``ingest/handler.py`` and ``summary/handler.py`` are each one ``LambdaEntry``: a name, how to build
the service (the module's ``build_service`` with settings from the environment and a default
boto3 session: ``from_environment``), and the log line's message.

The service is built on the first invocation and kept while the environment it was built from
stays the same: the settings' variables (``config.ENVIRONMENT_VARIABLES``) and botocore's
(``AWS_*``). On Lambda that is the container's life; in a test suite that sets another
``TABLE_NAME`` (or starts a fresh ``moto.mock_aws`` with other credentials) the next invocation
builds a new one. ``reset()`` drops it outright.

Every metric carries the ``service`` dimension (Powertools') and, where the construct set
``SENSOR_DIGEST_PIPELINE``, the ``pipeline`` dimension with its value: two pipelines in one account
never publish into one series.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any, Generic, Protocol, TypeVar

import boto3
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from sensor_digest import names
from sensor_digest.config import ENVIRONMENT_VARIABLES, pipeline_name
from sensor_digest.store.dynamo import ClientSource


class Report(Protocol):
    def response(self) -> dict[str, Any]: ...

    def metrics(self) -> Mapping[str, int]: ...

    def log_fields(self) -> Mapping[str, Any]: ...


class Service(Protocol):
    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> Report: ...


S = TypeVar("S", bound=Service)
T = TypeVar("T")


class LambdaEntry(Generic[S]):
    def __init__(self, name: str, build: Callable[[ClientSource], S], done: str) -> None:
        self.logger = Logger(service=name)
        self.metrics = Metrics(
            service=name, namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or names.METRICS_NAMESPACE
        )
        self.tracer = Tracer(service=name)
        self._done = done
        # Built on the first invocation (never at import), then reused while the environment stays.
        self._build = build
        self._built: tuple[tuple[tuple[str, str], ...], S, str | None] | None = None
        self._lock = threading.Lock()
        self.handler = self.logger.inject_lambda_context(
            self.metrics.log_metrics(self.tracer.capture_lambda_handler(self._handle, capture_response=False))
        )

    def service(self) -> S:
        """The service of the current environment: built once, again when the environment changed."""
        return self._current()[1]

    def pipeline(self) -> str | None:
        """The pipeline the metrics belong to (``SENSOR_DIGEST_PIPELINE``), read with the service."""
        return self._current()[2]

    def _current(self) -> tuple[tuple[tuple[str, str], ...], S, str | None]:
        key = _environment()
        with self._lock:
            if self._built is None or self._built[0] != key:
                self._built = (key, self._build(boto3.Session()), pipeline_name())
            return self._built

    def reset(self) -> None:
        """Forget the service: the next invocation builds it again from the environment."""
        with self._lock:
            self._built = None

    def _handle(self, event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        report = self.service().handle_event(event, context.get_remaining_time_in_millis())
        pipeline = self.pipeline()
        if pipeline is not None:  # this invocation's metrics are its pipeline's (cleared with them at flush)
            self.metrics.add_dimension(names.PIPELINE_DIMENSION, pipeline)
        for metric, value in report.metrics().items():
            self.metrics.add_metric(name=metric, unit=MetricUnit.Count, value=value)
        self.logger.info(self._done, **loggable(report.log_fields()))
        return report.response()


def from_environment(
    name: str, build: Callable[[T, ClientSource], S], settings: Callable[[], T], done: str
) -> LambdaEntry[S]:
    """A handler module's entry: its service built by ``build`` with the settings ``settings`` reads from
    the environment (a settings class's ``from_env``) and the session ``LambdaEntry`` gives it."""
    return LambdaEntry(name, lambda session: build(settings(), session), done)


RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}
"""The attributes of Python's ``LogRecord``: a log call's extra field of one of these names raises."""


def loggable(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` as a log line's keys: one named as a ``LogRecord`` attribute (``name``: an imported
    object's) gets a trailing ``_``."""
    return {f"{key}_" if key in RECORD_ATTRIBUTES else key: value for key, value in fields.items()}


def _environment() -> tuple[tuple[str, str], ...]:
    """The part of the environment a service is built from (see the module)."""
    return tuple(sorted((k, v) for k, v in os.environ.items() if k in ENVIRONMENT_VARIABLES or k.startswith("AWS_")))
